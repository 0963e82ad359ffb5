// One element of one statement at a time: the recursive evaluation of a statement's tree for the
// index values in a Frame. evaluate() and evaluate_at() both compute every element through here,
// which is why they agree bit for bit.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "indexed/instance.hpp"

namespace kq::ix {

// Where the values of assigned tensors (temporaries and outputs, unrounded) come from.
class Store {
 public:
  virtual ~Store() = default;
  virtual double computed(int tensor, std::int64_t linear) = 0;
};

// The precomputed values of a statement's scans along the current line, by scan node.
using ScanLines = std::vector<std::pair<int, std::vector<double>>>;

struct Frame {
  explicit Frame(const Instance& in, int statement)
      : idx(in.extents.size(), 0), statement(statement) {}
  std::vector<std::int64_t> idx;  // by index variable
  int statement;
  const ScanLines* lines = nullptr;  // set while the line's elements are computed
};

class Machine {
 public:
  Machine(const Instance& in, Store& store) : in_(in), p_(*in.program), store_(store) {}

  // The statement's value at the left-hand side's indices in `f`.
  double element(Frame& f);
  // A scan statement's values along its scan index for the other indices in `f`: out has the
  // scan index's extent.
  void line(Frame& f, std::vector<double>& out);

  // "statement 2 `y[m] = ...` at m = 3"
  std::string where(const Frame& f) const;

 private:
  double eval(int node, Frame& f);
  std::int64_t subscript(int node, Frame& f);
  double read(const Node& n, Frame& f);
  double reduce(const Node& n, Frame& f);
  double scan_at(const Node& n, Frame& f);
  template <typename Visit>
  void walk_scan(const Node& n, Frame& f, Visit&& visit);

  const Instance& in_;
  const Program& p_;
  Store& store_;
};

}  // namespace kq::ix
