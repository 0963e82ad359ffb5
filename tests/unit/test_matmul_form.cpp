// kq/matmul_form.hpp: which statements are a matrix product (the KernelBench GEMM specs and the
// bf16 linear layers, never by name), the geometry of a problem's views, and the reference's
// compiled path for products (indexed/contraction.hpp), which must give the statement machine's
// values and bounds bit for bit.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "indexed/evaluate.hpp"
#include "indexed/parser.hpp"
#include "kq/matmul_form.hpp"
#include "spec/spec.hpp"

namespace fs = std::filesystem;
using kq::ix::MatmulForm;

namespace {

const fs::path kSpecs = fs::path(KQ_SOURCE_DIR) / "specs";

kq::Spec load(const std::string& name) { return kq::load_spec(kSpecs / name); }

struct Expected {
  const char* file;
  int a, b, bias, batch, m_dims, n_dims;
  bool a_t, b_t, gelu;
};

const Expected kForms[] = {
    {"kernelbench/01_square_matmul.yaml", 0, 1, -1, 0, 1, 1, false, false, false},
    {"kernelbench/02_standard_matmul.yaml", 0, 1, -1, 0, 1, 1, false, false, false},
    {"kernelbench/03_batched_matmul.yaml", 0, 1, -1, 1, 1, 1, false, false, false},
    {"kernelbench/04_matrix_vector_matmul.yaml", 0, 1, -1, 0, 1, 1, false, false, false},
    {"kernelbench/06_matmul_large_k.yaml", 0, 1, -1, 0, 1, 1, false, false, false},
    {"kernelbench/07_matmul_small_k.yaml", 0, 1, -1, 0, 1, 1, false, false, false},
    {"kernelbench/08_matmul_irregular_shapes.yaml", 0, 1, -1, 0, 1, 1, false, false, false},
    {"kernelbench/09_tall_skinny_matmul.yaml", 0, 1, -1, 0, 1, 1, false, false, false},
    {"kernelbench/10_3d_tensor_matrix_matmul.yaml", 0, 1, -1, 0, 2, 1, false, false, false},
    {"kernelbench/11_4d_tensor_matrix_matmul.yaml", 0, 1, -1, 0, 3, 1, false, false, false},
    {"kernelbench/13_symmetric_matmul.yaml", 0, 1, -1, 0, 1, 1, false, false, false},
    {"kernelbench/16_matmul_transposed_a.yaml", 0, 1, -1, 0, 1, 1, true, false, false},
    {"kernelbench/17_matmul_transposed_b.yaml", 0, 1, -1, 0, 1, 1, false, true, false},
    {"kernelbench/18_matmul_transposed_both.yaml", 0, 1, -1, 0, 1, 1, true, true, false},
    {"gemm/matmul_bf16.yaml", 0, 1, -1, 0, 1, 1, false, false, false},
    {"gemm/linear_bias_bf16.yaml", 0, 1, 2, 0, 1, 1, false, true, false},
    {"gemm/linear_gelu_bf16.yaml", 0, 1, 2, 0, 1, 1, false, true, true},
};

// A program of one statement over tensors declared f32 with these shapes.
kq::ix::Program program(const std::string& text,
                        const std::vector<std::pair<std::string, std::vector<std::string>>>& in,
                        const std::vector<std::string>& out_shape) {
  kq::ix::Declarations d;
  for (const char* dim : {"B", "M", "N", "K"}) d.dims.push_back({dim, kq::ix::DimKind::free});
  auto extents = [](const std::vector<std::string>& s) {
    std::vector<kq::ix::Extent> e;
    for (const std::string& x : s) e.emplace_back(x);
    return e;
  };
  for (const auto& [name, shape] : in)
    d.tensors.push_back({name, kq::ix::Role::input, kq::DType::f32, extents(shape)});
  d.tensors.push_back({"c", kq::ix::Role::output, kq::DType::f32, extents(out_shape)});
  kq::ix::ParseResult r = kq::ix::parse_program(text, d);
  REQUIRE_MESSAGE(r.program, text);
  return *r.program;
}

}  // namespace

