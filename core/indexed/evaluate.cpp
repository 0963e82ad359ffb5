// The statements in order over the whole index space, each in parallel (with the bounds, or
// without); or only the elements a list of samples needs. All compute every element with Machine
// (machine.hpp).
#include "indexed/evaluate.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "indexed/contraction.hpp"
#include "indexed/instance.hpp"
#include "indexed/machine.hpp"
#include "util/parallel_copy.hpp"

namespace kq::ix {
namespace {

// Elements (or lines) per task at least: a few microseconds of work.
constexpr std::int64_t kGrain = 256;
// Samples per task at least: each task starts its own store of the samples' temporaries.
constexpr std::size_t kSampleGrain = 16;

// Every assigned tensor, unrounded, filled statement by statement; with each element's bound
// when `bounds`, in the store's own values or, for an output no statement reads, where the
// caller asked (place_bounds).
class FullStore final : public Store {
 public:
  FullStore(const Instance& in, bool bounds)
      : values_(in.shapes.size()),
        bounds_(bounds ? in.shapes.size() : 0),
        placed_bounds_(in.shapes.size(), nullptr) {}
  Term computed(int tensor, std::int64_t linear) override {
    const auto t = static_cast<std::size_t>(tensor);
    const auto i = static_cast<std::size_t>(linear);
    return {values_[t][i], bounds_.empty() ? 0.0 : bound_data(tensor)[i]};
  }
  Values& of(int tensor) { return values_[static_cast<std::size_t>(tensor)]; }
  // Null without bounds.
  Values* bounds_of(int tensor) {
    return bounds_.empty() ? nullptr : &bounds_[static_cast<std::size_t>(tensor)];
  }
  // The tensor's bounds are written at `memory` (its elements' count of doubles, every one
  // written by its statement), not into bounds_of().
  void place_bounds(int tensor, double* memory) {
    placed_bounds_[static_cast<std::size_t>(tensor)] = memory;
  }
  double* placed_bounds(int tensor) const {
    return placed_bounds_[static_cast<std::size_t>(tensor)];
  }
  // Where the tensor's bounds are written; null without bounds.
  double* bound_data(int tensor) {
    if (bounds_.empty()) return nullptr;
    if (double* p = placed_bounds(tensor)) return p;
    return bounds_[static_cast<std::size_t>(tensor)].data();
  }

 private:
  std::vector<Values> values_, bounds_;
  std::vector<double*> placed_bounds_;
};

// The first error in the order of the elements, whichever thread met it first, so that the
// message does not depend on the scheduling.
class FirstError {
 public:
  void offer(std::int64_t at, std::string message) {
    std::lock_guard lock(mutex_);
    if (!at_ || at < *at_) {
      at_ = at;
      message_ = std::move(message);
    }
  }
  void rethrow() const {
    if (at_) throw EvalError(message_);
  }

