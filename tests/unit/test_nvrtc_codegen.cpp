// nvrtc_jit without a GPU: the generated source (one temporary per node, the rounding
// intrinsics, float or double per node, the vector path), the launch planner, and a real NVRTC
// compile of every op and every shipped-spec expression for sm_90 (NVRTC needs no GPU; it is
// reached through dlopen so that this test links nothing of CUDA).
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <string>
#include <vector>

// The plugin's pure parts, compiled into this test (plugins are not libraries to link against).
#include "../../plugins/nvrtc_jit/cache_store.cpp"
#include "../../plugins/nvrtc_jit/codegen.cpp"
#include "../../plugins/nvrtc_jit/cuda_include.cpp"
#include "../../plugins/nvrtc_jit/launch_plan.cpp"
#include "../../plugins/plugin_common/sha256.cpp"

#include "expr_nodes.hpp"

namespace {

using kq::DType;
using kq::Expr;
using kq::ExprNode;
using kq::Op;
using kq::OpSpec;
using kq::TensorView;
namespace nv = kq::nvrtc;

using Builder = kq::test::ExprBuilder;

OpSpec make_spec(Expr e, std::vector<std::string> inputs, DType t = DType::f32,
                 std::string text = "") {
  OpSpec s;
  s.op = "test";
  s.dtype = t;
  s.inputs = std::move(inputs);
  s.outputs = {{"out", {}}};
  s.semantics = std::move(e);
  s.semantics.text = std::move(text);
  return s;
}

// The shipped specs' expressions (specs/*.yaml), as the parser lays them out.
OpSpec residual_relu(DType t = DType::f32) {
  Builder b;  // (each push in its own statement: argument order is unspecified in C++)
  int x = b.in(0);
  int r = b.in(1);
  b.op(Op::relu, b.op(Op::add, x, r));
  return make_spec(b.e, {"x", "residual"}, t, "relu(x + residual)");
}
OpSpec axpby() {
  Builder b;
  int c1 = b.c(2.5);
  int l = b.op(Op::mul, c1, b.in(0));
  int c2 = b.c(0.75);
  int r = b.op(Op::mul, c2, b.in(1));
  b.op(Op::sub, l, r);
  return make_spec(b.e, {"x", "y"}, DType::f32, "2.5 * x - 0.75 * y");
}
OpSpec leaky_relu() {
  Builder b;
  int x0 = b.in(0);
  int cond = b.op(Op::gt, x0, b.c(0));
  int x = b.in(0);
  int k = b.c(0.01);
  b.op(Op::select, cond, x, b.op(Op::mul, k, b.in(0)));
  return make_spec(b.e, {"x"}, DType::f32, "select(x > 0, x, 0.01 * x)");
}
OpSpec clamp_spec() {
  Builder b;
  int x = b.in(0);
  int lo = b.op(Op::neg, b.c(1));
  int hi = b.c(1);
  b.op(Op::clamp, x, lo, hi);
  return make_spec(b.e, {"x"}, DType::f32, "clamp(x, -1, 1)");
}
OpSpec gelu_spec() {
  Builder b;
  b.op(Op::gelu, b.in(0));
  return make_spec(b.e, {"x"}, DType::f32, "gelu(x)");
}
OpSpec silu_mul() {
  Builder b;
  int s = b.op(Op::silu, b.in(0));
  b.op(Op::mul, s, b.in(1));
  return make_spec(b.e, {"x", "y"}, DType::f32, "silu(x) * y");
}

OpSpec in_dtype(OpSpec s, DType t) {
  s.dtype = t;
  return s;
}

// One spec per op over inputs x, y, z (select and clamp take three).
OpSpec single_op(Op o, DType t) {
  Builder b;
  const int ar = kq::arity(o);
  if (ar == 0) {
    if (o == Op::constant) {
      int x = b.in(0);
      b.op(Op::add, x, b.c(0.1));  // a constant needs something to meet
    } else {
      b.in(0);
    }
  } else {
    int a = b.in(0);
    int c2 = ar > 1 ? b.in(1) : -1;
    int c3 = ar > 2 ? b.in(2) : -1;
    b.op(o, a, c2, c3);
  }
  return make_spec(b.e, {"x", "y", "z"}, t, std::string(kq::to_string(o)));
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

std::string eval_body(const std::string& src) {
  auto b = src.find("kq_eval(");
  auto e = src.find("\n}\n", b);
  return src.substr(b, e - b);
}

}  // namespace

TEST_CASE("codegen: residual_relu f32 is float throughout, one temporary per node") {
  auto g = nv::generate(residual_relu());
  const std::string body = eval_body(g.source);
  CHECK(count(body, "  const float t") == 4);
  CHECK(count(body, "double") == 0);
  CHECK(body.find("const float t2 = kq_add(t0, t1);") != std::string::npos);
  CHECK(body.find("const float t3 = kq_relu(t2);") != std::string::npos);
  CHECK(body.find("return t3;") != std::string::npos);
  // The helpers: one rounding per op, NaN-propagating relu with relu(-0) = +0.
  CHECK(g.source.find("__fadd_rn(a, b)") != std::string::npos);
  CHECK(g.source.find("__fmul_rn(a, b)") != std::string::npos);
  CHECK(g.source.find("return a <= 0.0f ? 0.0f : a;") != std::string::npos);
  CHECK(g.source.find("fmaxf(a") == std::string::npos);
  CHECK(g.source.find("#include") == std::string::npos);
  // Five kernels; the vector path loads float4 through __ldg, four in flight.
  for (const char* k :
       {"kq_vec(", "kq_vec_alias(", "kq_scalar(", "kq_scalar_alias(", "kq_strided("})
    CHECK(count(g.source,
                std::string("extern \"C\" __global__ void __launch_bounds__(256, 1) ") + k) == 1);
  CHECK(g.source.find("a0[u] = __ldg(v0 + i + u * nthreads);") != std::string::npos);
  CHECK(g.source.find("const float4* __restrict__ v1") != std::string::npos);
  CHECK(g.source.find("float4 a1[4];") != std::string::npos);
  CHECK(g.vec_width == 4);
  CHECK(g.num_inputs == 2);
  // The alias twin neither restricts nor reads through the non-coherent cache.
  auto alias = g.source.substr(g.source.find("kq_vec_alias("), 1500);
  alias = alias.substr(0, alias.find("\n}\n"));
  CHECK(alias.find("__ldg") == std::string::npos);
  CHECK(alias.find("__restrict__") == std::string::npos);
  CHECK(g.source.find("struct kq_layout {\n  kq_i64 shape[8];\n  kq_i64 stride[3][8];\n};") !=
        std::string::npos);
}

TEST_CASE("codegen: f64 uses double2 vectors and the double intrinsics") {
  auto g = nv::generate(residual_relu(DType::f64));
  const std::string body = eval_body(g.source);
  CHECK(body.find("const double t2 = kq_add(t0, t1);") != std::string::npos);
  CHECK(count(body, "  const double t") == 4);
  CHECK(g.source.find("__dadd_rn(a, b)") != std::string::npos);
  CHECK(g.source.find("double2 a0[4];") != std::string::npos);
  CHECK(g.source.find("const kq_i64 nvec = (n - head) / 2;") != std::string::npos);
  CHECK(g.vec_width == 2);
}

TEST_CASE("codegen: f16 and bf16 widen to float, plan as f32 and round once to the half type") {
  auto g = nv::generate(residual_relu(DType::f16));
  const std::string body = eval_body(g.source);
  CHECK(g.cuda_headers);
  CHECK(g.vec_width == 8);
  CHECK(g.source.find("#include <cuda_fp16.h>") != std::string::npos);
  CHECK(g.source.find("typedef __half kq_half;") != std::string::npos);
  CHECK(g.source.find("return __float2half_rn(v);") != std::string::npos);
  CHECK(g.source.find("return __double2half(v);") != std::string::npos);  // never through float
  CHECK(body.find("kq_eval(kq_half in0, kq_half in1)") != std::string::npos);
  CHECK(body.find("const float t0 = kq_widen(in0);") != std::string::npos);
  CHECK(body.find("const float t2 = kq_add(t0, t1);") != std::string::npos);
  CHECK(body.find("const float t3 = kq_relu(t2);") != std::string::npos);
  CHECK(body.find("return kq_narrow(t3);") != std::string::npos);
  CHECK(g.plan.find("result: rounded once to f16 from float") != std::string::npos);
  // 16-byte vectors of 8 halves: four words, each a pair computed element by element.
  CHECK(g.source.find("uint4 a0[4];") != std::string::npos);
  CHECK(g.source.find("const kq_i64 nvec = (n - head) / 8;") != std::string::npos);
  CHECK(g.source.find("r.w = kq_eval2(in0.w, in1.w);") != std::string::npos);
  CHECK(g.source.find("return kq_pack(kq_eval(kq_lo(in0), kq_lo(in1)), kq_eval(kq_hi(in0), "
                      "kq_hi(in1)));") != std::string::npos);
  CHECK(g.source.find("const kq_half* __restrict__ in0") != std::string::npos);

  auto b = nv::generate(residual_relu(DType::bf16));
  CHECK(b.source.find("#include <cuda_bf16.h>") != std::string::npos);
  CHECK(b.source.find("cuda_fp16.h") == std::string::npos);
  CHECK(b.source.find("typedef __nv_bfloat16 kq_half;") != std::string::npos);
  CHECK(b.source.find("return __float2bfloat16_rn(v);") != std::string::npos);
  CHECK(b.source.find("return __double2bfloat16(v);") != std::string::npos);
  CHECK(b.source.find("return __bfloat162float(v);") != std::string::npos);

  // A double root (2.5 * x - 0.75 * y needs its exact products) goes to half in one rounding.
  auto a = nv::generate(in_dtype(axpby(), DType::bf16));
  CHECK(eval_body(a.source).find("return kq_narrow(t6);") != std::string::npos);
  CHECK(a.plan.find("result: rounded once to bf16 from double") != std::string::npos);

  // The contract computes half in float32; anything else is refused.
  OpSpec wide = residual_relu(DType::f16);
  wide.compute = DType::f64;
  CHECK(nv::check_dtype(wide).find("float32 only") != std::string::npos);
  CHECK_THROWS_AS(nv::generate(wide), std::invalid_argument);
  CHECK(nv::check_dtype(residual_relu(DType::bf16)).empty());
}

TEST_CASE("codegen: f32 arithmetic feeding arithmetic is computed in double, rounded once") {
  // 2.5 * x - 0.75 * y: the products must stay exact doubles (as in the reference) or the
  // subtraction can see an overflow (2.5 * x > FLT_MAX) the reference does not.
  auto g = nv::generate(axpby());
  const std::string body = eval_body(g.source);
  CHECK(body.find("const float t0 = 0x1.4p+1f;  // constant 2.5") != std::string::npos);
  CHECK(body.find("const double t2 = kq_mul((double)t0, (double)t1);") != std::string::npos);
  CHECK(body.find("const double t5 = kq_mul((double)t3, (double)t4);") != std::string::npos);
  CHECK(body.find("const double t6 = kq_sub(t2, t5);") != std::string::npos);
  CHECK(body.find("return __double2float_rn(t6);") != std::string::npos);
  CHECK(g.plan.find("result: rounded once to float") != std::string::npos);
}

TEST_CASE("codegen: constants keep their double value unless a float holds it exactly") {
  auto g = nv::generate(leaky_relu());
  const std::string body = eval_body(g.source);
  CHECK(body.find("const float t1 = 0x0p+0f;") != std::string::npos);
  CHECK(body.find("const float t2 = (t0 > t1) ? 1.0f : 0.0f;") != std::string::npos);
  CHECK(body.find("const double t4 = 0x1.47ae147ae147bp-7;  // constant 0.01") !=
        std::string::npos);
  CHECK(body.find("const double t6 = kq_mul(t4, (double)t5);") != std::string::npos);
  CHECK(body.find("const double t7 = (t2 != 0.0f) ? (double)t3 : t6;") != std::string::npos);
  CHECK(body.find("return __double2float_rn(t7);") != std::string::npos);
}

TEST_CASE("codegen: constant-only subexpressions are folded as the reference folds them") {
  auto g = nv::generate(clamp_spec());
  const std::string body = eval_body(g.source);
  // neg(1) becomes the constant -1; the lone 1 it negated is not emitted.
  CHECK(body.find("const float t2 = -0x1p+0f;  // folded neg = -1") != std::string::npos);
  CHECK(body.find("t1 =") == std::string::npos);
  CHECK(body.find("const float t4 = kq_clamp(t0, t2, t3);") != std::string::npos);

  Builder b;  // x * (1 / 3): 1/3 in double, as the reference computes it, then kept as a double
  int x0 = b.in(0);
  int one = b.c(1);
  int third = b.op(Op::div, one, b.c(3));
  b.op(Op::mul, x0, third);
  auto g2 = nv::generate(make_spec(b.e, {"x"}));
  CHECK(eval_body(g2.source).find("const double t3 = 0x1.5555555555555p-2;") != std::string::npos);
  // The product's only use is the output: computed in double (its operand is not a float).
  CHECK(eval_body(g2.source).find("const double t4 = kq_mul((double)t0, t3);") !=
        std::string::npos);

  Builder nb;  // inf, nan and -0 literals
  int x = nb.in(0);
  int eq = nb.op(Op::eq, x, nb.c(-0.0));
  int inf = nb.c(std::numeric_limits<double>::infinity());
  nb.op(Op::select, eq, inf, nb.c(std::numeric_limits<double>::quiet_NaN()));
  auto g3 = nv::generate(make_spec(nb.e, {"x"}));
  CHECK(g3.source.find("-0x0p+0f") != std::string::npos);
  CHECK(g3.source.find("__int_as_float((int)0x7f800000u)") != std::string::npos);
  CHECK(g3.source.find("__int_as_float((int)0x7fc00000u)") != std::string::npos);
}

TEST_CASE("codegen: transcendentals run in float32; what they feed decides the rest") {
  auto g = nv::generate(gelu_spec());
  CHECK(eval_body(g.source).find("const float t1 = kq_gelu(t0);") != std::string::npos);
  CHECK(g.source.find("__fadd_rn(1.0f, erff(__fmul_rn(a, 0x1.6a09e6p-1f)))") != std::string::npos);
  auto s = nv::generate(silu_mul());
  const std::string body = eval_body(s.source);
  CHECK(body.find("const float t1 = kq_silu(t0);") != std::string::npos);
  // silu(x) * y: both operands are floats and the product is the output: one float rounding.
  CHECK(body.find("const float t3 = kq_mul(t1, t2);") != std::string::npos);

  Builder b;  // exp(x + y): the sum only feeds a transcendental, so it may round to float
  int bx = b.in(0);
  b.op(Op::exp, b.op(Op::add, bx, b.in(1)));
  CHECK(eval_body(nv::generate(make_spec(b.e, {"x", "y"})).source)
            .find("const float t2 = kq_add(t0, t1);") != std::string::npos);
  Builder c;  // (x + y) > z: a comparison needs the exact sum
  int cx = c.in(0);
  int cs = c.op(Op::add, cx, c.in(1));
  c.op(Op::gt, cs, c.in(2));
  const std::string cb = eval_body(nv::generate(make_spec(c.e, {"x", "y", "z"})).source);
  CHECK(cb.find("const double t2 = kq_add((double)t0, (double)t1);") != std::string::npos);
  CHECK(cb.find("const float t4 = (t2 > (double)t3) ? 1.0f : 0.0f;") != std::string::npos);
  Builder d;  // max(x * y, z): max commutes with rounding, so the product may round to float
  int dx = d.in(0);
  int dm = d.op(Op::mul, dx, d.in(1));
  d.op(Op::max, dm, d.in(2));
  CHECK(eval_body(nv::generate(make_spec(d.e, {"x", "y", "z"})).source)
            .find("const float t2 = kq_mul(t0, t1);") != std::string::npos);
}

TEST_CASE("codegen: every op generates, with one temporary per node") {
  for (int o = 0; o <= static_cast<int>(Op::clamp); ++o) {
    for (DType t : {DType::f32, DType::f64}) {
      OpSpec s = single_op(static_cast<Op>(o), t);
      INFO(kq::to_string(static_cast<Op>(o)), " ", kq::to_string(t));
      auto g = nv::generate(s);
      const std::string body = eval_body(g.source);
      CHECK(count(body, "  const ") == static_cast<int>(s.semantics.nodes.size()));
      if (kq::arity(static_cast<Op>(o)) > 0) CHECK(body.find("kq_") != std::string::npos);
    }
  }
}

TEST_CASE("codegen: malformed expressions are refused with a reason") {
  Builder b;
  b.in(0);
  CHECK(nv::check_expr(b.e, 1).empty());
  CHECK(nv::check_expr(b.e, 0) == "no inputs");
  CHECK(nv::check_expr(Expr{}, 1) == "empty expression");
  Builder bad_in;
  bad_in.in(3);
  CHECK(nv::check_expr(bad_in.e, 2).find("input index 3") != std::string::npos);
  Builder fwd;
  fwd.in(0);
  fwd.op(Op::add, 0, 2);
  CHECK(nv::check_expr(fwd.e, 1).find("not an earlier node") != std::string::npos);
  Builder unk;
  unk.in(0);
  unk.op(static_cast<Op>(200), 0);
  CHECK(nv::check_expr(unk.e, 1).find("unknown op") != std::string::npos);
  CHECK(nv::check_expr(b.e, 17).find("at most 16") != std::string::npos);
  OpSpec s = make_spec(fwd.e, {"x"});
  CHECK_THROWS_AS(nv::generate(s), std::invalid_argument);
  CHECK_THROWS_AS(nv::generate(residual_relu(), {100, 4}), std::invalid_argument);
}

// ---- launch planning -------------------------------------------------------------------------

namespace {
TensorView tv(std::uintptr_t addr, std::vector<std::int64_t> shape,
              std::vector<std::int64_t> strides, DType t = DType::f32) {
  TensorView v;
  v.data = reinterpret_cast<void*>(addr);
  v.dtype = t;
  v.device = kq::Device::cuda;
  v.rank = static_cast<int>(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    v.shape[d] = shape[d];
    v.strides[d] = strides[d];
  }
  return v;
}
}  // namespace

TEST_CASE("launch plan: vector, scalar and strided paths") {
  nv::LaunchArgs a;
  const std::uintptr_t A = 0x100000, B = 0x200000, C = 0x300000;
  std::vector<TensorView> in{tv(A, {1000}, {1}), tv(B, {1000}, {1})};
  CHECK(nv::plan_launch(in, tv(C, {1000}, {1}), true, a).empty());
  CHECK(a.path == nv::Path::vector);
  CHECK(a.head == 0);
  CHECK_FALSE(a.alias);
  CHECK(nv::plan_launch(in, tv(C, {1000}, {1}), false, a).empty());
  CHECK(a.path == nv::Path::scalar);

  // Every pointer 4 bytes past a boundary: a 3-element head, then vectors.
  std::vector<TensorView> in4{tv(A + 4, {1000}, {1}), tv(B + 4, {1000}, {1})};
  CHECK(nv::plan_launch(in4, tv(C + 4, {1000}, {1}), true, a).empty());
  CHECK(a.path == nv::Path::vector);
  CHECK(a.head == 3);
  CHECK(nv::plan_launch(in4, tv(C + 4, {2}, {1}), true, a).empty());
  CHECK(a.head == 2);  // never more than n
  // Offsets that differ: scalar.
  CHECK(nv::plan_launch(in4, tv(C + 8, {1000}, {1}), true, a).empty());
  CHECK(a.path == nv::Path::scalar);
  // f64 offset by 8: one element of head.
  std::vector<TensorView> d8{tv(A + 8, {9}, {1}, DType::f64)};
  CHECK(nv::plan_launch(d8, tv(C + 8, {9}, {1}, DType::f64), true, a).empty());
  CHECK(a.head == 1);

  // Dense rank 3 merges into rank 1; extents of 1 with odd strides are ignored.
  std::vector<TensorView> r3{tv(A, {2, 3, 5}, {15, 5, 1})};
  CHECK(nv::plan_launch(r3, tv(C, {2, 3, 5}, {15, 5, 1}), true, a).empty());
  CHECK(a.path == nv::Path::vector);
  std::vector<TensorView> ones{tv(A, {1, 7, 1}, {99, 1, 42})};
  CHECK(nv::plan_launch(ones, tv(C, {1, 7, 1}, {7, 1, 1}), true, a).empty());
  CHECK(a.path == nv::Path::vector);

  // Transposed output: strided, rank 2.
  std::vector<TensorView> m{tv(A, {33, 65}, {65, 1})};
  CHECK(nv::plan_launch(m, tv(C, {33, 65}, {1, 33}), true, a).empty());
  CHECK(a.path == nv::Path::strided);
  CHECK(a.rank == 2);
  CHECK(a.layout.shape[0] == 33);
  CHECK(a.layout.stride[0][0] == 65);
  CHECK(a.layout.stride[1][0] == 1);  // the output is the row after the inputs
  CHECK(a.layout.stride[1][1] == 33);
  // Broadcast input (stride 0) and a reversed one.
  std::vector<TensorView> bc{tv(A, {33, 65}, {0, 1}), tv(B + 4 * 2144, {33, 65}, {65, -1})};
  CHECK(nv::plan_launch(bc, tv(C, {33, 65}, {65, 1}), true, a).empty());
  CHECK(a.path == nv::Path::strided);
  // Strided inner dimension merges with the outer one when the steps line up.
  std::vector<TensorView> s2{tv(A, {4, 8}, {16, 2})};
  CHECK(nv::plan_launch(s2, tv(C, {4, 8}, {8, 1}), true, a).empty());
  CHECK(a.path == nv::Path::strided);
  CHECK(a.rank == 1);
  CHECK(a.layout.stride[0][0] == 2);

  // In place: alias; an output that overlaps itself is refused.
  std::vector<TensorView> x{tv(A, {100}, {1})};
  CHECK(nv::plan_launch(x, tv(A, {100}, {1}), true, a).empty());
  CHECK(a.alias);
  CHECK(a.path == nv::Path::vector);
  CHECK(nv::plan_launch(x, tv(C, {10, 10}, {0, 1}), true, a) == "the output view overlaps itself");
  CHECK(nv::plan_launch(x, tv(C, {10, 10}, {5, 1}), true, a) == "the output view overlaps itself");
  // Nothing to do.
  CHECK(nv::plan_launch(x, tv(C, {0}, {1}), true, a).empty());
  CHECK(a.path == nv::Path::empty);
}

// ---- compile cache -------------------------------------------------------------------------

TEST_CASE("sha256: FIPS 180-4 test vectors") {
  CHECK(kq::plugin::sha256_hex("") ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(kq::plugin::sha256_hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(kq::plugin::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  kq::plugin::Sha256 h;  // fed in uneven pieces
  const std::string a(1000000, 'a');
  for (std::size_t i = 0; i < a.size(); i += 777) h.update(std::string_view(a).substr(i, 777));
  CHECK(h.hex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("cache store: entries round-trip; damaged ones read as corrupt") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kq-nvrtc-cache-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  nv::CacheEntry e{"sm_90", std::string("ptx\0text", 8), std::string(300, '\x7f'), "ptxas log"};
  nv::CacheEntry got;
  CHECK(nv::load_entry(dir.string(), "k1", got) == nv::Load::absent);
  REQUIRE(nv::store_entry(dir.string(), "k1", e).empty());  // creates the folder
  REQUIRE(nv::load_entry(dir.string(), "k1", got) == nv::Load::hit);
  CHECK(got.arch == e.arch);
  CHECK(got.ptx == e.ptx);
  CHECK(got.cubin == e.cubin);
  CHECK(got.ptxas == e.ptxas);
  // No temporary files left behind.
  int files = 0;
  for (auto& f : std::filesystem::directory_iterator(dir)) files += f.is_regular_file();
  CHECK(files == 1);

  const std::string bytes = nv::encode_entry(e);
  CHECK(nv::decode_entry(bytes).has_value());
  CHECK_FALSE(nv::decode_entry(bytes.substr(0, bytes.size() - 1)).has_value());  // truncated
  CHECK_FALSE(nv::decode_entry("").has_value());
  std::string flipped = bytes;
  flipped[20] ^= 1;
  CHECK_FALSE(nv::decode_entry(flipped).has_value());
  { std::ofstream(nv::entry_path(dir.string(), "k1"), std::ios::binary) << flipped; }
  CHECK(nv::load_entry(dir.string(), "k1", got) == nv::Load::corrupt);
  REQUIRE(nv::store_entry(dir.string(), "k1", e).empty());  // rebuilt over it
  CHECK(nv::load_entry(dir.string(), "k1", got) == nv::Load::hit);

  // The folder: KQ_CACHE_DIR first, then XDG_CACHE_HOME, then HOME.
  const char* old = std::getenv("KQ_CACHE_DIR");
  const std::string saved = old ? old : "";
  setenv("KQ_CACHE_DIR", "/tmp/kq-x", 1);
  CHECK(nv::cache_dir() == "/tmp/kq-x");
  unsetenv("KQ_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  CHECK(nv::cache_dir() == "/tmp/xdg/kq/nvrtc");
  unsetenv("XDG_CACHE_HOME");
  if (old) setenv("KQ_CACHE_DIR", saved.c_str(), 1);
  std::filesystem::remove_all(dir);
}

// ---- NVRTC -----------------------------------------------------------------------------------

namespace {

// The few NVRTC entry points, by dlopen: no CUDA headers or libraries at build time.
struct Nvrtc {
  using Program = void*;
  int (*create)(Program*, const char*, const char*, int, const char* const*,
                const char* const*) = nullptr;
  int (*compile)(Program, int, const char* const*) = nullptr;
  int (*log_size)(Program, std::size_t*) = nullptr;
  int (*log)(Program, char*) = nullptr;
  int (*ptx_size)(Program, std::size_t*) = nullptr;
  int (*ptx)(Program, char*) = nullptr;
  int (*destroy)(Program*) = nullptr;
  void* lib = nullptr;
  std::string why;

  Nvrtc() {
    for (const char* name :
         {"libnvrtc.so.13", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so.13"}) {
      lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
    }
    if (!lib) {
      why = dlerror();
      return;
    }
    create = reinterpret_cast<decltype(create)>(dlsym(lib, "nvrtcCreateProgram"));
    compile = reinterpret_cast<decltype(compile)>(dlsym(lib, "nvrtcCompileProgram"));
    log_size = reinterpret_cast<decltype(log_size)>(dlsym(lib, "nvrtcGetProgramLogSize"));
    log = reinterpret_cast<decltype(log)>(dlsym(lib, "nvrtcGetProgramLog"));
    ptx_size = reinterpret_cast<decltype(ptx_size)>(dlsym(lib, "nvrtcGetPTXSize"));
    ptx = reinterpret_cast<decltype(ptx)>(dlsym(lib, "nvrtcGetPTX"));
    destroy = reinterpret_cast<decltype(destroy)>(dlsym(lib, "nvrtcDestroyProgram"));
    if (!create || !compile || !log_size || !log || !ptx_size || !ptx || !destroy) {
      why = "libnvrtc lacks an entry point";
      lib = nullptr;
    }
  }

  struct Out {
    int result = -1;
    std::string log, ptx;
  };
  // The plugin's options (nvrtc_compile.cpp) for an sm_90 device, and the CUDA include folder
  // for a module that includes CUDA headers (cuda_include.hpp).
  Out build(const std::string& src, bool cuda_headers = false) const {
    Out o;
    Program p = nullptr;
    if (create(&p, src.c_str(), "kq_test.cu", 0, nullptr, nullptr) != 0) return o;
    std::string looked;
    const std::string include = "--include-path=" + nv::cuda_include_dir(looked);
    std::vector<const char*> opts{"--gpu-architecture=sm_90",
                                  "-std=c++17",
                                  "-default-device",
                                  "--fmad=false",
                                  "-ftz=false",
                                  "-prec-div=true",
                                  "-prec-sqrt=true",
                                  "-lineinfo",
                                  "--ptxas-options=-v"};
    if (cuda_headers) opts.push_back(include.c_str());
    o.result = compile(p, static_cast<int>(opts.size()), opts.data());
    std::size_t n = 0;
    log_size(p, &n);
    o.log.assign(n, '\0');
    if (n) log(p, o.log.data());
    if (o.result == 0) {
      ptx_size(p, &n);
      o.ptx.assign(n, '\0');
      ptx(p, o.ptx.data());
    }
    destroy(&p);
    return o;
  }
};

const Nvrtc& nvrtc() {
  static Nvrtc n;
  return n;
}

// The generated module compiles; every kernel spills nothing and uses no stack; the vector
// kernels issue 16-byte loads through the non-coherent path.
void compiles_clean(const OpSpec& s) {
  auto g = nv::generate(s);
  auto o = nvrtc().build(g.source, g.cuda_headers);
  INFO(s.semantics.text, " ", kq::to_string(s.dtype), "\nlog:\n", o.log, "\nsource:\n", g.source);
  REQUIRE(o.result == 0);
  CHECK(count(o.log, "Compiling entry function") == 5);
  CHECK(count(o.log, "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads") == 5);
  const char* v = s.dtype == DType::f32 ? "v4.f32" : s.dtype == DType::f64 ? "v2.f64" : "v4.u32";
  CHECK(o.ptx.find(std::string("ld.global.nc.") + v) != std::string::npos);
  CHECK(o.ptx.find(std::string("st.global.") + v) != std::string::npos);
  CHECK(o.ptx.find("ld.local") == std::string::npos);
  CHECK(o.ptx.find("fma.rn") == std::string::npos);  // nothing contracted into an FMA
}

}  // namespace

TEST_CASE("nvrtc: every op compiles for sm_90 in f32 and f64") {
  if (!nvrtc().lib) {
    MESSAGE("skipped: libnvrtc not loadable (", nvrtc().why, ")");
    return;
  }
  for (int o = 0; o <= static_cast<int>(Op::clamp); ++o)
    for (DType t : {DType::f32, DType::f64}) {
      OpSpec s = single_op(static_cast<Op>(o), t);
      // A transcendental's library code may use FMA on purpose; check the others only.
      auto g = nv::generate(s);
      auto out = nvrtc().build(g.source);
      INFO(kq::to_string(static_cast<Op>(o)), " ", kq::to_string(t), "\n", out.log);
      REQUIRE(out.result == 0);
      CHECK(count(out.log, "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads") == 5);
      CHECK(out.ptx.find("ld.local") == std::string::npos);
    }
}

TEST_CASE("nvrtc: the shipped specs' expressions compile clean") {
  if (!nvrtc().lib) {
    MESSAGE("skipped: libnvrtc not loadable (", nvrtc().why, ")");
    return;
  }
  compiles_clean(residual_relu());
  compiles_clean(residual_relu(DType::f64));
  compiles_clean(axpby());
  compiles_clean(leaky_relu());
  compiles_clean(clamp_spec());
  // gelu and silu call erff / expf, whose library code uses FMA deliberately: no FMA check.
  for (const OpSpec& s : {gelu_spec(), silu_mul()}) {
    auto o = nvrtc().build(nv::generate(s).source);
    INFO(s.semantics.text, "\n", o.log);
    REQUIRE(o.result == 0);
    CHECK(count(o.log, "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads") == 5);
    CHECK(o.ptx.find("ld.global.nc.v4.f32") != std::string::npos);
  }
}

TEST_CASE("nvrtc: f16 and bf16 modules compile clean with the CUDA headers") {
  if (!nvrtc().lib) {
    MESSAGE("skipped: libnvrtc not loadable (", nvrtc().why, ")");
    return;
  }
  std::string looked;
  REQUIRE_MESSAGE(!nv::cuda_include_dir(looked).empty(), "no cuda_fp16.h in ", looked);
  for (DType t : {DType::f16, DType::bf16}) {
    compiles_clean(residual_relu(t));
    compiles_clean(in_dtype(axpby(), t));
    compiles_clean(in_dtype(leaky_relu(), t));
    compiles_clean(in_dtype(clamp_spec(), t));
    // The one rounding: cvt.rn from float (or from double, for a double root).
    auto o = nvrtc().build(nv::generate(residual_relu(t)).source, true);
    CHECK(o.ptx.find(t == DType::f16 ? "cvt.rn.f16.f32" : "cvt.rn.bf16.f32") != std::string::npos);
    CHECK(o.ptx.find("cvt.rz") == std::string::npos);
  }
  // The shipped half specs with transcendentals (no FMA check: erff / expf use it on purpose).
  for (const OpSpec& s : {in_dtype(silu_mul(), DType::bf16), in_dtype(gelu_spec(), DType::f16)}) {
    auto o = nvrtc().build(nv::generate(s).source, true);
    INFO(s.semantics.text, "\n", o.log);
    REQUIRE(o.result == 0);
    CHECK(count(o.log, "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads") == 5);
    CHECK(o.ptx.find("ld.global.nc.v4.u32") != std::string::npos);
  }
  // A module that includes the headers does not compile without the folder.
  CHECK(nvrtc().build(nv::generate(residual_relu(DType::f16)).source, false).result != 0);
}
