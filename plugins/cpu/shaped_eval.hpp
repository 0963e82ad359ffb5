// The shaped evaluator: one statement's elements computed in T (float or double), a block of
// lanes at a time. A block is up to kLanes consecutive values of one index variable (the lane)
// with every other index fixed; each node of the statement's tree yields either one value for
// the whole block (when it does not depend on the lane: a row's max, a param, x[m] along n) or
// one value per lane in its own buffer, computed by a loop the compiler can vectorise. Inside a
// reduction the lane is the reduction's innermost index, so a row is read in blocks along its
// contiguous dimension; a reduction that itself varies along the outer lane is computed lane by
// lane. A reduction's value is remembered with the indices it depends on, so `x[m, n] / sum(k,
// x[m, k])` sums the row once, not once per block.
//
// Arithmetic is kq::cpu::ops in T: the float std:: functions for float compute, the double ones
// for f64 compute and for statements assigning integer tensors (ShapedPlan: those compute in
// double so positions are exact). Index arithmetic is in int64 and every subscript that is not
// the lane itself is checked against its extent before anything is read; a padded input's read
// outside its extent gives its pad (an offset of -1 marks it).
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kq/indexed.hpp"
#include "ops.hpp"
#include "shaped_accumulate.hpp"
#include "shaped_bound.hpp"
#include "shaped_io.hpp"
#include "shaped_plan.hpp"

namespace kq::cpu {

inline constexpr std::int64_t kLanes = 256;

// One thread's scratch, kept between runs (TBB workers persist): a block per node (values and
// integers), the current statement's scan lines, the reductions' remembered values, the index
// variables' values.
struct ShapedWorkspace {
  std::vector<float> fvals, flines;
  std::vector<double> dvals, dlines;
  std::vector<std::int64_t> ints, idx, keys;
  std::vector<std::uint8_t> cached;
  std::vector<double> cache;

  template <class T>
  std::vector<T>& vals() {
    if constexpr (sizeof(T) == 4)
      return fvals;
    else
      return dvals;
  }
  template <class T>
  std::vector<T>& lines() {
    if constexpr (sizeof(T) == 4)
      return flines;
    else
      return dlines;
  }
};

// A node's value over a block: per lane, or one value for every lane.
template <class T>
struct Val {
  const T* p = nullptr;  // null: every lane holds s
  T s{};
  T at(std::int64_t j) const { return p ? p[j] : s; }
};

struct IVal {
  const std::int64_t* p = nullptr;
  std::int64_t s = 0;
  std::int64_t at(std::int64_t j) const { return p ? p[j] : s; }
};

// Lanes [start, start + len) of index variable `var`; var -1: a single element.
struct Lanes {
  int var = -1;
  std::int64_t start = 0;
  std::int64_t len = 1;
};

template <class T>
class Evaluator {
 public:
  Evaluator(const ShapedPlan& plan, const Bound& bound, ShapedWorkspace& ws)
      : plan_(plan), p_(*plan.program), b_(bound), ws_(ws) {
    const std::size_t nodes = p_.nodes.size();
    const auto vars = static_cast<std::size_t>(plan.vars);
    ws.vals<T>().resize(nodes * kLanes);
    ws.ints.resize(nodes * kLanes);
    ws.idx.assign(vars, 0);
    ws.keys.resize(nodes * vars);
    ws.cached.assign(nodes, 0);  // storage and inputs may have changed since the last run
    ws.cache.resize(nodes);
    vals_ = ws.vals<T>().data();
    ints_ = ws.ints.data();
    idx_ = ws.idx.data();
  }

  void statement(int k) {
    k_ = k;
    s_ = &plan_.statements[static_cast<std::size_t>(k)];
    line_len_ = s_->scans.empty() ? 0 : extent(s_->lane);
    ws_.lines<T>().resize(s_->scans.size() * static_cast<std::size_t>(line_len_));
    lines_ = ws_.lines<T>().data();
  }

  // Sets the left-hand side's indices other than the lane from a row-major row number.
  void set_row(std::int64_t row) {
    const ix::Statement& st = p_.statements[static_cast<std::size_t>(k_)];
    for (std::size_t q = s_->outer.size(); q-- > 0;) {
      const int v = st.lhs[static_cast<std::size_t>(s_->outer[q])];
      idx_[v] = row % extent(v);
      row /= extent(v);
    }
  }