 private:
  std::mutex mutex_;
  std::optional<std::int64_t> at_;
  std::string message_;
};

// Sets the left-hand side's indices from a row-major position over `dims` (the positions of the
// lhs to decode, in order).
void decode(const Instance& in, const Statement& s, const std::vector<std::size_t>& dims,
            std::int64_t linear, Frame& f) {
  for (std::size_t j = dims.size(); j-- > 0;) {
    const auto v = static_cast<std::size_t>(s.lhs[dims[j]]);
    f.idx[v] = linear % in.extents[v];
    linear /= in.extents[v];
  }
}

std::int64_t product(const Instance& in, const Statement& s, const std::vector<std::size_t>& dims) {
  std::int64_t n = 1;
  for (std::size_t d : dims) n *= in.extents[static_cast<std::size_t>(s.lhs[d])];
  return n;
}

// The row-major coordinate of element `linear` of a tensor of `shape`, for messages.
std::string coordinate_text(const std::vector<std::int64_t>& shape, std::int64_t linear) {
  std::vector<std::int64_t> coord(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    coord[d] = linear % shape[d];
    linear /= shape[d];
  }
  return shape_text(coord);
}

// Stores v, rounded once, as element i of output b (declared `t`); where its dtype cannot hold
// v, offers the error to `first` instead.
void store_output(const TensorDecl& t, Buffer& b, std::int64_t i, double v, FirstError& first) {
  if (representable(t.dtype, v)) return b.set(i, v);
  first.offer(i, "output '" + t.name + "' at " + coordinate_text(b.shape, i) + " is " +
                     std::to_string(v) + ", which a " + std::string(to_string(t.dtype)) +
                     " cannot hold");
}

// Where output `tensor` is rounded into: the caller's memory where `places` names it (written
// once, never cleared), else a buffer of zeros.
Buffer output_buffer(const Instance& in, int tensor, const Places& places) {
  const TensorDecl& t = in.program->decls.tensors[static_cast<std::size_t>(tensor)];
  std::vector<std::int64_t> shape = in.shapes[static_cast<std::size_t>(tensor)];
  if (const auto at = places.find(t.name); at != places.end())
    return Buffer::place(t.dtype, std::move(shape), at->second);
  return Buffer::zeros(t.dtype, std::move(shape));
}

// Output `tensor`'s values rounded once into its dtype, into `b` (output_buffer's).
Buffer round_output(const Instance& in, int tensor, const Values& values, Buffer b) {
  const TensorDecl& t = in.program->decls.tensors[static_cast<std::size_t>(tensor)];
  FirstError first;
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, static_cast<std::int64_t>(values.size()),
                                                     std::int64_t{1} << 16),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      for (std::int64_t i = r.begin(); i < r.end(); ++i)
                        store_output(t, b, i, values[static_cast<std::size_t>(i)], first);
                    });
  first.rethrow();
  return b;
}

// One task's share of a statement's elements (a range of their row-major positions over the
// left-hand side, less the scan index's), each put into the store's float64 values or, given
// `direct`, rounded into the output. Runs of neighbouring elements along the innermost index
// go through Machine::element_lanes; a scan statement, line by line along its scan index.
class StatementTask {
 public:
  StatementTask(const Instance& in, FullStore& store, int statement, Buffer* direct,
                FirstError& first, FirstError& unrepresentable)
      : in_(in),
        s_(in.program->statements[static_cast<std::size_t>(statement)]),
        decl_(in.program->decls.tensors[static_cast<std::size_t>(s_.tensor)]),
        statement_(statement),
        store_(store),
        out_(store.of(s_.tensor)),
        out_bound_(store.bound_data(s_.tensor)),
        direct_(direct),
        first_(first),
        unrepresentable_(unrepresentable) {
    for (std::size_t d = 0; d < s_.lhs.size(); ++d) {
      if (s_.lhs[d] == s_.scan_index)
        scan_dim_ = d;
      else
        outer_.push_back(d);
    }
    if (reference_lanes() && s_.scan_index < 0 && !outer_.empty())
      lane_var_ = s_.lhs[outer_.back()];
  }

  // The positions the tasks share out.
  std::int64_t count() const { return product(in_, s_, outer_); }

  void operator()(const tbb::blocked_range<std::int64_t>& r) const {
    Machine machine(in_, store_, out_bound_ != nullptr);
    Frame f(in_, statement_);
    std::vector<Term> line;
    for (std::int64_t k = r.begin(); k < r.end(); ++k) {
      decode(in_, s_, outer_, k, f);
      if (const int n = run_length(f, r.end() - k); n > 1) {
        try {
          put_run(k, machine.element_lanes(f, lane_var_, n), n);
          k += n - 1;
          continue;
        } catch (const EvalError&) {
          // One at a time from k, which names the first element in error.
        }
      }
      try {
        if (s_.scan_index < 0) {
          put(k, machine.element(f));
          continue;
        }
        machine.line(f, line);
        const std::vector<std::int64_t>& strides = in_.strides[static_cast<std::size_t>(s_.tensor)];
        std::int64_t base = 0;
        for (std::size_t d : outer_)
          base += f.idx[static_cast<std::size_t>(s_.lhs[d])] * strides[d];
        for (std::size_t j = 0; j < line.size(); ++j)
          put(base + static_cast<std::int64_t>(j) * strides[scan_dim_], line[j]);
      } catch (const EvalError& e) {
        first_.offer(k, e.what());
        return;
      }
    }
  }

