#include "indexed/contraction.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>

#include "indexed/accumulate.hpp"
#include "indexed/bound.hpp"
#include "kq/matmul_form.hpp"
#include "kq/semantics.hpp"

namespace kq::ix {
namespace {

// The tensor (position in decls.tensors) of the k-th input.
int input_tensor(const Program& p, int k) {
  for (std::size_t t = 0; t < p.decls.tensors.size(); ++t)
    if (p.decls.tensors[t].role == Role::input && k-- == 0) return static_cast<int>(t);
  return -1;
}

std::int64_t product_of(const Instance& in, const std::vector<int>& vars, std::size_t first,
                        std::size_t count) {
  std::int64_t n = 1;
  for (std::size_t d = first; d < first + count; ++d)
    n *= in.extents[static_cast<std::size_t>(vars[d])];
  return n;
}

// One output row's running state over its N columns: Machine::reduce's accumulator and bound,
// held as arrays so that the loop over the columns runs without a call per term.
struct RowState {
  explicit RowState(std::int64_t n, bool bounds)
      : sum(static_cast<std::size_t>(n)), bound(bounds ? static_cast<std::size_t>(n) : 0) {}
  std::vector<CompensatedSum> sum;
  std::vector<SumBound> bound;
};

class Product {
 public:
  Product(const Instance& in, const Statement& s, const MatmulForm& f) : in_(in), s_(s), f_(f) {
    const Program& p = *in.program;
    const auto nb = static_cast<std::size_t>(f.batch), nm = static_cast<std::size_t>(f.m_dims);
    batch_ = product_of(in, s.lhs, 0, nb);
    M_ = product_of(in, s.lhs, nb, nm);
    N_ = product_of(in, s.lhs, nb + nm, static_cast<std::size_t>(f.n_dims));
    for (int i = s.root; i >= 0; --i) {
      const Node& n = p.nodes[static_cast<std::size_t>(i)];
      if (n.kind == NodeKind::reduce) {
        reduce_ = i;
        break;
      }
    }
    const Node& r = p.nodes[static_cast<std::size_t>(reduce_)];
    K_ = in.extents[static_cast<std::size_t>(r.over[0])];
    mul_ = r.args[0];
    const Node& m = p.nodes[static_cast<std::size_t>(mul_)];
    a_first_ = p.nodes[static_cast<std::size_t>(m.args[0])].ref == input_tensor(p, f.a);
    a_ = in.inputs[static_cast<std::size_t>(input_tensor(p, f.a))];
    b_ = in.inputs[static_cast<std::size_t>(input_tensor(p, f.b))];
    if (f.bias >= 0) bias_ = in.inputs[static_cast<std::size_t>(input_tensor(p, f.bias))];
  }

  void run(std::vector<double>& out, std::vector<double>* bounds) const {
    out.assign(static_cast<std::size_t>(batch_ * M_ * N_), 0.0);
    if (bounds) bounds->assign(out.size(), 0.0);
    std::vector<double> b(static_cast<std::size_t>(K_ * N_));
    for (std::int64_t g = 0; g < batch_; ++g) {
      // B of this batch as K rows of N float64s.
      tbb::parallel_for(std::int64_t{0}, K_, [&](std::int64_t k) {
        for (std::int64_t n = 0; n < N_; ++n)
          b[static_cast<std::size_t>(k * N_ + n)] = b_->get(b_at(g, k, n));
      });
      tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, M_, 1),
                        [&](const tbb::blocked_range<std::int64_t>& r) {
                          RowState st(N_, bounds != nullptr);
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

  void row(std::int64_t g, std::int64_t m, const std::vector<double>& b, RowState& st,
           std::vector<double>& out, std::vector<double>* bounds) const {
    const auto n_count = static_cast<std::size_t>(N_);
    for (std::size_t n = 0; n < n_count; ++n) {
      st.sum[n] = CompensatedSum{};
      if (bounds) st.bound[n] = SumBound{};
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
        }
      }
    }
    const std::int64_t base = (g * M_ + m) * N_;
    for (std::int64_t n = 0; n < N_; ++n) {
      const auto j = static_cast<std::size_t>(n);
      const Term sum{st.sum[j].value(), bounds ? st.bound[j].value() : 0.0};
      const Term y = epilogue(s_.root, sum, n, bounds != nullptr);
      out[static_cast<std::size_t>(base + n)] = y.v;
      if (bounds) (*bounds)[static_cast<std::size_t>(base + n)] = y.e;
    }
  }

  // Machine::eval of the nodes above the sum: the bias's element and applies.
  Term epilogue(int node, const Term& sum, std::int64_t n, bool bounds) const {
    if (node == reduce_) return sum;
    const Node& x = in_.program->nodes[static_cast<std::size_t>(node)];
    if (x.kind == NodeKind::access) return {bias_->get(n)};
    Term a[3];
    for (std::size_t k = 0; k < x.args.size(); ++k) a[k] = epilogue(x.args[k], sum, n, bounds);
    const double v = ref::apply(x.op, a[0].v, a[1].v, a[2].v);
    return {v, bounds ? apply_bound(x.op, a, v) : 0.0};
  }

  const Instance& in_;
  const Statement& s_;
  MatmulForm f_;
  std::int64_t batch_ = 1, M_ = 0, N_ = 0, K_ = 0;
  int reduce_ = -1, mul_ = -1;
  bool a_first_ = true;
  const Buffer *a_ = nullptr, *b_ = nullptr, *bias_ = nullptr;
};

}  // namespace

bool run_contraction(const Instance& in, int statement, std::vector<double>& out,
                     std::vector<double>* bounds) {
  const Program& p = *in.program;
  if (p.statements.size() != 1 || statement != 0) return false;
  const std::optional<MatmulForm> f = match_matmul(p);
  if (!f) return false;
  Product(in, p.statements[0], *f).run(out, bounds);
  return true;
}

}  // namespace kq::ix