  // The statement's scans along the current row, each into its line: the bodies a block at a
  // time, then one running accumulation in the scan's order.
  void compute_scans() {
    const int var = s_->lane;
    const std::int64_t n = line_len_;
    for (std::size_t q = 0; q < s_->scans.size(); ++q) {
      const ix::Node& sc = p_.nodes[static_cast<std::size_t>(s_->scans[q])];
      T* line = lines_ + static_cast<std::int64_t>(q) * n;
      for (std::int64_t st = 0; st < n; st += kLanes) {
        const std::int64_t len = std::min(kLanes, n - st);
        idx_[var] = st;
        const Val<T> v = eval(sc.args[0], Lanes{var, st, len});
        for (std::int64_t j = 0; j < len; ++j) line[st + j] = v.at(j);
      }
      if (sc.scan == ix::ScanKind::cumsum) {
        CompensatedSum<T> acc;
        for (std::int64_t step = 0; step < n; ++step) {
          const std::int64_t pos = sc.reverse ? n - 1 - step : step;
          const T before = acc.value();
          acc.add(line[pos]);
          line[pos] = sc.exclusive ? before : acc.value();
        }
      } else {
        T acc = T(1);
        for (std::int64_t step = 0; step < n; ++step) {
          const std::int64_t pos = sc.reverse ? n - 1 - step : step;
          const T before = acc;
          acc *= line[pos];
          line[pos] = sc.exclusive ? before : acc;
        }
      }
    }
  }

  // Computes lanes [start, start + len) of the current row and writes them where the statement
  // says: the arm's storage (unrounded) and the output's view (rounded once to its dtype).
  void emit(std::int64_t start, std::int64_t len) {
    const ix::Statement& st = p_.statements[static_cast<std::size_t>(k_)];
    if (s_->lane >= 0) idx_[s_->lane] = start;  // a coordinate for messages until a lane fails
    const Val<T> v = eval(st.root, Lanes{s_->lane, start, len});
    const auto t = static_cast<std::size_t>(s_->tensor);
    if (s_->to_storage) {
      const Source& src = b_.sources[t];
      std::int64_t off = 0;
      for (int d : s_->outer) off += idx_[st.lhs[static_cast<std::size_t>(d)]] * src.stride[d];
      const std::int64_t step = s_->lane_pos >= 0 ? src.stride[s_->lane_pos] : 0;
      T* out = static_cast<T*>(b_.storage[t]) + off + start * step;
      for (std::int64_t j = 0; j < len; ++j) out[j * step] = v.at(j);
    }
    if (s_->to_view) {
      const TensorView& view = b_.views[t];
      std::int64_t off = 0;
      for (int d : s_->outer) off += idx_[st.lhs[static_cast<std::size_t>(d)]] * view.strides[d];
      const std::int64_t step = s_->lane_pos >= 0 ? view.strides[s_->lane_pos] : 0;
      off += start * step;
      if (is_integer(view.dtype)) {
        for (std::int64_t j = 0; j < len; ++j) {
          const auto x = static_cast<double>(v.at(j));
          if (shaped::representable(view.dtype, x)) continue;
          if (s_->lane >= 0) idx_[s_->lane] = start + j;
          fail(": output '" + p_.decls.tensors[t].name + "' is " + std::to_string(x) +
               ", which a " + std::string(to_string(view.dtype)) + " cannot hold");
        }
      }
      shaped::with_writer<T>(view.dtype, [&](auto write) {
        for (std::int64_t j = 0; j < len; ++j) write(view.data, off + j * step, v.at(j));
      });
    }
  }

 private:
  std::int64_t extent(int var) const { return b_.extents[static_cast<std::size_t>(var)]; }
  const ix::Node& node(int i) const { return p_.nodes[static_cast<std::size_t>(i)]; }
  T* buf(int i) { return vals_ + static_cast<std::int64_t>(i) * kLanes; }
  std::int64_t* ibuf(int i) { return ints_ + static_cast<std::int64_t>(i) * kLanes; }