 private:
  // How many elements from the indices in `f` one run takes: up to kLanes, `left` and the end
  // of the innermost index's extent; 1 where there are no runs.
  int run_length(const Frame& f, std::int64_t left) const {
    if (lane_var_ < 0) return 1;
    const auto v = static_cast<std::size_t>(lane_var_);
    return static_cast<int>(std::min({std::int64_t{kLanes}, left, in_.extents[v] - f.idx[v]}));
  }

  void put(std::int64_t at, const Term& t) const {
    if (direct_)
      store_output(decl_, *direct_, at, t.v, unrepresentable_);
    else
      out_[static_cast<std::size_t>(at)] = t.v;
    if (out_bound_) out_bound_[at] = t.e;
  }

  // put() for n elements from `at`: a value type always holds its rounding, so its elements
  // are stored without asking.
  void put_run(std::int64_t at, const Machine::LaneTerms& t, int n) const {
    if (!direct_ || is_integer(decl_.dtype)) {
      for (int l = 0; l < n; ++l) put(at + l, {t.v[l], t.e[l]});
      return;
    }
    direct_->set_run(at, n, t.v.data());
    if (out_bound_) std::copy_n(t.e.begin(), n, out_bound_ + at);
  }

  const Instance& in_;
  const Statement& s_;
  const TensorDecl& decl_;
  int statement_;
  FullStore& store_;
  Values& out_;
  double* out_bound_;  // null without bounds
  Buffer* direct_;
  FirstError& first_;
  FirstError& unrepresentable_;
  std::vector<std::size_t> outer_;  // the left-hand side's positions but the scan index's
  std::size_t scan_dim_ = 0;
  int lane_var_ = -1;  // the index the runs go along; -1: none
};

// A statement's elements into the store's float64 values; or, given `direct` (an output that no
// statement reads, output_buffer's), rounded straight into it, so that a large output's float64
// values are never held (a 1.6G-element output's are 12.9 GB, faulted in and written once more
// than its own).
void run_statement(const Instance& in, FullStore& store, int statement, Buffer* direct = nullptr) {
  const Statement& s = in.program->statements[static_cast<std::size_t>(statement)];
  const auto n = static_cast<std::size_t>(in.numel(s.tensor));
  Values& out = store.of(s.tensor);
  Values* out_bound = store.bounds_of(s.tensor);
  double* placed_bound = store.placed_bounds(s.tensor);
  if (run_contraction(in, statement, out, out_bound)) {  // a matrix product, compiled
    if (direct) {
      *direct = round_output(in, s.tensor, out, std::move(*direct));
      out = Values();
    }
    if (out_bound && placed_bound) {
      parallel_memcpy(placed_bound, out_bound->data(), n * sizeof(double));
      *out_bound = Values();
    }
    return;
  }
  if (!direct) zero_fill(out, n);
  if (out_bound && !placed_bound) zero_fill(*out_bound, n);
  // An element's error before any rounding's, as when the outputs were rounded afterwards.
  FirstError first, unrepresentable;
  const StatementTask task(in, store, statement, direct, first, unrepresentable);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, task.count(), kGrain), task);
  first.rethrow();
  unrepresentable.rethrow();
}

// Whether any statement reads tensor `t`.
bool read_by_program(const Program& p, int t) {
  return std::any_of(p.nodes.begin(), p.nodes.end(),
                     [&](const Node& n) { return n.kind == NodeKind::access && n.ref == t; });
}

// Whether the subtree at `node` names one of the index variables `vars`.
bool mentions(const Program& p, int node, const std::vector<int>& vars) {
  const Node& n = p.nodes[static_cast<std::size_t>(node)];
  if (n.kind == NodeKind::index && std::find(vars.begin(), vars.end(), n.ref) != vars.end())
    return true;
  for (int a : n.args)
    if (mentions(p, a, vars)) return true;
  return false;
}

