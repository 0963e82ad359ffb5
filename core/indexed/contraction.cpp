#include "indexed/contraction.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "indexed/accumulate.hpp"
#include "indexed/bound.hpp"
#include "indexed/machine.hpp"
#include "kq/matmul_form.hpp"
#include "kq/semantics.hpp"

namespace kq::ix {
namespace {

std::int64_t product_of(const Instance& in, const std::vector<int>& vars, std::size_t first,
                        std::size_t count) {
  std::int64_t n = 1;
  for (std::size_t d = first; d < first + count; ++d)
    n *= in.extents[static_cast<std::size_t>(vars[d])];
  return n;
}

// One output row's running state over its N columns: Machine::reduce's accumulator and bound,
// held as arrays so that the loop over the columns runs without a call per term. A sum of more
// than kReduceChunk terms is chunked as the machine chunks it: each chunk's sum and bound, the
// bound's running sums from the plain sum of the chunks before (`prefix`, of each chunk's own
// plain sum, `local`), folded into the totals in order.
struct RowState {
  RowState(const Instance& in, std::int64_t n, bool bounds)
      : sum(static_cast<std::size_t>(n)),
        total(static_cast<std::size_t>(n)),
        bound(bounds ? static_cast<std::size_t>(n) : 0),
        bound_total(bound.size()),
        local(bound.size()),
        prefix(bound.size()),
        frame(in, 0) {}
  std::vector<CompensatedSum> sum, total;
  std::vector<SumBound> bound, bound_total;
  std::vector<double> local, prefix;
  Frame frame;  // the statement's indices at the element being finished
};

// The epilogue reads inputs alone (elementwise_around): there is no computed tensor to read.
class InputsOnly final : public Store {
 public:
  Term computed(int, std::int64_t) override {
    throw EvalError("a product's epilogue read a computed tensor");
  }
};

// Whether the subtree at `node`, the product aside, is elementwise over the statement's own
// indices: numbers, params, dims, its indices, inputs subscripted by its indices, operations.
// Sets `reduce` to the product's node (one only).
bool elementwise_around(const Program& p, const Instance& in, const Statement& s, int node,
                        int& reduce) {
  const Node& n = p.nodes[static_cast<std::size_t>(node)];
  auto own = [&](int var) { return std::find(s.lhs.begin(), s.lhs.end(), var) != s.lhs.end(); };
  switch (n.kind) {
    case NodeKind::number:
    case NodeKind::param:
    case NodeKind::dim:
      return true;
    case NodeKind::index:
      return own(n.ref);
    case NodeKind::access:
      if (!in.inputs[static_cast<std::size_t>(n.ref)]) return false;
      for (int a : n.args) {
        const Node& sub = p.nodes[static_cast<std::size_t>(a)];
        if (sub.kind != NodeKind::index || !own(sub.ref)) return false;
      }
      return true;
    case NodeKind::apply:
      for (int a : n.args)
        if (!elementwise_around(p, in, s, a, reduce)) return false;
      return true;
    case NodeKind::reduce:
      if (reduce >= 0) return false;
      reduce = node;
      return true;
    case NodeKind::scan:
      return false;
  }
  return false;
}

class Product {
 public:
  Product(const Instance& in, const Statement& s, int reduce, const ProductForm& f)
      : in_(in), s_(s), f_(f), reduce_(reduce) {
    const Program& p = *in.program;
    const auto nb = static_cast<std::size_t>(f.batch), nm = static_cast<std::size_t>(f.m_dims);
    batch_ = product_of(in, s.lhs, 0, nb);
    M_ = product_of(in, s.lhs, nb, nm);
    N_ = product_of(in, s.lhs, nb + nm, static_cast<std::size_t>(f.n_dims));
    const Node& r = p.nodes[static_cast<std::size_t>(reduce_)];
    K_ = in.extents[static_cast<std::size_t>(r.over[0])];
    const Node& m = p.nodes[static_cast<std::size_t>(r.args[0])];
    a_first_ = p.nodes[static_cast<std::size_t>(m.args[0])].ref == f.a_tensor;
    a_ = in.inputs[static_cast<std::size_t>(f.a_tensor)];
    b_ = in.inputs[static_cast<std::size_t>(f.b_tensor)];
  }

  void run(Values& out, Values* bounds) const {
    zero_fill(out, static_cast<std::size_t>(batch_ * M_ * N_));
    if (bounds) zero_fill(*bounds, out.size());
    std::vector<double> b(static_cast<std::size_t>(K_ * N_));
    for (std::int64_t g = 0; g < batch_; ++g) {
      // B of this batch as K rows of N float64s.
      tbb::parallel_for(std::int64_t{0}, K_, [&](std::int64_t k) {
        for (std::int64_t n = 0; n < N_; ++n)
          b[static_cast<std::size_t>(k * N_ + n)] = b_->get(b_at(g, k, n));
      });
      tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, M_, 1),
                        [&](const tbb::blocked_range<std::int64_t>& r) {
                          RowState st(in_, N_, bounds != nullptr);
                          for (std::int64_t m = r.begin(); m < r.end(); ++m)
                            row(g, m, b, st, out, bounds);
                        });
    }
  }

