// One element of one statement at a time: the recursive evaluation of a statement's tree for the
// index values in a Frame. evaluate() and evaluate_at() both compute every element through here,
// which is why they agree bit for bit; evaluate_with_bounds() too, with each node's accumulation
// bound (bound.hpp) computed beside its value, so that the bound is of the very values compared.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "indexed/accumulate.hpp"
#include "indexed/bound.hpp"
#include "indexed/instance.hpp"

namespace kq::ix {

// Where the values of assigned tensors (temporaries and outputs, unrounded) come from, with their
// bounds where the machine computes them.
class Store {
 public:
  virtual ~Store() = default;
  virtual Term computed(int tensor, std::int64_t linear) = 0;
  // computed() of `count` elements from `linear`, `step` apart, into v and e: a store that
  // computes its elements on demand computes a run of neighbours together.
  virtual void computed_run(int tensor, std::int64_t linear, std::int64_t step, int count,
                            double* v, double* e) {
    for (int l = 0; l < count; ++l) {
      const Term t = computed(tensor, linear + l * step);
      v[l] = t.v;
      e[l] = t.e;
    }
  }
  // What one task of a long reduction's chunks, run side by side, reads through: a store of its
  // own, or null where this one may be read by several threads at once.
  virtual std::unique_ptr<Store> fork() { return nullptr; }
};

// Reductions over more terms than this run in chunks of this many, side by side, each
// accumulated on its own and the chunks combined in order: the same bits at any thread count.
// A loss over a 32768 x 32768 input took 151 s in one thread.
inline constexpr std::int64_t kReduceChunk = std::int64_t{1} << 16;

// The precomputed values of a statement's scans along the current line, by scan node.
using ScanLines = std::vector<std::pair<int, std::vector<Term>>>;

struct Frame {
  explicit Frame(const Instance& in, int statement)
      : idx(in.extents.size(), 0), statement(statement) {}
  std::vector<std::int64_t> idx;  // by index variable
  int statement;
  const ScanLines* lines = nullptr;  // set while the line's elements are computed
};

// What a reduction accumulates (an argmax or argmin keeps its extreme in its Part itself).
Accumulation accumulation_of(Reduction r);
bool is_arg(Reduction r);  // an argmax or argmin

// The number of neighbouring elements Machine::lanes walks at once.
inline constexpr int kLanes = 64;

// Whether Machine walks neighbouring elements together (kLanes) or one at a time, the way they
// were walked before the lanes, which tests compare against: the same bits either way.
void set_reference_lanes(bool on);
bool reference_lanes();

class Machine {
 public:
  // The values (and bounds, with `bounds`) of one subtree at kLanes neighbouring elements.
  struct LaneTerms {
    std::array<double, kLanes> v, e;
  };

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

  // The statement's values at `count` (<= kLanes) neighbouring elements: index variable `var`
  // from its value in `f` on, the other indices as in `f`. Each element's bits are element()'s:
  // the same operations on the same operands, a node at a time for all of them (an op's
  // dispatch, the decoding of indices and the subscripts paid once a run, not once an element).
  // An error at any of them is thrown (which element's is not said: walk them one at a time
  // for that). Leaves f's value of `var` as it was, thrown or not.
  const LaneTerms& element_lanes(Frame& f, int var, int count);

  // "statement 2 `y[m] = ...` at m = 3"
  std::string where(const Frame& f) const;