// By tensor: whether its statement is computed whole before the samples. A tensor is read whole
// where a statement reads it through subscripts free of the statement's own indices (inside a
// reduction over all of them: a loss's sum over rows, a weight read by every element), or where
// a tensor read whole reads it. Such a tensor is computed whole when it has at most `limit`
// elements and reads no assigned tensor that is not: in parallel, where the samples' walk would
// be serial. Others (a row's sum that sampled rows need) are computed for the samples alone.
std::vector<bool> eager_tensors(const Instance& in, std::int64_t limit) {
  const Program& p = *in.program;
  std::vector<bool> whole(in.shapes.size(), false);
  for (std::size_t k = p.statements.size(); k-- > 0;) {
    const Statement& s = p.statements[k];
    for (int i = in.first_node[k]; i <= s.root; ++i) {
      const Node& n = p.nodes[static_cast<std::size_t>(i)];
      if (n.kind != NodeKind::access || in.inputs[static_cast<std::size_t>(n.ref)]) continue;
      bool all = whole[static_cast<std::size_t>(s.tensor)];
      if (!all)
        all = std::none_of(n.args.begin(), n.args.end(),
                           [&](int a) { return mentions(p, a, s.lhs); });
      if (all) whole[static_cast<std::size_t>(n.ref)] = true;
    }
  }
  std::vector<bool> eager(in.shapes.size(), false);
  for (std::size_t k = 0; k < p.statements.size(); ++k) {
    const Statement& s = p.statements[k];
    bool ok = whole[static_cast<std::size_t>(s.tensor)] && in.numel(s.tensor) <= limit;
    for (int i = in.first_node[k]; ok && i <= s.root; ++i) {
      const Node& n = p.nodes[static_cast<std::size_t>(i)];
      if (n.kind == NodeKind::access && !in.inputs[static_cast<std::size_t>(n.ref)])
        ok = eager[static_cast<std::size_t>(n.ref)];
    }
    eager[static_cast<std::size_t>(s.tensor)] = ok;
  }
  return eager;
}

// Whether an element of statement k costs its expression alone: no reduction or scan, no
// assigned tensor read.
bool elementwise_on_inputs(const Instance& in, int k) {
  const Program& p = *in.program;
  for (int i = in.first_node[static_cast<std::size_t>(k)];
       i <= p.statements[static_cast<std::size_t>(k)].root; ++i) {
    const Node& n = p.nodes[static_cast<std::size_t>(i)];
    if (n.kind == NodeKind::reduce || n.kind == NodeKind::scan) return false;
    if (n.kind == NodeKind::access && !in.inputs[static_cast<std::size_t>(n.ref)]) return false;
  }
  return true;
}

// By tensor: whether LazyStore remembers its elements (below).
std::vector<bool> remembered_tensors(const Instance& in, std::int64_t limit) {
  std::int64_t largest_input = 0;
  for (std::size_t t = 0; t < in.shapes.size(); ++t)
    if (in.inputs[t]) largest_input = std::max(largest_input, in.numel(static_cast<int>(t)));
  std::vector<bool> r(in.shapes.size(), false);
  for (std::size_t k = 0; k < in.program->statements.size(); ++k) {
    const Statement& s = in.program->statements[k];
    const std::int64_t n = in.numel(s.tensor);
    r[static_cast<std::size_t>(s.tensor)] =
        n <= limit && (n < largest_input || !elementwise_on_inputs(in, static_cast<int>(k)));
  }
  return r;
}