  // "line 3 `loss = ...` at m = 2"
  [[noreturn]] void fail(const std::string& what) const {
    const ix::Statement& st = p_.statements[static_cast<std::size_t>(k_)];
    std::string text = "line " + std::to_string(st.line) + " `" + st.text + "`";
    for (std::size_t d = 0; d < st.lhs.size(); ++d) {
      const auto v = static_cast<std::size_t>(st.lhs[d]);
      text += (d ? ", " : " at ") + p_.indices[v].name + " = " + std::to_string(idx_[v]);
    }
    throw ShapedError(text + what);
  }
  // A whole subscript (e) / S (ShapedPlan allows division there only): the position where the
  // division is exact, else kNoPosition, which is outside every tensor.
  static constexpr std::int64_t kNoPosition = std::numeric_limits<std::int64_t>::min();
  static std::int64_t quotient(std::int64_t e, std::int64_t by) {
    return e % by == 0 ? e / by : kNoPosition;
  }

  [[noreturn]] void out_of_range(const ix::Node& n, std::size_t d, std::int64_t i) const {
    const ix::Node& sub = node(n.args[d]);
    if (i == kNoPosition)
      fail(": subscript " + std::to_string(d + 1) + " of '" +
           p_.decls.tensors[static_cast<std::size_t>(n.ref)].name +
           "' is not a position (its division is not exact)");
    const std::string through = sub.kind == ix::NodeKind::access
                                    ? " (a gather through '" +
                                          p_.decls.tensors[static_cast<std::size_t>(sub.ref)].name +
                                          "')"
                                    : "";
    fail(": subscript " + std::to_string(d + 1) + " of '" +
         p_.decls.tensors[static_cast<std::size_t>(n.ref)].name + "' is " + std::to_string(i) +
         through + ", outside [0, " +
         std::to_string(b_.sources[static_cast<std::size_t>(n.ref)].shape[d]) + ")");
  }
  [[noreturn]] void not_integer(const ix::Node& n, double seen) const {
    fail(": gather through '" + p_.decls.tensors[static_cast<std::size_t>(n.ref)].name + "' read " +
         std::to_string(seen) + ", which is not an integer");
  }

  Val<T> eval(int i, const Lanes& c) {
    if (!plan_.depends(i, c.var)) return {nullptr, scalar(i)};
    return {vec(i, c), T{}};
  }

  // ---- one value

  T scalar(int i) {
    const ix::Node& n = node(i);
    switch (n.kind) {
      case ix::NodeKind::number:
        return static_cast<T>(n.value);
      case ix::NodeKind::param:
        return static_cast<T>(p_.decls.params[static_cast<std::size_t>(n.ref)].value);
      case ix::NodeKind::dim:
        return static_cast<T>(b_.dims[static_cast<std::size_t>(n.ref)]);
      case ix::NodeKind::index:
        return static_cast<T>(idx_[n.ref]);
      case ix::NodeKind::access: {
        const Source& s = b_.sources[static_cast<std::size_t>(n.ref)];
        const std::int64_t at = scalar_offset(n);
        if (at < 0) return static_cast<T>(*pad_of(n));
        return shaped::load_one<T>(s.dtype, s.data, at);
      }
      case ix::NodeKind::apply: {
        T a[3] = {};
        for (std::size_t k = 0; k < n.args.size(); ++k) a[k] = scalar(n.args[k]);
        T r{};
        ops::visit_op(n.op, [&]<class F>() {
          if constexpr (requires(T x) { F::f(x); })
            r = F::f(a[0]);
          else if constexpr (requires(T x) { F::f(x, x); })
            r = F::f(a[0], a[1]);
          else
            r = F::f(a[0], a[1], a[2]);
        });
        return r;
      }
      case ix::NodeKind::reduce:
        return reduce(n, i);
      case ix::NodeKind::scan:
        return lines_[static_cast<std::int64_t>(plan_.scan_slot[static_cast<std::size_t>(i)]) *
                          line_len_ +
                      idx_[n.over[0]]];
    }
    return std::numeric_limits<T>::quiet_NaN();
  }

  std::int64_t scalar_offset(const ix::Node& n) {
    const Source& s = b_.sources[static_cast<std::size_t>(n.ref)];
    std::int64_t off = 0;
    for (std::size_t d = 0; d < n.args.size(); ++d) {
      const std::int64_t i = scalar_index(n.args[d]);
      if (i < 0 || i >= s.shape[d]) {
        if (pad_of(n)) return -1;
        out_of_range(n, d, i);
      }
      off += i * s.stride[d];
    }
    return off;
  }

  const std::optional<double>& pad_of(const ix::Node& access) const {
    return p_.decls.tensors[static_cast<std::size_t>(access.ref)].pad;
  }

