// One element of one statement at a time: the recursive evaluation of a statement's tree for the
// index values in a Frame. evaluate() and evaluate_at() both compute every element through here,
// which is why they agree bit for bit; evaluate_with_bounds() too, with each node's accumulation
// bound (bound.hpp) computed beside its value, so that the bound is of the very values compared.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "indexed/bound.hpp"
#include "indexed/instance.hpp"

namespace kq::ix {

// Where the values of assigned tensors (temporaries and outputs, unrounded) come from, with their
// bounds where the machine computes them.
class Store {
 public:
  virtual ~Store() = default;
  virtual Term computed(int tensor, std::int64_t linear) = 0;
};

// The precomputed values of a statement's scans along the current line, by scan node.
using ScanLines = std::vector<std::pair<int, std::vector<Term>>>;

struct Frame {
  explicit Frame(const Instance& in, int statement)
      : idx(in.extents.size(), 0), statement(statement) {}
  std::vector<std::int64_t> idx;  // by index variable
  int statement;
  const ScanLines* lines = nullptr;  // set while the line's elements are computed
};

class Machine {
 public:
  // `bounds`: compute every node's accumulation bound too (else each Term's e is 0).
  Machine(const Instance& in, Store& store, bool bounds = false)
      : in_(in), p_(*in.program), store_(store), bounds_(bounds) {}

  // The statement's value at the left-hand side's indices in `f`.
  Term element(Frame& f);
  // A scan statement's values along its scan index for the other indices in `f`: out has the
  // scan index's extent.
  void line(Frame& f, std::vector<Term>& out);

  // The subtree at `node` for the indices in `f`, node `given` taken as `value`: a reduction
  // computed elsewhere (contraction.cpp's compiled product finishes its sums here, through the
  // same walk as every other element).
  Term eval_given(int node, Frame& f, int given, const Term& value);

  // "statement 2 `y[m] = ...` at m = 3"
  std::string where(const Frame& f) const;

 private:
  Term eval(int node, Frame& f);
  std::int64_t subscript(int node, Frame& f);
  Term read(const Node& n, Frame& f);
  Term reduce(const Node& n, Frame& f);
  Term scan_at(const Node& n, Frame& f);
  template <typename Visit>
  void walk_scan(const Node& n, Frame& f, Visit&& visit);

  const Instance& in_;
  const Program& p_;
  Store& store_;
  bool bounds_;
  int given_ = -1;  // eval_given's node, and its value
  Term given_value_{};
};

}  // namespace kq::ix