// Elements computed on demand: what the samples read of the temporaries, with their bounds when
// `bounds`; the eager tensors' elements from `whole`, computed already. Those of tensors of at
// most kEagerElements elements (a row's sum that reads a large temporary, attention's scores) are
// remembered; larger ones' are computed again where read again: a sampled row reads them once
// or twice, and remembering every element of every sampled row would hold millions. Nor is a
// temporary as large as the largest input and computed from inputs alone, element by element,
// remembered: a loss's at 4096 x 4096 (the fresh inputs' checks evaluate it on demand) cost
// 250 ns a term through its memo, 120 computed again where read.
//
// A long reduction's chunks run side by side (a scalar loss over 32768 x 32768 through a
// temporary took over 250 s in one thread), each task through a fork that remembers in its
// thread's own memo, looked up once: a value computed twice is the same bits, and no lock or
// thread lookup sits in the terms' walk (a lookup on every read made a sampled softmax 25%
// slower).
class LazyStore final : public Store {
 public:
  LazyStore(const Instance& in, bool bounds, FullStore& whole, const std::vector<bool>& eager,
            const std::vector<bool>& remembered)
      : in_(in),
        bounds_(bounds),
        whole_(whole),
        eager_(eager),
        remembered_(remembered),
        statement_of_(statements_by_tensor(in)),
        own_(in.shapes.size()),
        memo_(&own_),
        threads_(std::make_shared<tbb::enumerable_thread_specific<Memo>>(own_)) {}

  // memo_ may point into the store itself: never copied.
  LazyStore(const LazyStore&) = delete;
  LazyStore& operator=(const LazyStore&) = delete;

  Term computed(int tensor, std::int64_t linear) override {
    if (eager_[static_cast<std::size_t>(tensor)]) return whole_.computed(tensor, linear);
    if (!remembered_[static_cast<std::size_t>(tensor)]) return compute(tensor, linear);
    // No iterator is held across compute(): a reduction inside it may run this thread's other
    // tasks, which fill the same memo.
    auto& memo = (*memo_)[static_cast<std::size_t>(tensor)];
    if (auto it = memo.find(linear); it != memo.end()) return it->second;
    const Term t = compute(tensor, linear);
    memo.emplace(linear, t);
    return t;
  }

  // A temporary's neighbours along its last index, where it is not remembered, a run at a time
  // as a statement's elements are (Machine::element_lanes: the same bits as one by one): a
  // scalar loss over a 32768 x 32768 temporary walked it an element at a time at ~3x the cost
  // of computing it whole.
  void computed_run(int tensor, std::int64_t linear, std::int64_t step, int count, double* v,
                    double* e) override {
    const auto t = static_cast<std::size_t>(tensor);
    const int statement = (*statement_of_)[t];
    const Statement& s = in_.program->statements[static_cast<std::size_t>(statement)];
    const std::vector<std::int64_t>& shape = in_.shapes[t];
    const bool along_last =
        step == 1 && !shape.empty() && linear % shape.back() + count <= shape.back();
    if (eager_[t] || remembered_[t] || !along_last || !reference_lanes() || s.scan_index >= 0)
      return Store::computed_run(tensor, linear, step, count, v, e);
    Frame f = frame_at(statement, linear);
    Machine machine(in_, *this, bounds_);
    try {
      const Machine::LaneTerms& run = machine.element_lanes(f, s.lhs.back(), count);
      std::copy_n(run.v.begin(), count, v);
      std::copy_n(run.e.begin(), count, e);
    } catch (const EvalError&) {  // one at a time, which names the element in error
      Store::computed_run(tensor, linear, step, count, v, e);
    }
  }

  // Called on the thread that runs the task.
  std::unique_ptr<Store> fork() override {
    return std::unique_ptr<Store>(new LazyStore(*this, threads_->local()));
  }

 private:
  using Memo = std::vector<std::unordered_map<std::int64_t, Term>>;  // by tensor

  LazyStore(const LazyStore& root, Memo& memo)
      : in_(root.in_),
        bounds_(root.bounds_),
        whole_(root.whole_),
        eager_(root.eager_),
        remembered_(root.remembered_),
        statement_of_(root.statement_of_),
        memo_(&memo),
        threads_(root.threads_) {}

  static std::shared_ptr<const std::vector<int>> statements_by_tensor(const Instance& in) {
    auto of = std::make_shared<std::vector<int>>(in.shapes.size(), -1);
    for (std::size_t k = 0; k < in.program->statements.size(); ++k)
      (*of)[static_cast<std::size_t>(in.program->statements[k].tensor)] = static_cast<int>(k);
    return of;
  }

