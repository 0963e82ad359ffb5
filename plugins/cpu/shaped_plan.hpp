// What cpu_tbb knows about a format-2 (shaped) spec before any view is seen: whether it can
// compute every construct of the program (supports() gives the reason when not), and how each
// statement is laid out for the evaluator (shaped_eval.hpp): the index variable its elements are
// blocked along, the rows run in parallel, the type it computes in and where its values go.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kq/indexed.hpp"
#include "kq/op_spec.hpp"
#include "kq/status.hpp"

namespace kq::cpu {

struct StatementPlan {
  int tensor = -1;     // the tensor assigned
  int first_node = 0;  // the statement's nodes are [first_node, root]
  int root = -1;
  // Computed in double: compute is f64, or the target is an integer tensor (argmax positions and
  // index values stay exact past 2^24).
  bool wide = false;
  // The index variable the elements are computed along, a block of lanes at a time: the scan
  // index for a scan statement, else the last left-hand side index; -1 for a scalar.
  int lane = -1;
  int lane_pos = -1;        // its position in the left-hand side
  std::vector<int> outer;   // the other left-hand side positions, outermost first: the rows
  std::vector<int> scans;   // its scan nodes
  bool to_storage = false;  // a temporary, or an output a later statement reads: kept unrounded
  bool to_view = false;     // an output: rounded once into its view
};

struct ShapedPlan {
  std::shared_ptr<const ix::Program> program;
  DType compute = DType::f32;  // f32 or f64
  int vars = 0;                // index variables
  // deps[node * vars + var]: the node's value changes with that index variable.
  std::vector<std::uint8_t> deps;
  // Per node: the variables it depends on (a reduction's cache key).
  std::vector<std::vector<int>> dep_list;
  std::vector<int> scan_slot;  // per scan node: its position in its statement's scans, else -1
  std::vector<StatementPlan> statements;
  std::vector<int> statement_of;  // per tensor: the statement assigning it, or -1 (an input)
  std::vector<int> slot;          // per tensor: its position among the inputs or the outputs
  std::vector<std::uint8_t> stored_wide;  // per tensor: its storage (if any) holds doubles

  bool depends(int node, int var) const {
    return var >= 0 && deps[static_cast<std::size_t>(node) * static_cast<std::size_t>(vars) +
                            static_cast<std::size_t>(var)] != 0;
  }
};

// ok with `out` filled, or unsupported naming the first construct cpu_tbb does not compute.
Status make_shaped_plan(const OpSpec& spec, ShapedPlan& out);

// Rough operations per element of statement `s` for these index extents: sizes the parallel
// pieces and decides when a statement is too small to wake the workers.
double element_cost(const ShapedPlan& plan, const StatementPlan& s,
                    const std::vector<std::int64_t>& extents);

}  // namespace kq::cpu