 private:
  Term eval(int node, Frame& f);
  std::int64_t subscript(int node, Frame& f);
  Term read(const Node& n, Frame& f);
  // One chunk's accumulation of a reduction: terms [begin, end) of its row-major walk.
  struct Part {
    explicit Part(Accumulation kind, const SumBound& sum_start = {})
        : acc(kind), sum_bound(sum_start) {}
    Accumulator acc;
    SumBound sum_bound;
    ProdBound prod_bound;
    double extreme_bound = 0.0;  // max, min: the chosen term's
    double best = 0.0;           // argmax, argmin: the extreme and where it is
    std::int64_t best_at = 0;
  };
  Term reduce(const Node& n, Frame& f);
  // A reduction's number of terms, and the indices of its term k (row-major over its reduced
  // indices, the first listed outermost) set in f.
  std::int64_t term_count(const Node& n) const;
  void enter_term(const Node& n, Frame& f, std::int64_t k) const;
  // Term t taken into p by a sum, product, max or min (an argmax's walk is reduce_range's own).
  void add_term(Reduction r, Part& p, const Term& t) const;
  // Whether a reduction at `count` neighbouring elements of `var` is walked for all of them at
  // once (reduce_lanes): a sum, product, max or min short enough to need no chunks, whose own
  // runs (its innermost reduced index: a convolution's 3 or 9 taps) are shorter than `count`,
  // and whose term reads every tensor evenly along `var` (else each lane would read alone).
  bool reduce_by_lanes(const Node& n, int var, int count);
  // Whether every access in the subtree at `node` steps evenly along `var` (affine_access).
  bool reads_evenly(int node, int var);
  Part reduce_range(const Node& n, Frame& f, std::int64_t begin, std::int64_t end,
                    const SumBound& sum_start);
  std::vector<Part> reduce_chunks(const Node& n, Frame& f, std::int64_t count,
                                  const std::vector<SumBound>& sum_starts);
  Term combine(const Node& n, std::span<const Part> parts) const;
  Term scan_at(const Node& n, Frame& f);
  // Puts `slot` back as it was when it goes, however the walk in between ends: a run that
  // throws leaves its index at the lane in error (and the caller walks again from its element),
  // a lane's own walk raises lanes_floor_.
  template <class T>
  struct Restore {
    explicit Restore(T& s) : slot(s), saved(s) {}
    ~Restore() { slot = saved; }
    T& slot;
    T saved;
  };
  // Index `var` of f.idx, for Restore.
  static std::int64_t& index_of(Frame& f, int var) { return f.idx[static_cast<std::size_t>(var)]; }
  // machine_lanes.cpp: the subtree at `node` at `count` values of `var`, into pool_[depth] (its
  // operands' into the slots after it).
  const LaneTerms& lanes(int node, Frame& f, int var, int count, std::size_t depth);
  void read_lanes(int node, Frame& f, int var, int count, LaneTerms& out);
  // The reduction at `node` at `count` values of `var`, into `out`: its terms in reduce_range's
  // order, each a run across the lanes (slots from depth + 1), taken by each lane's own Part.
  void reduce_lanes(const Node& n, Frame& f, int var, int count, std::size_t depth, LaneTerms& out);
  // Each lane through `one()` (a Term for the indices in f), var at that lane's value.
  template <class One>
  void lane_by_lane(Frame& f, int var, int count, LaneTerms& out, One&& one);
  // How far the subscript at `node`, `at` for the indices in f, moves when `var` moves by one.
  std::int64_t lane_step(int node, Frame& f, int var, std::int64_t at);
  // Whether the access at `node` has every subscript of the form a + b * var (a and b the same
  // for every lane), so that the lanes' offsets step evenly.
  bool affine_access(int node, int var);
  template <typename Visit>
  void walk_scan(const Node& n, Frame& f, Visit&& visit);

  const Instance& in_;
  const Program& p_;
  Store& store_;
  bool bounds_;
  int given_ = -1;  // eval_given's node, and its value
  Term given_value_{};
  std::vector<std::unique_ptr<LaneTerms>> pool_;  // lanes()'s results, by depth
  // The first slot a walk started inside a lane's own eval() may use: those below hold values
  // still to be read.
  std::size_t lanes_floor_ = 0;
  std::vector<int> affine_;  // affine_access by node: 2 * var + answer; -1 not yet known
};

}  // namespace kq::ix