  // The frame of the statement's element at row-major position `linear` of its tensor.
  Frame frame_at(int statement, std::int64_t linear) const {
    const Statement& s = in_.program->statements[static_cast<std::size_t>(statement)];
    Frame f(in_, statement);
    const std::vector<std::int64_t>& shape = in_.shapes[static_cast<std::size_t>(s.tensor)];
    for (std::size_t d = shape.size(); d-- > 0;) {
      f.idx[static_cast<std::size_t>(s.lhs[d])] = linear % shape[d];
      linear /= shape[d];
    }
    return f;
  }

  Term compute(int tensor, std::int64_t linear) {
    Frame f = frame_at((*statement_of_)[static_cast<std::size_t>(tensor)], linear);
    Machine machine(in_, *this, bounds_);
    return machine.element(f);
  }

  const Instance& in_;
  bool bounds_;
  FullStore& whole_;
  const std::vector<bool>& eager_;
  const std::vector<bool>& remembered_;  // by tensor: remembered_tensors'
  std::shared_ptr<const std::vector<int>> statement_of_;
  Memo own_;    // the root's (its thread's walk)
  Memo* memo_;  // own_, or a fork's thread's
  std::shared_ptr<tbb::enumerable_thread_specific<Memo>> threads_;  // the forks' memos, by thread
};

// evaluate_at's walk, with each sample's bound where `bounds`.
SampledEvaluation sampled(const Program& p, const DimValues& dims, const Tensors& inputs,
                          std::span<const Sample> samples, bool bounds, std::int64_t eager_limit) {
  const Instance in = make_instance(p, dims, inputs);
  const std::vector<bool> eager = eager_tensors(in, eager_limit);
  const std::vector<bool> remembered = remembered_tensors(in, kEagerElements);
  FullStore whole(in, bounds);
  for (std::size_t k = 0; k < p.statements.size(); ++k)
    if (eager[static_cast<std::size_t>(p.statements[k].tensor)])
      run_statement(in, whole, static_cast<int>(k));
  // Where each sample lies, checked in order (the first bad one named).
  std::vector<std::pair<int, std::int64_t>> at;
  at.reserve(samples.size());
  for (const Sample& sample : samples) {
    int tensor = -1;
    for (std::size_t t = 0; t < p.decls.tensors.size(); ++t)
      if (p.decls.tensors[t].name == sample.output && p.decls.tensors[t].role == Role::output)
        tensor = static_cast<int>(t);
    if (tensor < 0) throw EvalError("no output named '" + sample.output + "'");
    const std::vector<std::int64_t>& shape = in.shapes[static_cast<std::size_t>(tensor)];
    if (sample.coord.size() != shape.size())
      throw EvalError("a sample of '" + sample.output + "' has " +
                      std::to_string(sample.coord.size()) + " coordinates for a shape " +
                      shape_text(shape));
    std::int64_t linear = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (sample.coord[d] < 0 || sample.coord[d] >= shape[d])
        throw EvalError("sample " + shape_text(sample.coord) + " is outside '" + sample.output +
                        "' of shape " + shape_text(shape));
      linear = linear * shape[d] + sample.coord[d];
    }
    at.emplace_back(tensor, linear);
  }
  // In parallel, runs of neighbouring samples, each run with its own store: the temporaries a
  // sampled row reads (its sum) are remembered within a run, and samples come sorted, a row's
  // together. A product's 4096 samples of 8192 terms took 13 s in one thread.
  std::vector<Term> terms(samples.size());
  FirstError first;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, samples.size(), kSampleGrain),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      LazyStore store(in, bounds, whole, eager, remembered);
                      for (std::size_t j = r.begin(); j < r.end(); ++j) {
                        try {
                          terms[j] = store.computed(at[j].first, at[j].second);
                        } catch (const EvalError& e) {
                          first.offer(static_cast<std::int64_t>(j), e.what());
                          return;
                        }
                      }
                    });
  first.rethrow();
  SampledEvaluation e;
  e.values.reserve(samples.size());
  if (bounds) e.bounds.reserve(samples.size());
  for (std::size_t j = 0; j < samples.size(); ++j) {
    const TensorDecl& t = p.decls.tensors[static_cast<std::size_t>(at[j].first)];
    const Term& v = terms[j];
    Buffer one = Buffer::zeros(t.dtype, {});
    if (!representable(t.dtype, v.v))
      throw EvalError("output '" + t.name + "' at " + shape_text(samples[j].coord) + " is " +
                      std::to_string(v.v) + ", which a " + std::string(to_string(t.dtype)) +
                      " cannot hold");
    one.set(0, v.v);
    e.values.push_back(one.get(0));
    if (bounds) e.bounds.push_back(v.e);
  }
  return e;
}

}  // namespace