  // A subscript's value, in integers (offsets beyond 2^24 stay exact).
  std::int64_t scalar_index(int i) {
    const ix::Node& n = node(i);
    switch (n.kind) {
      case ix::NodeKind::index:
        return idx_[n.ref];
      case ix::NodeKind::dim:
        return b_.dims[static_cast<std::size_t>(n.ref)];
      case ix::NodeKind::number:
        return static_cast<std::int64_t>(n.value);
      case ix::NodeKind::access: {
        const Source& s = b_.sources[static_cast<std::size_t>(n.ref)];
        std::int64_t v = 0;
        double seen = 0.0;
        if (!shaped::load_index(s.dtype, s.data, scalar_offset(n), v, seen)) not_integer(n, seen);
        return v;
      }
      case ix::NodeKind::apply: {
        const std::int64_t a = scalar_index(n.args[0]);
        if (n.op == Op::neg) return -a;
        const std::int64_t b = scalar_index(n.args[1]);
        if (n.op == Op::div) return quotient(a, b);
        return n.op == Op::add ? a + b : n.op == Op::sub ? a - b : a * b;
      }
      default:
        break;
    }
    fail(": a subscript is not an index expression");  // make_shaped_plan refuses these
  }

  // ---- a block of lanes (the node depends on c.var)

  const T* vec(int i, const Lanes& c) {
    const ix::Node& n = node(i);
    T* out = buf(i);
    switch (n.kind) {
      case ix::NodeKind::index:
        for (std::int64_t j = 0; j < c.len; ++j) out[j] = static_cast<T>(c.start + j);
        return out;
      case ix::NodeKind::access: {
        const Source& s = b_.sources[static_cast<std::size_t>(n.ref)];
        const Offsets f = offsets(n, i, c);
        if (pad_of(n)) {  // lane by lane: some may be outside
          for (std::int64_t j = 0; j < c.len; ++j)
            out[j] = f.off[j] < 0 ? static_cast<T>(*pad_of(n))
                                  : shaped::load_one<T>(s.dtype, s.data, f.off[j]);
        } else if (f.off)
          shaped::load_gather<T>(s.dtype, s.data, f.off, c.len, out);
        else
          shaped::load_strided<T>(s.dtype, s.data, f.base, f.step, c.len, out);
        return out;
      }
      case ix::NodeKind::apply:
        return apply(n, i, c);
      case ix::NodeKind::reduce: {
        for (std::int64_t j = 0; j < c.len; ++j) {
          idx_[c.var] = c.start + j;
          out[j] = reduce(n, i);
        }
        idx_[c.var] = c.start;
        return out;
      }
      case ix::NodeKind::scan:
        return lines_ +
               static_cast<std::int64_t>(plan_.scan_slot[static_cast<std::size_t>(i)]) * line_len_ +
               c.start;
      default:
        break;
    }
    std::fill(out, out + c.len, scalar(i));  // numbers, params, dims never vary
    return out;
  }

  const T* apply(const ix::Node& n, int i, const Lanes& c) {
    const T* a[3] = {nullptr, nullptr, nullptr};
    for (std::size_t k = 0; k < n.args.size(); ++k) {
      const Val<T> v = eval(n.args[k], c);
      if (v.p) {
        a[k] = v.p;
      } else {  // a block-wide operand: broadcast into its own (unused) buffer
        T* b = buf(n.args[k]);
        std::fill(b, b + c.len, v.s);
        a[k] = b;
      }
    }
    T* __restrict out = buf(i);
    const std::int64_t len = c.len;
    ops::visit_op(n.op, [&]<class F>() {
      const T* __restrict x = a[0];
      if constexpr (requires(T v) { F::f(v); }) {
        for (std::int64_t j = 0; j < len; ++j) out[j] = F::f(x[j]);
      } else if constexpr (requires(T v) { F::f(v, v); }) {
        const T* __restrict y = a[1];
        for (std::int64_t j = 0; j < len; ++j) out[j] = F::f(x[j], y[j]);
      } else {
        const T* __restrict y = a[1];
        const T* __restrict z = a[2];
        for (std::int64_t j = 0; j < len; ++j) out[j] = F::f(x[j], y[j], z[j]);
      }
    });
    return out;
  }

  // Element offsets of an access over a block: base + j * step when every subscript that
  // varies is the lane itself (a bare index, checked against the extent once per block), else
  // one offset per lane in the node's integer buffer, each subscript checked.
  struct Offsets {
    const std::int64_t* off = nullptr;
    std::int64_t base = 0;
    std::int64_t step = 0;
  };

