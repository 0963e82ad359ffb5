// Running a shaped program over one problem: the statements in order, each over its left-hand
// side's index space in parallel with TBB. A statement's elements are cut into rows (every
// left-hand side index but the lane) and pieces of lanes sized by the work per element, so a
// row of an elementwise statement is a few pieces and a reduction over a long row is a piece
// per element; a scan statement's piece is a whole line. Errors (a gather out of range, ...)
// come back as the first one in piece order, whatever the scheduling.
#pragma once
#include <tbb/enumerable_thread_specific.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kq/status.hpp"
#include "kq/tensor.hpp"
#include "shaped_bound.hpp"
#include "shaped_eval.hpp"
#include "shaped_plan.hpp"

namespace kq::cpu {

class ShapedRunner {
 public:
  explicit ShapedRunner(ShapedPlan plan) : plan_(std::move(plan)) {}

  // Binds the dims' values (kq::bind_dims's, in declaration order): extents, the storage of
  // temporaries and of outputs later statements read. Unsupported when a dim is bound by no
  // input or output.
  Status bind(const std::vector<std::int64_t>& dims);
  // Every statement, over views the caller checked against the contract at the bound dims.
  Status run(std::span<const TensorView> inputs, std::span<const TensorView> outputs);
  // How each statement is computed (the "source" artifact).
  std::string listing() const;

 private:
  template <class T>
  Status run_statement(int k);

  ShapedPlan plan_;
  Bound bound_;
  std::vector<std::vector<float>> fstore_;  // by tensor
  std::vector<std::vector<double>> dstore_;
  tbb::enumerable_thread_specific<ShapedWorkspace> workspaces_;
};

}  // namespace kq::cpu