TEST_CASE("the GEMM specs are recognised as products, with their layouts and epilogues") {
  for (const Expected& e : kForms) {
    CAPTURE(e.file);
    const kq::Spec s = load(e.file);
    std::string why;
    const std::optional<MatmulForm> f = kq::ix::match_matmul(*s.op.program, &why);
    REQUIRE_MESSAGE(f, why);
    CHECK(f->a == e.a);
    CHECK(f->b == e.b);
    CHECK(f->bias == e.bias);
    CHECK(f->batch == e.batch);
    CHECK(f->m_dims == e.m_dims);
    CHECK(f->n_dims == e.n_dims);
    CHECK(f->a_transposed == e.a_t);
    CHECK(f->b_transposed == e.b_t);
    CHECK(f->gelu == e.gelu);
  }
  // The scalar multiple, the diagonal scaling and the triangular products are not.
  for (const char* other :
       {"kernelbench/05_matrix_scalar_multiplication.yaml", "kernelbench/12_diagonal_matmul.yaml",
        "kernelbench/14_upper_triangular_matmul.yaml",
        "kernelbench/15_lower_triangular_matmul.yaml", "softmax_bf16.yaml"}) {
    CAPTURE(other);
    CHECK_FALSE(kq::ix::match_matmul(*load(other).op.program));
  }
}

TEST_CASE("a product is recognised by its structure: operand order, epilogues, refusals") {
  const auto ab = std::vector<std::pair<std::string, std::vector<std::string>>>{{"a", {"M", "K"}},
                                                                                {"b", {"K", "N"}}};
  // B written first: still A (M, K) times B (K, N).
  auto f = kq::ix::match_matmul(program("c[m, n] = sum(k, b[k, n] * a[m, k])", ab, {"M", "N"}));
  REQUIRE(f);
  CHECK(f->a == 0);
  CHECK(f->b == 1);
  // The bias on the left of the add, gelu around it.
  f = kq::ix::match_matmul(program("c[m, n] = gelu(bias[n] + sum(k, a[m, k] * b[k, n]))",
                                   {{"a", {"M", "K"}}, {"b", {"K", "N"}}, {"bias", {"N"}}},
                                   {"M", "N"}));
  REQUIRE(f);
  CHECK(f->bias == 2);
  CHECK(f->gelu);
  // C written (n, m): C^T = B^T A^T, a product whose A is b read transposed, whose B is a.
  f = kq::ix::match_matmul(program("c[n, m] = sum(k, a[m, k] * b[k, n])", ab, {"N", "M"}));
  REQUIRE(f);
  CHECK(f->a == 1);
  CHECK(f->b == 0);
  CHECK(f->a_transposed);
  CHECK(f->b_transposed);
  std::string why;
  // A scaled product, a sum over two indices, a shifted subscript,
  // a bias over m, an exp epilogue, a max: none is a plain product.
  const std::pair<const char*, std::vector<std::pair<std::string, std::vector<std::string>>>>
      refused[] = {
          {"c[m, n] = sum(k, 2 * a[m, k] * b[k, n])", ab},
          {"c[m, n] = sum(k, a[m, k] * b[k, n]) * 2", ab},
          {"c[m, n] = exp(sum(k, a[m, k] * b[k, n]))", ab},
          {"c[m, n] = max(k, a[m, k] * b[k, n])", ab},
          {"c[m, n] = sum(k, a[m, k] * b[k, n]) + d[m]",
           {{"a", {"M", "K"}}, {"b", {"K", "N"}}, {"d", {"M"}}}},
      };
  for (const auto& [text, inputs] : refused) {
    CAPTURE(text);
    CHECK_FALSE(kq::ix::match_matmul(program(text, inputs, {"M", "N"}), &why));
    CHECK_FALSE(why.empty());
  }
  // A times itself: a kernel of two operands would be handed one buffer twice.
  CHECK_FALSE(kq::ix::match_matmul(
      program("c[m, n] = sum(k, a[m, k] * a[k, n])", {{"a", {"M", "M"}}}, {"M", "M"})));
}