  Offsets offsets(const ix::Node& n, int i, const Lanes& c) {
    const Source& s = b_.sources[static_cast<std::size_t>(n.ref)];
    if (pad_of(n)) return padded_offsets(n, i, c);
    std::int64_t base = 0, step = 0;
    bool general = false;
    for (std::size_t d = 0; d < n.args.size(); ++d) {
      const int sub = n.args[d];
      if (!plan_.depends(sub, c.var)) {
        const std::int64_t k = scalar_index(sub);
        if (k < 0 || k >= s.shape[d]) out_of_range(n, d, k);
        base += k * s.stride[d];
      } else if (node(sub).kind == ix::NodeKind::index) {
        if (c.start < 0 || c.start + c.len > s.shape[d]) {
          const std::int64_t bad = c.start < 0 ? c.start : std::max(c.start, s.shape[d]);
          idx_[c.var] = bad;
          out_of_range(n, d, bad);
        }
        step += s.stride[d];
      } else {
        general = true;
      }
    }
    if (!general) return {nullptr, base + c.start * step, step};
    std::int64_t* off = ibuf(i);
    for (std::int64_t j = 0; j < c.len; ++j) off[j] = base + (c.start + j) * step;
    for (std::size_t d = 0; d < n.args.size(); ++d) {
      const int sub = n.args[d];
      if (!plan_.depends(sub, c.var) || node(sub).kind == ix::NodeKind::index) continue;
      const IVal v = index_block(sub, c);
      for (std::int64_t j = 0; j < c.len; ++j) {
        const std::int64_t k = v.at(j);
        if (k < 0 || k >= s.shape[d]) {
          idx_[c.var] = c.start + j;
          out_of_range(n, d, k);
        }
        off[j] += k * s.stride[d];
      }
    }
    return {off, 0, 0};
  }

  // Every lane's offset, -1 where a subscript leaves the input (which then reads its pad).
  Offsets padded_offsets(const ix::Node& n, int i, const Lanes& c) {
    const Source& s = b_.sources[static_cast<std::size_t>(n.ref)];
    std::int64_t* off = ibuf(i);
    std::fill(off, off + c.len, std::int64_t{0});
    for (std::size_t d = 0; d < n.args.size(); ++d) {
      const IVal v = index_block(n.args[d], c);
      for (std::int64_t j = 0; j < c.len; ++j) {
        const std::int64_t k = v.at(j);
        if (off[j] < 0) continue;
        off[j] = k < 0 || k >= s.shape[d] ? -1 : off[j] + k * s.stride[d];
      }
    }
    return {off, 0, 0};
  }

  // A subscript over a block.
  IVal index_block(int i, const Lanes& c) {
    if (!plan_.depends(i, c.var)) return {nullptr, scalar_index(i)};
    const ix::Node& n = node(i);
    std::int64_t* out = ibuf(i);
    switch (n.kind) {
      case ix::NodeKind::index:
        for (std::int64_t j = 0; j < c.len; ++j) out[j] = c.start + j;
        return {out, 0};
      case ix::NodeKind::access: {
        const Source& s = b_.sources[static_cast<std::size_t>(n.ref)];
        const Offsets f = offsets(n, i, c);  // may be `out` itself: each lane reads then writes
        for (std::int64_t j = 0; j < c.len; ++j) {
          const std::int64_t at = f.off ? f.off[j] : f.base + j * f.step;
          double seen = 0.0;
          if (!shaped::load_index(s.dtype, s.data, at, out[j], seen)) {
            idx_[c.var] = c.start + j;
            not_integer(n, seen);
          }
        }
        return {out, 0};
      }
      case ix::NodeKind::apply: {
        const IVal a = index_block(n.args[0], c);
        if (n.op == Op::neg) {
          for (std::int64_t j = 0; j < c.len; ++j) out[j] = -a.at(j);
          return {out, 0};
        }
        const IVal b = index_block(n.args[1], c);
        for (std::int64_t j = 0; j < c.len; ++j) {
          const std::int64_t x = a.at(j), y = b.at(j);
          out[j] = n.op == Op::add   ? x + y
                   : n.op == Op::sub ? x - y
                   : n.op == Op::div ? quotient(x, y)
                                     : x * y;
        }
        return {out, 0};
      }
      default:
        break;
    }
    fail(": a subscript is not an index expression");
  }

