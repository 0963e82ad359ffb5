// Recognises a matrix product among a format-2 spec's statements, structurally (never by the
// op's name): one statement that writes the spec's only output,
//
//   C[batch..., m..., n...] = epilogue(sum(k, A[...] * B[...]))
//
// where A holds the batch indices, then its m indices and k in either order (k last: row-major
// M x K; k first: A stored transposed), B the batch indices, then k and its n indices in either
// order (k first: K x N; k last: an (N, K) weight, nn.Linear's), and the epilogue is nothing,
// `+ bias[n...]` (either side of the add), `gelu(...)` of either. Every subscript is a plain
// index. The m and n indices may be several each (KernelBench's 3-d and 4-d tensor-matrix
// products): a kernel flattens them, which a contiguous layout allows (matmul_geometry checks
// the views). Dtypes, the compute type and the domain are the arm's to check.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kq/indexed.hpp"
#include "kq/tensor.hpp"

namespace kq::ix {

struct MatmulForm {
  int a = 0, b = 1;           // A and B: positions among the inputs (declaration order)
  int bias = -1;              // the bias's position among the inputs, or -1
  int batch = 0;              // C's leading dims that A and B share
  int m_dims = 1;             // C's dims after them that only A has (M is their product)
  int n_dims = 1;             // C's trailing dims that only B has (N is their product)
  bool a_transposed = false;  // A holds k before its m dims
  bool b_transposed = false;  // B holds k after its n dims
  bool gelu = false;          // gelu (the erf form) of the sum, bias included
};

namespace matmul_detail {

// The index variables of an access whose subscripts are all plain indices, each at most once.
inline bool plain_subscripts(const Program& p, const Node& access, std::vector<int>& out) {
  out.clear();
  for (int s : access.args) {
    const Node& n = p.nodes[static_cast<std::size_t>(s)];
    if (n.kind != NodeKind::index) return false;
    if (std::find(out.begin(), out.end(), n.ref) != out.end()) return false;
    out.push_back(n.ref);
  }
  return true;
}

// The position of tensor `t` among the inputs (declaration order), or -1 for another role.
inline int input_position(const Program& p, int t) {
  int k = 0;
  for (std::size_t i = 0; i < p.decls.tensors.size(); ++i) {
    if (p.decls.tensors[i].role != Role::input) continue;
    if (static_cast<int>(i) == t) return k;
    ++k;
  }
  return -1;
}

// Whether `got` is `prefix` followed by `group` and `k` in either order; sets k_first.
inline bool operand_order(const std::vector<int>& got, const std::vector<int>& prefix,
                          const std::vector<int>& group, int k, bool& k_first) {
  std::vector<int> k_last = prefix, k_front = prefix;
  k_last.insert(k_last.end(), group.begin(), group.end());
  k_last.push_back(k);
  k_front.push_back(k);
  k_front.insert(k_front.end(), group.begin(), group.end());
  k_first = got == k_front && got != k_last;
  return got == k_last || got == k_front;
}

}  // namespace matmul_detail

// The product a reduction node of statement `st` computes: the tensors of A and B (positions in
// decls.tensors) and how the statement's left-hand side splits into batch, m and n indices.
struct ProductForm {
  int a_tensor = -1, b_tensor = -1;
  int batch = 0, m_dims = 1, n_dims = 1;
  bool a_transposed = false, b_transposed = false;
};

// Whether node `n` of statement `st` is `sum(k, A[...] * B[...])` as the header describes (the
// epilogue around it aside), or nullopt with *why.
inline std::optional<ProductForm> match_product(const Program& p, const Statement& st,
                                                const Node& n, std::string* why = nullptr) {
  using namespace matmul_detail;
  auto no = [&](const char* reason) -> std::optional<ProductForm> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (n.kind != NodeKind::reduce || n.reduction != Reduction::sum || n.over.size() != 1)
    return no("a sum over one index of a product");
  const int k = n.over[0];
  const Node& prod = p.nodes[static_cast<std::size_t>(n.args[0])];
  if (prod.kind != NodeKind::apply || prod.op != Op::mul) return no("a sum of products");
  const Node& na = p.nodes[static_cast<std::size_t>(prod.args[0])];
  const Node& nb = p.nodes[static_cast<std::size_t>(prod.args[1])];
  std::vector<int> ia, ib;
  if (na.kind != NodeKind::access || nb.kind != NodeKind::access || !plain_subscripts(p, na, ia) ||
      !plain_subscripts(p, nb, ib))
    return no("a product of two tensors subscripted by plain indices");
  const std::vector<int>& lhs = st.lhs;
  auto has = [](const std::vector<int>& v, int x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  // Which factor is B: the one holding C's last index (the product commutes).
  if (lhs.empty()) return no("an output with dims");
  const bool swapped = !has(ib, lhs.back());
  const Node& fa = swapped ? nb : na;
  const Node& fb = swapped ? na : nb;
  if (swapped) std::swap(ia, ib);
  if (fa.ref == fb.ref) return no("two distinct tensors");
  std::vector<int> batch, mg, ng;
  for (int x : lhs) {
    const bool in_a = has(ia, x), in_b = has(ib, x);
    if (in_a && in_b) {
      if (!mg.empty() || !ng.empty()) return no("the batch indices lead the output's");
      batch.push_back(x);
    } else if (in_a) {
      if (!ng.empty()) return no("the output's m indices come before its n indices");
      mg.push_back(x);
    } else if (in_b) {
      ng.push_back(x);
    } else {
      return no("every output index in a factor");
    }
  }
  if (mg.empty() || ng.empty()) return no("an m index and an n index");
  if (has(lhs, k)) return no("k summed, not kept");
  ProductForm f;
  if (!operand_order(ia, batch, mg, k, f.a_transposed))
    return no("A subscripted [batch..., m..., k] or [batch..., k, m...]");
  bool k_first = false;
  if (!operand_order(ib, batch, ng, k, k_first))
    return no("B subscripted [batch..., k, n...] or [batch..., n..., k]");
  f.b_transposed = !k_first;
  if (p.decls.tensors[static_cast<std::size_t>(fa.ref)].role != Role::input ||
      p.decls.tensors[static_cast<std::size_t>(fb.ref)].role != Role::input)
    return no("A and B must be inputs");
  f.a_tensor = fa.ref;
  f.b_tensor = fb.ref;
  f.batch = static_cast<int>(batch.size());
  f.m_dims = static_cast<int>(mg.size());
  f.n_dims = static_cast<int>(ng.size());
  return f;
}

// The form of the product, or nullopt with *why saying what does not fit.
inline std::optional<MatmulForm> match_matmul(const Program& p, std::string* why = nullptr) {
  using namespace matmul_detail;
  auto no = [&](const char* reason) -> std::optional<MatmulForm> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (p.statements.size() != 1) return no("one statement only");
  const Statement& st = p.statements[0];
  if (p.decls.tensors[static_cast<std::size_t>(st.tensor)].role != Role::output)
    return no("the statement must write an output");
  for (const TensorDecl& t : p.decls.tensors)
    if (t.role == Role::output && &t != &p.decls.tensors[static_cast<std::size_t>(st.tensor)])
      return no("one output only");
  MatmulForm f;
  const Node* n = &p.nodes[static_cast<std::size_t>(st.root)];
  if (n->kind == NodeKind::apply && n->op == Op::gelu) {
    f.gelu = true;
    n = &p.nodes[static_cast<std::size_t>(n->args[0])];
  }
  const Node* bias = nullptr;
  if (n->kind == NodeKind::apply && n->op == Op::add) {
    const Node& l = p.nodes[static_cast<std::size_t>(n->args[0])];
    const Node& r = p.nodes[static_cast<std::size_t>(n->args[1])];
    if (l.kind == NodeKind::reduce && r.kind == NodeKind::access)
      n = &l, bias = &r;
    else if (r.kind == NodeKind::reduce && l.kind == NodeKind::access)
      n = &r, bias = &l;
    else
      return no("an epilogue of `+ bias[n]` and gelu only");
  }
  const std::optional<ProductForm> prod = match_product(p, st, *n, why);
  if (!prod) return std::nullopt;
  f.a = input_position(p, prod->a_tensor);
  f.b = input_position(p, prod->b_tensor);
  f.batch = prod->batch;
  f.m_dims = prod->m_dims;
  f.n_dims = prod->n_dims;
  f.a_transposed = prod->a_transposed;
  f.b_transposed = prod->b_transposed;
  if (bias) {
    std::vector<int> ibias;
    const std::vector<int> ng(st.lhs.end() - f.n_dims, st.lhs.end());
    if (!plain_subscripts(p, *bias, ibias) || ibias != ng)
      return no("a bias subscripted by the n indices alone");
    f.bias = input_position(p, bias->ref);
    if (f.bias < 0 || f.bias == f.a || f.bias == f.b) return no("a bias input of its own");
  }
  int inputs = 0;
  for (const TensorDecl& t : p.decls.tensors) inputs += t.role == Role::input;
  if (inputs != (f.bias >= 0 ? 3 : 2)) return no("no inputs beside A, B and the bias");
  return f;
}

// One operand as a strided matrix: rows x cols, `rs` and `cs` the strides (elements) between
// rows and between columns, `batch_stride` between the batch's matrices.
struct MatrixView {
  std::int64_t rows = 0, cols = 0, rs = 0, cs = 0, batch_stride = 0;
};

// A problem's product on its views: C (M x N) = A (M x K) B (K x N), `batch` times.
struct MatmulGeometry {
  std::int64_t batch = 1, M = 0, N = 0, K = 0;
  MatrixView a, b, c;
  MatrixView bias;  // 1 x N where there is a bias
};

namespace matmul_detail {

// The stride of dims [first, first + count) of v taken as one (their product's extent), or -1
// when they do not collapse (dims of extent 1 are left out; none left: 0).
inline std::int64_t collapsed_stride(const TensorView& v, int first, int count,
                                     std::int64_t& extent) {
  extent = 1;
  std::int64_t stride = 0;
  bool any = false;
  for (int d = first + count - 1; d >= first; --d) {
    const std::int64_t e = v.shape[static_cast<std::size_t>(d)];
    const std::int64_t s = v.strides[static_cast<std::size_t>(d)];
    if (e != 1) {
      if (any && s != stride * extent) return -1;
      if (!any) stride = s;
      any = true;
    }
    extent *= e;
  }
  return stride;
}

}  // namespace matmul_detail

// The geometry of a problem whose views are those of form f's spec, or nullopt with *why when a
// group of dims does not collapse into one stride or the batch is not one stride apart.
inline std::optional<MatmulGeometry> matmul_geometry(const MatmulForm& f,
                                                     const std::vector<TensorView>& in,
                                                     const TensorView& c_view,
                                                     std::string* why = nullptr) {
  using namespace matmul_detail;
  auto no = [&](std::string reason) -> std::optional<MatmulGeometry> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  const TensorView& a = in[static_cast<std::size_t>(f.a)];
  const TensorView& b = in[static_cast<std::size_t>(f.b)];
  MatmulGeometry g;
  std::int64_t ext = 0;
  const int nb = f.batch;
  // C: [batch, m..., n...].
  const std::int64_t cb = collapsed_stride(c_view, 0, nb, g.batch);
  const std::int64_t cm = collapsed_stride(c_view, nb, f.m_dims, g.M);
  const std::int64_t cn = collapsed_stride(c_view, nb + f.m_dims, f.n_dims, g.N);
  // A: [batch, m..., k] or [batch, k, m...].
  const int a_m = nb + (f.a_transposed ? 1 : 0);
  const int a_k = f.a_transposed ? nb : nb + f.m_dims;
  const std::int64_t ab = collapsed_stride(a, 0, nb, ext);
  const std::int64_t am = collapsed_stride(a, a_m, f.m_dims, ext);
  const std::int64_t ak = collapsed_stride(a, a_k, 1, g.K);
  // B: [batch, k, n...] or [batch, n..., k].
  const int b_n = nb + (f.b_transposed ? 0 : 1);
  const int b_k = f.b_transposed ? nb + f.n_dims : nb;
  const std::int64_t bb = collapsed_stride(b, 0, nb, ext);
  const std::int64_t bn = collapsed_stride(b, b_n, f.n_dims, ext);
  const std::int64_t bk = collapsed_stride(b, b_k, 1, ext);
  for (std::int64_t s : {cb, cm, cn, ab, am, ak, bb, bn, bk})
    if (s < 0) return no("a group of dims (batch, m or n) whose strides do not collapse into one");
  g.a = {g.M, g.K, am, ak, ab};
  g.b = {g.K, g.N, bk, bn, bb};
  g.c = {g.M, g.N, cm, cn, cb};
  if (f.bias >= 0) {
    const TensorView& bias = in[static_cast<std::size_t>(f.bias)];
    const std::int64_t s = collapsed_stride(bias, 0, f.n_dims, ext);
    if (s < 0) return no("a bias whose dims do not collapse into one stride");
    g.bias = {1, g.N, 0, s, 0};
  }
  return g;
}

}  // namespace kq::ix