 private:
  std::int64_t a_at(std::int64_t g, std::int64_t m, std::int64_t k) const {
    return g * M_ * K_ + (f_.a_transposed ? k * M_ + m : m * K_ + k);
  }
  std::int64_t b_at(std::int64_t g, std::int64_t k, std::int64_t n) const {
    return g * K_ * N_ + (f_.b_transposed ? n * K_ + k : k * N_ + n);
  }

  void row(std::int64_t g, std::int64_t m, const std::vector<double>& b, RowState& st, Values& out,
           Values* bounds) const {
    const auto n_count = static_cast<std::size_t>(N_);
    const bool chunked = K_ > kReduceChunk;
    for (std::size_t n = 0; n < n_count; ++n) {
      st.sum[n] = st.total[n] = CompensatedSum{};
      if (!bounds) continue;
      st.bound[n] = st.bound_total[n] = SumBound{};
      st.local[n] = st.prefix[n] = 0.0;
    }
    for (std::int64_t k = 0; k < K_; ++k) {
      const double a = a_->get(a_at(g, m, k));
      const double* bk = b.data() + k * N_;
      for (std::size_t n = 0; n < n_count; ++n) {
        // Machine::eval of mul(A, B) in the statement's operand order, then reduce's add.
        const double v =
            a_first_ ? ref::apply(Op::mul, a, bk[n], 0.0) : ref::apply(Op::mul, bk[n], a, 0.0);
        st.sum[n].add(v);
        if (bounds) {
          const Term t[2] = {{a_first_ ? a : bk[n]}, {a_first_ ? bk[n] : a}};
          st.bound[n].add({v, apply_bound(Op::mul, t, v)});
          if (chunked) st.local[n] += v;
        }
      }
      if (chunked && ((k + 1) % kReduceChunk == 0 || k + 1 == K_)) end_chunk(st, k + 1, bounds);
    }
    // Each sum finished by Machine::eval of the nodes around it (bias, activation).
    const std::int64_t base = (g * M_ + m) * N_;
    InputsOnly inputs;
    Machine machine(in_, inputs, bounds != nullptr);
    Frame& f = st.frame;
    for (std::int64_t n = 0; n < N_; ++n) {
      const auto j = static_cast<std::size_t>(n);
      const Term sum = !chunked
                           ? Term{st.sum[j].value(), bounds ? st.bound[j].value() : 0.0}
                           : Term{st.total[j].value(), bounds ? st.bound_total[j].value() : 0.0};
      std::int64_t rest = base + n;  // the statement's indices at this element
      for (std::size_t d = s_.lhs.size(); d-- > 0;) {
        const auto v = static_cast<std::size_t>(s_.lhs[d]);
        f.idx[v] = rest % in_.extents[v];
        rest /= in_.extents[v];
      }
      const Term y = machine.eval_given(s_.root, f, reduce_, sum);
      out[static_cast<std::size_t>(base + n)] = y.v;
      if (bounds) (*bounds)[static_cast<std::size_t>(base + n)] = y.e;
    }
  }

  // Machine::combine's fold of a chunk that ends after `terms` terms; the next one's bound
  // starts from the plain sum of those.
  void end_chunk(RowState& st, std::int64_t terms, const Values* bounds) const {
    for (std::size_t n = 0; n < static_cast<std::size_t>(N_); ++n) {
      st.total[n].add(st.sum[n].value());
      st.sum[n] = CompensatedSum{};
      if (!bounds) continue;
      st.bound_total[n].append(st.bound[n]);
      st.prefix[n] += st.local[n];
      st.local[n] = 0.0;
      st.bound[n] = SumBound::after(st.prefix[n], terms);
    }
  }

  const Instance& in_;
  const Statement& s_;
  ProductForm f_;
  int reduce_ = -1;
  std::int64_t batch_ = 1, M_ = 0, N_ = 0, K_ = 0;
  bool a_first_ = true;
  const Buffer *a_ = nullptr, *b_ = nullptr;
};

}  // namespace

bool run_contraction(const Instance& in, int statement, Values& out, Values* bounds) {
  const Program& p = *in.program;
  if (p.statements.size() != 1 || statement != 0) return false;
  const Statement& s = p.statements[0];
  int reduce = -1;
  if (s.scan_index >= 0 || !elementwise_around(p, in, s, s.root, reduce) || reduce < 0)
    return false;
  const std::optional<ProductForm> f =
      match_product(p, s, p.nodes[static_cast<std::size_t>(reduce)]);
  if (!f) return false;
  Product(in, s, reduce, *f).run(out, bounds);
  return true;
}

}  // namespace kq::ix