TEST_CASE("the geometry of a product's views: flattened m dims, transposes, refusals") {
  const kq::Spec s = load("kernelbench/10_3d_tensor_matrix_matmul.yaml");  // A[n, m, k] B[k, l]
  const MatmulForm f = *kq::ix::match_matmul(*s.op.program);
  auto view = [](std::vector<std::int64_t> shape, std::vector<std::int64_t> strides) {
    kq::TensorView v;
    v.rank = static_cast<int>(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) v.shape[d] = shape[d], v.strides[d] = strides[d];
    return v;
  };
  kq::TensorView a = view({4, 5, 6}, {30, 6, 1});
  const kq::TensorView b = view({6, 7}, {7, 1});
  const kq::TensorView c = view({4, 5, 7}, {35, 7, 1});
  std::string why;
  auto g = kq::ix::matmul_geometry(f, {a, b}, c, &why);
  REQUIRE_MESSAGE(g, why);
  CHECK(g->batch == 1);
  CHECK(g->M == 20);
  CHECK(g->N == 7);
  CHECK(g->K == 6);
  CHECK(g->a.rs == 6);
  CHECK(g->a.cs == 1);
  CHECK(g->b.rs == 7);
  CHECK(g->c.rs == 7);
  // A's rows padded between its n blocks: the m dims no longer collapse.
  a.strides[0] = 31;
  CHECK_FALSE(kq::ix::matmul_geometry(f, {a, b}, c, &why));
  CHECK(why.find("collapse") != std::string::npos);
}

TEST_CASE("the reference's compiled product gives the statement machine's values and bounds") {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  const std::map<std::string, std::map<std::string, std::int64_t>> cases = {
      {"kernelbench/03_batched_matmul.yaml", {{"Bt", 3}, {"M", 5}, {"N", 7}, {"K", 33}}},
      {"kernelbench/10_3d_tensor_matrix_matmul.yaml", {{"N", 2}, {"M", 3}, {"L", 5}, {"K", 9}}},
      {"kernelbench/16_matmul_transposed_a.yaml", {{"M", 4}, {"N", 6}, {"K", 65}}},
      {"kernelbench/18_matmul_transposed_both.yaml", {{"M", 4}, {"N", 6}, {"K", 17}}},
      {"gemm/linear_gelu_bf16.yaml", {{"M", 3}, {"N", 9}, {"K", 129}}},
      {"gemm/linear_bias_bf16.yaml", {{"M", 2}, {"N", 5}, {"K", 0}}},
      {"kernelbench/14_upper_triangular_matmul.yaml", {{"N", 9}}},
      {"kernelbench/15_lower_triangular_matmul.yaml", {{"M", 8}}},
      // K in three chunks of kReduceChunk (machine.hpp): the product's sums are chunked alike.
      {"kernelbench/06_matmul_large_k.yaml", {{"M", 2}, {"N", 3}, {"K", 2 * 65536 + 3}}},
  };
  for (const auto& [file, dim_values] : cases) {
    CAPTURE(file);
    const kq::Spec s = load(file);
    const kq::ix::Program& p = *s.op.program;
    const kq::ix::DimValues dims(dim_values.begin(), dim_values.end());
    kq::ix::Tensors in;
    int output = -1;
    for (std::size_t t = 0; t < p.decls.tensors.size(); ++t) {
      const kq::ix::TensorDecl& d = p.decls.tensors[t];
      if (d.role == kq::ix::Role::output) output = static_cast<int>(t);
      if (d.role != kq::ix::Role::input) continue;
      std::vector<std::int64_t> shape;
      for (const kq::ix::Extent& e : d.shape) shape.push_back(dims.at(e.name));
      std::vector<double> v(static_cast<std::size_t>(kq::ix::numel_of(shape)));
      for (double& x : v) x = normal(rng) * 3.0;
      in[d.name] = kq::ix::Buffer::of(d.dtype, shape, v);
    }
    const int bounded[] = {output};
    const kq::ix::Evaluation full = kq::ix::evaluate_with_bounds(p, dims, in, bounded);
    const std::string out_name = p.decls.tensors[static_cast<std::size_t>(output)].name;
    const kq::ix::Buffer& got = full.outputs.at(out_name);
    std::vector<kq::ix::Sample> samples;
    for (std::int64_t i = 0; i < got.numel(); ++i)
      samples.push_back({out_name, kq::ix::coord_of(got.shape, i)});
    const kq::ix::SampledEvaluation machine =
        kq::ix::evaluate_at_with_bounds(p, dims, in, samples, 0);
    REQUIRE(machine.values.size() == samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) {
      CAPTURE(i);
      CHECK(std::bit_cast<std::uint64_t>(machine.values[i]) ==
            std::bit_cast<std::uint64_t>(got.get(static_cast<std::int64_t>(i))));
      CHECK(
          std::bit_cast<std::uint64_t>(machine.bounds[i]) ==
          std::bit_cast<std::uint64_t>(full.bounds.at(out_name).get(static_cast<std::int64_t>(i))));
    }
  }
}