Tensors evaluate(const Program& p, const DimValues& dims, const Tensors& inputs) {
  return evaluate_with_bounds(p, dims, inputs, {}).outputs;
}

Evaluation evaluate_with_bounds(const Program& p, const DimValues& dims, const Tensors& inputs,
                                std::span<const int> bounded, const Places& places,
                                const Places& bound_places) {
  for (const int t : bounded)
    if (t < 0 || static_cast<std::size_t>(t) >= p.decls.tensors.size() ||
        p.decls.tensors[static_cast<std::size_t>(t)].role != Role::output)
      throw EvalError("a bound asked of tensor " + std::to_string(t) + ", which is no output");
  const Instance in = make_instance(p, dims, inputs);
  FullStore store(in, !bounded.empty());
  std::map<int, Buffer> direct;  // the outputs no statement reads, rounded as they are computed
  for (std::size_t k = 0; k < p.statements.size(); ++k) {
    const int t = p.statements[k].tensor;
    const bool unread =
        p.decls.tensors[static_cast<std::size_t>(t)].role == Role::output && !read_by_program(p, t);
    if (unread) direct[t] = output_buffer(in, t, places);
    if (unread && std::find(bounded.begin(), bounded.end(), t) != bounded.end())
      if (const auto at = bound_places.find(p.decls.tensors[static_cast<std::size_t>(t)].name);
          at != bound_places.end())
        store.place_bounds(t, static_cast<double*>(at->second));
    run_statement(in, store, static_cast<int>(k), unread ? &direct[t] : nullptr);
  }
  Evaluation e;
  for (std::size_t t = 0; t < p.decls.tensors.size(); ++t) {
    if (p.decls.tensors[t].role != Role::output) continue;
    const int i = static_cast<int>(t);
    const auto at = direct.find(i);
    e.outputs.emplace(p.decls.tensors[t].name,
                      at != direct.end()
                          ? std::move(at->second)
                          : round_output(in, i, store.of(i), output_buffer(in, i, places)));
  }
  for (const int t : bounded) {
    const std::string& name = p.decls.tensors[static_cast<std::size_t>(t)].name;
    const std::vector<std::int64_t>& shape = in.shapes[static_cast<std::size_t>(t)];
    const auto at = bound_places.find(name);
    if (at == bound_places.end()) {
      e.bounds.emplace(name, Buffer::of(DType::f64, shape, *store.bounds_of(t)));
      continue;
    }
    if (!store.placed_bounds(t))  // an output later statements read: its bounds copied
      parallel_memcpy(at->second, store.bounds_of(t)->data(),
                      static_cast<std::size_t>(in.numel(t)) * sizeof(double));
    e.bounds.emplace(name, Buffer::place(DType::f64, shape, at->second));
  }
  return e;
}

Tensors evaluate_bounds(const Program& p, const DimValues& dims, const Tensors& inputs,
                        std::span<const int> outputs) {
  return evaluate_with_bounds(p, dims, inputs, outputs).bounds;
}

std::vector<double> evaluate_at(const Program& p, const DimValues& dims, const Tensors& inputs,
                                std::span<const Sample> samples, std::int64_t eager_elements) {
  return sampled(p, dims, inputs, samples, false, eager_elements).values;
}

SampledEvaluation evaluate_at_with_bounds(const Program& p, const DimValues& dims,
                                          const Tensors& inputs, std::span<const Sample> samples,
                                          std::int64_t eager_elements) {
  return sampled(p, dims, inputs, samples, true, eager_elements);
}

}  // namespace kq::ix
