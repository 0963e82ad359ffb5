// Evaluates one expression over a batch of elements at once: node by node, each node a tight
// loop over the batch with its op fixed at compile time, so the op dispatch is paid once per
// node and batch instead of once per node and element. Uses the same ref:: functions as
// eval_scalar, in the same order, so both give bit-identical results.
#pragma once
#include <cstddef>
#include <vector>

#include "kq/expr.hpp"
#include "kq/semantics.hpp"

namespace kq::ref {

class BatchProgram {
 public:
  static constexpr int kBatch = 128;

  // `e` must be well-formed (operands before users, input indices below `num_inputs`) and must
  // outlive the program. Allocates once, here; run() never does.
  BatchProgram(const Expr& e, int num_inputs)
      : e_(e),
        inputs_(static_cast<std::size_t>(num_inputs) * kBatch),
        values_(e.nodes.size() * kBatch),
        lanes_of_(e.nodes.size()) {
    for (std::size_t i = 0; i < e.nodes.size(); ++i) {
      const ExprNode& n = e.nodes[i];
      double* own = &values_[i * kBatch];
      if (n.op == Op::input) {
        lanes_of_[i] = input(n.input);
      } else {
        lanes_of_[i] = own;
        // A constant's lanes never change, so they are filled once.
        if (n.op == Op::constant)
          for (int l = 0; l < kBatch; ++l) own[l] = n.value;
      }
    }
  }

  // Where the caller writes the batch's values of input k (kBatch slots).
  double* input(int k) { return &inputs_[static_cast<std::size_t>(k) * kBatch]; }

  // Evaluates the first `lanes` (<= kBatch) elements; returns the root's values.
  const double* run(int lanes) {
    for (std::size_t i = 0; i < e_.nodes.size(); ++i) {
      const ExprNode& n = e_.nodes[i];
      if (n.op == Op::constant || n.op == Op::input) continue;
      double* r = &values_[i * kBatch];
      const double* a = lanes_of_[n.args[0]];
      const double* b = n.args[1] >= 0 ? lanes_of_[n.args[1]] : nullptr;
      const double* c = n.args[2] >= 0 ? lanes_of_[n.args[2]] : nullptr;
      visit_op(n.op, [&]<Op o>() {
        constexpr int k = arity(o);
        if constexpr (k == 1)
          for (int l = 0; l < lanes; ++l) r[l] = apply<o>(a[l], 0.0, 0.0);
        else if constexpr (k == 2)
          for (int l = 0; l < lanes; ++l) r[l] = apply<o>(a[l], b[l], 0.0);
        else
          for (int l = 0; l < lanes; ++l) r[l] = apply<o>(a[l], b[l], c[l]);
      });
    }
    return lanes_of_[e_.nodes.size() - 1];
  }

 private:
  const Expr& e_;
  std::vector<double> inputs_;           // input k's lanes at k * kBatch
  std::vector<double> values_;           // node i's lanes at i * kBatch
  std::vector<const double*> lanes_of_;  // node i's lanes: its own, or its input's
};

}  // namespace kq::ref