  // ---- reductions

  // Remembered per node with the values of the indices it depends on.
  T reduce(const ix::Node& n, int i) {
    const std::vector<int>& vars = plan_.dep_list[static_cast<std::size_t>(i)];
    std::int64_t* key = ws_.keys.data() + static_cast<std::size_t>(i) * plan_.vars;
    const auto at = static_cast<std::size_t>(i);
    if (ws_.cached[at]) {
      bool same = true;
      for (int v : vars) same = same && key[v] == idx_[v];
      if (same) return static_cast<T>(ws_.cache[at]);
    }
    const T r = compute_reduce(n);
    for (int v : vars) key[v] = idx_[v];
    ws_.cached[at] = 1;
    ws_.cache[at] = static_cast<double>(r);
    return r;
  }

  // Calls visit(position, block) over the reduction's range in row-major order of its indices
  // (the first listed outermost), the innermost a block of lanes at a time, until visit returns
  // false. Positions are row-major within the reduced indices.
  template <class Visit>
  void over_blocks(const ix::Node& n, Visit&& visit) {
    const int last = n.over.back();
    const std::int64_t inner = extent(last);
    std::int64_t outer = 1;
    for (std::size_t k = 0; k + 1 < n.over.size(); ++k) outer *= extent(n.over[k]);
    for (std::int64_t o = 0; o < outer; ++o) {
      std::int64_t rest = o;
      for (std::size_t k = n.over.size() - 1; k-- > 0;) {
        idx_[n.over[k]] = rest % extent(n.over[k]);
        rest /= extent(n.over[k]);
      }
      for (std::int64_t st = 0; st < inner; st += kLanes) {
        const std::int64_t len = std::min(kLanes, inner - st);
        if (!visit(o * inner + st, eval(n.args[0], Lanes{last, st, len}), len)) return;
      }
    }
  }

  T compute_reduce(const ix::Node& n) {
    using R = ix::Reduction;
    switch (n.reduction) {
      case R::sum: {
        CompensatedSum<T> acc;
        over_blocks(n, [&](std::int64_t, const Val<T>& v, std::int64_t len) {
          acc.add(v.p ? pairwise_sum(v.p, len) : v.s * static_cast<T>(len));
          return true;
        });
        return acc.value();
      }
      case R::prod: {
        T acc = T(1);
        over_blocks(n, [&](std::int64_t, const Val<T>& v, std::int64_t len) {
          for (std::int64_t j = 0; j < len; ++j) acc *= v.at(j);
          return true;
        });
        return acc;
      }
      case R::max:
      case R::min: {
        const bool is_max = n.reduction == R::max;
        T acc = is_max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
        over_blocks(n, [&](std::int64_t, const Val<T>& v, std::int64_t len) {
          // The accumulator first: a NaN in it stays (the first NaN wins, as in the reference).
          for (std::int64_t j = 0; j < len; ++j)
            acc = is_max ? ops::max(acc, v.at(j)) : ops::min(acc, v.at(j));
          return true;
        });
        return acc;
      }
      case R::argmax:
      case R::argmin: {
        const bool is_max = n.reduction == R::argmax;
        bool any = false;
        T best{};
        std::int64_t best_at = 0;
        over_blocks(n, [&](std::int64_t pos, const Val<T>& v, std::int64_t len) {
          for (std::int64_t j = 0; j < len; ++j) {
            const T x = v.at(j);
            // Only a strictly better value moves it, so the first extreme wins; the first NaN
            // counts as the extreme and ends the search.
            if (!any || x != x || (is_max ? x > best : x < best)) {
              best = x;
              best_at = pos + j;
              any = true;
            }
            if (x != x) return false;
          }
          return true;
        });
        if (!any) fail(std::string(": ") + (is_max ? "argmax" : "argmin") + " over an empty range");
        return static_cast<T>(best_at);
      }
    }
    return std::numeric_limits<T>::quiet_NaN();
  }

  const ShapedPlan& plan_;
  const ix::Program& p_;
  const Bound& b_;
  ShapedWorkspace& ws_;
  T* vals_ = nullptr;
  std::int64_t* ints_ = nullptr;
  std::int64_t* idx_ = nullptr;
  T* lines_ = nullptr;
  std::int64_t line_len_ = 0;
  int k_ = 0;
  const StatementPlan* s_ = nullptr;
};

}  // namespace kq::cpu
