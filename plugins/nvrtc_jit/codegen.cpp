#include "codegen.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <vector>

#include "kq/expr_checks.hpp"
#include "kq/expr_fold.hpp"
#include "kq/expr_live.hpp"

namespace kq::nvrtc {
namespace {

enum class Kind { leaf, rounding, exact, compare, transcendental };

Kind kind_of(Op op) {
  switch (op) {
    case Op::constant:
    case Op::input:
      return Kind::leaf;
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::div:
    case Op::sqrt:
      return Kind::rounding;
    case Op::neg:
    case Op::abs:
    case Op::relu:
    case Op::max:
    case Op::min:
    case Op::select:
    case Op::clamp:
      return Kind::exact;
    case Op::lt:
    case Op::le:
    case Op::gt:
    case Op::ge:
    case Op::eq:
    case Op::ne:
      return Kind::compare;
    case Op::exp:
    case Op::log:
    case Op::tanh:
    case Op::sigmoid:
    case Op::erf:
    case Op::gelu:
    case Op::silu:
      return Kind::transcendental;
  }
  return Kind::leaf;
}

// Exact, locale-independent literals: hex floats for finite values, bit casts for inf and NaN.
std::string literal(double v, bool as_float) {
  char buf[64];
  if (!std::isfinite(v)) {
    if (as_float) {
      float f = static_cast<float>(v);
      std::uint32_t bits;
      std::memcpy(&bits, &f, 4);
      std::snprintf(buf, sizeof buf, "__int_as_float((int)0x%08xu)", bits);
    } else {
      std::uint64_t bits;
      std::memcpy(&bits, &v, 8);
      std::snprintf(buf, sizeof buf, "__longlong_as_double((long long)0x%016llxull)",
                    static_cast<unsigned long long>(bits));
    }
    return buf;
  }
  std::string s = std::signbit(v) ? "-0x" : "0x";
  const double m = std::fabs(v);
  auto r = as_float
               ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(m), std::chars_format::hex)
               : std::to_chars(buf, buf + sizeof buf, m, std::chars_format::hex);
  s.append(buf, r.ptr);
  if (as_float) s += 'f';
  return s;
}

std::string decimal(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

const char* helper_library() {
  return R"(typedef long long kq_i64;

// relu(x) = x > 0 ? x : +0 with NaN propagating: (x <= 0) is false for NaN, which returns
// itself, and true for -0, which gives +0. (fmaxf would swallow NaN.)
__device__ __forceinline__ float kq_relu(float a) { return a <= 0.0f ? 0.0f : a; }
__device__ __forceinline__ double kq_relu(double a) { return a <= 0.0 ? 0.0 : a; }
__device__ __forceinline__ bool kq_signbit(float a) { return __float_as_int(a) < 0; }
__device__ __forceinline__ bool kq_signbit(double a) { return __double_as_longlong(a) < 0; }
// max/min propagate NaN (the first NaN operand wins) and order the zeros: max(-0, +0) = +0,
// min(-0, +0) = -0, in either order.
template <typename T>
__device__ __forceinline__ T kq_max(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return kq_signbit(a) ? b : a;
  return a > b ? a : b;
}
template <typename T>
__device__ __forceinline__ T kq_min(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return kq_signbit(a) ? a : b;
  return a < b ? a : b;
}
template <typename T>
__device__ __forceinline__ T kq_clamp(T x, T lo, T hi) { return kq_min(kq_max(x, lo), hi); }

// One IEEE rounding each, never contracted into an FMA.
__device__ __forceinline__ float kq_add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float kq_sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float kq_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float kq_div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ float kq_sqrt(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double kq_add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double kq_sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double kq_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double kq_div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ double kq_sqrt(double a) { return __dsqrt_rn(a); }
__device__ __forceinline__ float kq_abs(float a) { return fabsf(a); }
__device__ __forceinline__ double kq_abs(double a) { return fabs(a); }

// Transcendentals, float32: the CUDA math library (no fast-math intrinsics).
__device__ __forceinline__ float kq_exp(float a) { return expf(a); }
__device__ __forceinline__ float kq_log(float a) { return logf(a); }
__device__ __forceinline__ float kq_tanh(float a) { return tanhf(a); }
__device__ __forceinline__ float kq_erf(float a) { return erff(a); }
// The stable logistic, e = exp(-|x|) in (0, 1]: 1 / (1 + exp(-x)) overflows expf below x = -88.7
// and gives 0 where the value is still a float32 (and bf16) subnormal or normal number.
__device__ __forceinline__ float kq_sigmoid(float a) {
  const float e = expf(-fabsf(a));
  return __fdiv_rn(a >= 0.0f ? 1.0f : e, __fadd_rn(1.0f, e));
}
// x * sigmoid(x): x / (1 + e) for x >= 0 (one rounding fewer), x * e / (1 + e) below.
__device__ __forceinline__ float kq_silu(float a) {
  const float e = expf(-fabsf(a));
  return __fdiv_rn(a >= 0.0f ? a : __fmul_rn(a, e), __fadd_rn(1.0f, e));
}
// 0.5 x (1 + erf(x / sqrt 2)), the erf form frameworks compile. 1 + erff cancels for x < 0
// (an absolute error of about |x| * 6e-8 there); 0.5 x erfc(-x / sqrt 2) avoids that but ran
// 20% slower on an H200 (615 against 513 us at 2^28: erfcf makes gelu compute-bound), and
// the spec's tolerance is set for the erf form. 0.5 * x first: exact bar subnormals, no overflow.
__device__ __forceinline__ float kq_gelu(float a) {
  return __fmul_rn(__fmul_rn(0.5f, a), __fadd_rn(1.0f, erff(__fmul_rn(a, 0x1.6a09e6p-1f))));
}

// Transcendentals, float64: the reference's formulas operation by operation.
__device__ __forceinline__ double kq_exp(double a) { return exp(a); }
__device__ __forceinline__ double kq_log(double a) { return log(a); }
__device__ __forceinline__ double kq_tanh(double a) { return tanh(a); }
__device__ __forceinline__ double kq_erf(double a) { return erf(a); }
__device__ __forceinline__ double kq_sigmoid(double a) {
  return __ddiv_rn(1.0, __dadd_rn(1.0, exp(-a)));
}
__device__ __forceinline__ double kq_silu(double a) { return __dmul_rn(a, kq_sigmoid(a)); }
__device__ __forceinline__ double kq_gelu(double a) {
  return __dmul_rn(__dmul_rn(0.5, a), __dadd_rn(1.0, erf(__ddiv_rn(a, 0x1.6a09e667f3bcdp+0))));
}
)";
}

// The element type of an f16 / bf16 module and its conversions: widened to float exactly, stored
// rounded once to nearest even, from float (__float2half_rn) or straight from double
// (__double2half: never through float, which would round twice); and the bits of a pair in one
// 32-bit word of a uint4 vector (low half first).
std::string half_library(DType t) {
  const bool f16 = t == DType::f16;
  const std::string H = f16 ? "__half" : "__nv_bfloat16";
  const std::string B = f16 ? "half" : "bfloat16";
  return std::string("#include <") + (f16 ? "cuda_fp16.h" : "cuda_bf16.h") + ">\n" + "typedef " +
         H +
         " kq_half;\n"
         "__device__ __forceinline__ float kq_widen(kq_half v) { return __" +
         B +
         "2float(v); }\n"
         "__device__ __forceinline__ kq_half kq_narrow(float v) { return __float2" +
         B +
         "_rn(v); }\n"
         "__device__ __forceinline__ kq_half kq_narrow(double v) { return __double2" +
         B +
         "(v); }\n"
         "__device__ __forceinline__ kq_half kq_lo(unsigned w) { return __ushort_as_" +
         B +
         "((unsigned short)(w & 0xffffu)); }\n"
         "__device__ __forceinline__ kq_half kq_hi(unsigned w) { return __ushort_as_" +
         B +
         "((unsigned short)(w >> 16)); }\n"
         "__device__ __forceinline__ unsigned kq_pack(kq_half lo, kq_half hi) {\n"
         "  return (unsigned)__" +
         B + "_as_ushort(lo) | ((unsigned)__" + B + "_as_ushort(hi) << 16);\n}\n\n";
}

struct Node {
  bool live = false;
  bool folded = false;  // constant-only: `value` holds the reference's float64 value
  double value = 0.0;
  bool insensitive = true;  // every use commutes with rounding to float (see codegen.hpp)
  bool is_double = false;   // the temporary's type (always double for f64 specs)
  bool emitted = false;
};

class Writer {
 public:
  Writer(const OpSpec& spec, const CodegenOptions& opt) : spec_(spec), opt_(opt) {
    f64_ = spec.dtype == DType::f64;
    half_ = is_half(spec.dtype);
    T_ = f64_ ? "double" : half_ ? "kq_half" : "float";  // the element type in memory
    V_ = f64_ ? "double2" : half_ ? "uint4" : "float4";
    W_ = f64_ ? 2 : half_ ? 8 : 4;
    ni_ = static_cast<int>(spec.inputs.size());
  }

  Generated run() {
    analyse();
    Generated g;
    g.vec_width = W_;
    g.cuda_headers = half_;
    g.num_inputs = ni_;
    g.block = opt_.block;
    g.unroll = opt_.unroll;
    std::string& s = g.source;
    s += "// Generated by kq nvrtc_jit (codegen v1). Do not edit.\n";
    s += "// op " + one_line(spec_.op) + ", dtype " + std::string(to_string(spec_.dtype)) + "\n";
    s += "// semantics: " + one_line(spec_.semantics.text) + "\n// inputs:";
    for (int i = 0; i < ni_; ++i) s += " in" + std::to_string(i) + "=" + one_line(spec_.inputs[i]);
    s += "\n\n";
    if (half_) s += half_library(spec_.dtype);
    s += helper_library();
    s += "\n";
    s += eval_function(g.plan);
    s += vec_eval_function();
    s += vec_kernel(kVecKernel, true);
    s += vec_kernel(kVecAliasKernel, false);
    s += scalar_kernel(kScalarKernel, true);
    s += scalar_kernel(kScalarAliasKernel, false);
    s += strided_kernel();
    return g;
  }

 private:
  static std::string one_line(const std::string& text) {
    std::string r;
    for (char c : text) r += (c == '\n' || c == '\r') ? ' ' : c;
    return r;
  }

  void analyse() {
    const auto& nodes = spec_.semantics.nodes;
    const int n = static_cast<int>(nodes.size());
    // Live nodes, and constant-only subexpressions folded with the reference's float64 formulas.
    const std::vector<bool> live = live_nodes(spec_.semantics);
    const std::vector<std::optional<double>> folded = fold_constants(spec_.semantics);
    info_.assign(static_cast<std::size_t>(n), Node{});
    for (int i = 0; i < n; ++i) {
      info_[i].live = live[i];
      info_[i].folded = folded[i].has_value();
      info_[i].value = folded[i].value_or(0.0);
    }
    // Uses that need the exact double value: arithmetic, comparisons, select's condition.
    // Consumers come after their operands, so walking backwards finalises each consumer first.
    for (int c = n - 1; c >= 0; --c) {
      if (!info_[c].live || info_[c].folded) continue;
      const ExprNode& e = nodes[c];
      for (int k = 0; k < arity(e.op); ++k) {
        bool ok = false;
        switch (kind_of(e.op)) {
          case Kind::transcendental:
            ok = true;
            break;
          case Kind::exact:
            ok = !(e.op == Op::select && k == 0) && info_[c].insensitive;
            break;
          default:
            ok = false;
            break;
        }
        info_[e.args[k]].insensitive = info_[e.args[k]].insensitive && ok;
      }
    }
    // Types.
    for (int i = 0; i < n; ++i) {
      Node& d = info_[i];
      const ExprNode& e = nodes[i];
      if (f64_) {
        d.is_double = true;
        continue;
      }
      if (d.folded) {
        d.is_double =
            !std::isnan(d.value) && static_cast<double>(static_cast<float>(d.value)) != d.value;
        continue;
      }
      bool any_double = false;
      for (int k = 0; k < arity(e.op); ++k)
        if (!(e.op == Op::select && k == 0)) any_double = any_double || info_[e.args[k]].is_double;
      switch (kind_of(e.op)) {
        case Kind::leaf:
          d.is_double = false;
          break;  // an input
        case Kind::rounding:
          d.is_double = any_double || !d.insensitive;
          break;
        case Kind::exact:
          d.is_double = any_double;
          break;
        case Kind::compare:
          d.is_double = false;
          break;  // 0 or 1
        case Kind::transcendental:
          d.is_double = false;
          break;
      }
    }
  }

  std::string tname(int i) const { return "t" + std::to_string(i); }
  const char* type_of(int i) const { return info_[i].is_double ? "double" : "float"; }

  // Operand `a` as a value of the wanted type.
  std::string operand(int a, bool want_double) const {
    if (info_[a].is_double == want_double) return tname(a);
    return want_double ? "(double)" + tname(a) : "__double2float_rn(" + tname(a) + ")";
  }

  std::string eval_function(std::string& plan) {
    const auto& nodes = spec_.semantics.nodes;
    const int n = static_cast<int>(nodes.size());
    std::string s = "// The expression for one element, one SSA temporary per node.\n";
    s += "__device__ __forceinline__ " + T_ + " kq_eval(";
    for (int i = 0; i < ni_; ++i) s += (i ? ", " : "") + T_ + " in" + std::to_string(i);
    s += ") {\n";
    for (int i = 0; i < n; ++i) {
      const Node& d = info_[i];
      const ExprNode& e = nodes[i];
      if (!d.live) continue;
      // A folded node is emitted only where something computed uses it (or it is the root).
      if (d.folded) {
        bool used = i == n - 1;
        for (int c = i + 1; c < n && !used; ++c)
          if (info_[c].live && !info_[c].folded)
            for (int k = 0; k < arity(nodes[c].op); ++k) used = used || nodes[c].args[k] == i;
        if (!used) continue;
      }
      const bool dbl = d.is_double;
      std::string rhs, what;
      if (d.folded) {
        rhs = literal(d.value, !dbl);
        what = e.op == Op::constant
                   ? "constant " + decimal(d.value)
                   : "folded " + std::string(to_string(e.op)) + " = " + decimal(d.value);
      } else if (e.op == Op::input) {
        rhs = "in" + std::to_string(e.input);
        if (half_) rhs = "kq_widen(" + rhs + ")";
        what = "input " + one_line(spec_.inputs[static_cast<std::size_t>(e.input)]);
      } else {
        what = std::string(to_string(e.op));
        const int a = e.args[0], b = e.args[1], c = e.args[2];
        switch (kind_of(e.op)) {
          case Kind::rounding:
            if (e.op == Op::sqrt)
              rhs = "kq_sqrt(" + operand(a, dbl) + ")";
            else
              rhs = "kq_" + what + "(" + operand(a, dbl) + ", " + operand(b, dbl) + ")";
            break;
          case Kind::transcendental:
            rhs = "kq_" + what + "(" + operand(a, dbl) + ")";
            break;
          case Kind::compare: {
            const bool cd = info_[a].is_double || info_[b].is_double;
            static const char* sym[] = {"<", "<=", ">", ">=", "==", "!="};
            const char* op = sym[static_cast<int>(e.op) - static_cast<int>(Op::lt)];
            rhs = "(" + operand(a, cd) + " " + op + " " + operand(b, cd) + ") ? " +
                  (dbl ? "1.0 : 0.0" : "1.0f : 0.0f");
            break;
          }
          case Kind::exact:
            switch (e.op) {
              case Op::neg:
                rhs = "-" + operand(a, dbl);
                break;
              case Op::abs:
                rhs = "kq_abs(" + operand(a, dbl) + ")";
                break;
              case Op::relu:
                rhs = "kq_relu(" + operand(a, dbl) + ")";
                break;
              case Op::max:
              case Op::min:
                rhs = "kq_" + what + "(" + operand(a, dbl) + ", " + operand(b, dbl) + ")";
                break;
              case Op::clamp:
                rhs = "kq_clamp(" + operand(a, dbl) + ", " + operand(b, dbl) + ", " +
                      operand(c, dbl) + ")";
                break;
              default: {  // select: a NaN condition is != 0, so it selects the first branch
                const std::string zero = info_[a].is_double ? "0.0" : "0.0f";
                rhs = "(" + tname(a) + " != " + zero + ") ? " + operand(b, dbl) + " : " +
                      operand(c, dbl);
                break;
              }
            }
            break;
          case Kind::leaf:
            break;
        }
      }
      s += "  const " + std::string(type_of(i)) + " " + tname(i) + " = " + rhs + ";  // " + what +
           "\n";
      plan += tname(i) + " " + what + ": " + type_of(i) + "\n";
    }
    const int root = n - 1;
    // Half: the root's float or double rounded once to the element type (kq_narrow).
    const std::string ret = f64_    ? tname(root)
                            : half_ ? "kq_narrow(" + tname(root) + ")"
                                    : operand(root, false);
    s += "  return " + ret + ";\n}\n\n";
    plan +=
        "result: " +
        (half_ ? "rounded once to " + std::string(to_string(spec_.dtype)) + " from " + type_of(root)
               : std::string(f64_ || !info_[root].is_double ? "stored as is"
                                                            : "rounded once to float")) +
        "\n";
    return s;
  }

  // Half: one 32-bit word of each input's uint4, a pair of elements, computed one by one.
  std::string pair_eval_function() const {
    std::string s = "__device__ __forceinline__ unsigned kq_eval2(";
    for (int i = 0; i < ni_; ++i)
      s += (i ? ", " : "") + std::string("unsigned in") + std::to_string(i);
    s += ") {\n  return kq_pack(kq_eval(";
    for (int i = 0; i < ni_; ++i)
      s += (i ? ", " : "") + std::string("kq_lo(in") + std::to_string(i) + ")";
    s += "), kq_eval(";
    for (int i = 0; i < ni_; ++i)
      s += (i ? ", " : "") + std::string("kq_hi(in") + std::to_string(i) + ")";
    s += "));\n}\n\n";
    return s;
  }

  std::string vec_eval_function() const {
    std::string s = half_ ? pair_eval_function() : std::string();
    s += "__device__ __forceinline__ " + V_ + " kq_evalv(";
    for (int i = 0; i < ni_; ++i) s += (i ? ", " : "") + V_ + " in" + std::to_string(i);
    s += ") {\n  " + V_ + " r;\n";
    const char* lanes[] = {"x", "y", "z", "w"};
    for (int l = 0; l < (half_ ? 4 : W_); ++l) {
      s += std::string("  r.") + lanes[l] + (half_ ? " = kq_eval2(" : " = kq_eval(");
      for (int i = 0; i < ni_; ++i)
        s += (i ? ", " : "") + std::string("in") + std::to_string(i) + "." + lanes[l];
      s += ");\n";
    }
    s += "  return r;\n}\n\n";
    return s;
  }

  std::string params(bool restrict_) const {
    const std::string q = restrict_ ? " __restrict__" : "";
    std::string s;
    for (int i = 0; i < ni_; ++i) s += "const " + T_ + "*" + q + " in" + std::to_string(i) + ", ";
    s += T_ + "*" + q + " out, kq_i64 n";
    return s;
  }

  std::string args(const std::string& prefix, const std::string& index, bool nc) const {
    std::string s;
    for (int i = 0; i < ni_; ++i) {
      std::string p = prefix + std::to_string(i) + " + " + index;
      s += (i ? ", " : "") + (nc ? "__ldg(" + p + ")" : "*(" + p + ")");
    }
    return s;
  }

  std::string head(const char* name, const std::string& params) const {
    // (block, min_blocks): with min_blocks 1 no register cap below the hardware's; (block)
    // alone made ptxas aim at 48 registers and spill in the unrolled vector loops.
    return "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(opt_.block) + ", " +
           std::to_string(opt_.min_blocks) + ") " + name + "(" + params + ") {\n" +
           "  const kq_i64 tid = (kq_i64)blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  const kq_i64 nthreads = (kq_i64)gridDim.x * blockDim.x;\n";
  }

  std::string vec_kernel(const char* name, bool nc) const {
    const std::string U = std::to_string(opt_.unroll), W = std::to_string(W_);
    std::string s =
        "// Contiguous, 16-byte vectors. head = elements before the first 16-byte "
        "boundary (the same\n// for every pointer; the host checks); head and tail "
        "elements are done one by one.\n";
    s += head(name, params(nc) + ", kq_i64 head");
    s += "  if (tid < head) out[tid] = kq_eval(" + args("in", "tid", nc) + ");\n";
    s += "  const kq_i64 nvec = (n - head) / " + W + ";\n";
    const std::string q = nc ? " __restrict__" : "";
    for (int i = 0; i < ni_; ++i) {
      const std::string k = std::to_string(i);
      s += "  const " + V_ + "*" + q + " v" + k + " = reinterpret_cast<const " + V_ + "*>(in" + k +
           " + head);\n";
    }
    s += "  " + V_ + "*" + q + " vo = reinterpret_cast<" + V_ + "*>(out + head);\n";
    s += "  kq_i64 i = tid;\n";
    s += "  for (; i + " + U + " * nthreads - nthreads < nvec; i += " + U + " * nthreads) {\n";
    for (int i = 0; i < ni_; ++i) s += "    " + V_ + " a" + std::to_string(i) + "[" + U + "];\n";
    s += "#pragma unroll\n    for (int u = 0; u < " + U + "; ++u) {\n";
    for (int i = 0; i < ni_; ++i) {
      const std::string k = std::to_string(i);
      const std::string p = "v" + k + " + i + u * nthreads";
      s += "      a" + k + "[u] = " + (nc ? "__ldg(" + p + ")" : "*(" + p + ")") + ";\n";
    }
    s += "    }\n#pragma unroll\n    for (int u = 0; u < " + U +
         "; ++u) vo[i + u * nthreads] = kq_evalv(";
    for (int i = 0; i < ni_; ++i)
      s += (i ? ", " : "") + std::string("a") + std::to_string(i) + "[u]";
    s += ");\n  }\n";
    s += "  for (; i < nvec; i += nthreads) vo[i] = kq_evalv(" + args("v", "i", nc) + ");\n";
    s += "  const kq_i64 j = head + nvec * " + W + " + tid;\n";
    s += "  if (j < n) out[j] = kq_eval(" + args("in", "j", nc) + ");\n}\n\n";
    return s;
  }

  std::string scalar_kernel(const char* name, bool nc) const {
    const std::string U = std::to_string(opt_.unroll);
    std::string s = "// Contiguous, one element at a time (any alignment).\n";
    s += head(name, params(nc));
    s += "  kq_i64 i = tid;\n";
    s += "  for (; i + " + U + " * nthreads - nthreads < n; i += " + U + " * nthreads) {\n";
    for (int i = 0; i < ni_; ++i) s += "    " + T_ + " a" + std::to_string(i) + "[" + U + "];\n";
    s += "#pragma unroll\n    for (int u = 0; u < " + U + "; ++u) {\n";
    for (int i = 0; i < ni_; ++i) {
      const std::string k = std::to_string(i);
      const std::string p = "in" + k + " + i + u * nthreads";
      s += "      a" + k + "[u] = " + (nc ? "__ldg(" + p + ")" : "*(" + p + ")") + ";\n";
    }
    s += "    }\n#pragma unroll\n    for (int u = 0; u < " + U +
         "; ++u) out[i + u * nthreads] = kq_eval(";
    for (int i = 0; i < ni_; ++i)
      s += (i ? ", " : "") + std::string("a") + std::to_string(i) + "[u]";
    s += ");\n  }\n";
    s += "  for (; i < n; i += nthreads) out[i] = kq_eval(" + args("in", "i", nc) + ");\n}\n\n";
    return s;
  }

  std::string strided_kernel() const {
    const std::string NT = std::to_string(ni_ + 1), R = std::to_string(kMaxRank);
    std::string s = "// Any strides (in elements; negative, or 0 for broadcast), rank <= " + R +
                    ", dimension 0 outermost.\n// Rows 0.." + std::to_string(ni_ - 1) +
                    " of stride are the inputs, row " + std::to_string(ni_) +
                    " the output. Plain loads: the output may be an input.\n";
    s += "struct kq_layout {\n  kq_i64 shape[" + R + "];\n  kq_i64 stride[" + NT + "][" + R +
         "];\n};\n";
    s += head(kStridedKernel, params(false) + ", int rank, kq_layout L");
    s += "  for (kq_i64 i = tid; i < n; i += nthreads) {\n    kq_i64 rem = i;\n";
    for (int t = 0; t <= ni_; ++t) s += "    kq_i64 o" + std::to_string(t) + " = 0;\n";
    s += "    for (int d = rank - 1; d > 0; --d) {\n";
    s += "      const kq_i64 q = rem / L.shape[d];\n      const kq_i64 c = rem - q * L.shape[d];\n";
    s += "      rem = q;\n";
    for (int t = 0; t <= ni_; ++t) {
      const std::string k = std::to_string(t);
      s += "      o" + k + " += c * L.stride[" + k + "][d];\n";
    }
    s += "    }\n";
    for (int t = 0; t <= ni_; ++t) {
      const std::string k = std::to_string(t);
      s += "    o" + k + " += rem * L.stride[" + k + "][0];\n";
    }
    s += "    out[o" + std::to_string(ni_) + "] = kq_eval(";
    for (int i = 0; i < ni_; ++i)
      s += (i ? ", " : "") + std::string("in") + std::to_string(i) + "[o" + std::to_string(i) + "]";
    s += ");\n  }\n}\n";
    return s;
  }

  const OpSpec& spec_;
  CodegenOptions opt_;
  bool f64_ = false;
  bool half_ = false;  // f16 / bf16: elements widened to float, the f32 plan, rounded once
  std::string T_, V_;
  int W_ = 4;
  int ni_ = 0;
  std::vector<Node> info_;
};

}  // namespace

std::string check_expr(const Expr& e, std::size_t num_inputs) {
  if (num_inputs == 0) return "no inputs";
  if (num_inputs > static_cast<std::size_t>(kMaxInputs))
    return std::to_string(num_inputs) + " inputs, at most " + std::to_string(kMaxInputs) +
           " are supported";
  return expr_problem(e, num_inputs);
}

std::string check_dtype(const OpSpec& spec) {
  if (spec.dtype == DType::f32 || spec.dtype == DType::f64) return {};
  if (!is_half(spec.dtype)) return "dtype must be f32, f64, f16 or bf16";
  if (spec.compute != DType::f32)
    return "dtype " + std::string(to_string(spec.dtype)) + " computed in " +
           std::string(to_string(spec.compute)) + ": half is computed in float32 only";
  return {};
}

std::string device_helper_library() { return helper_library(); }

std::string exact_literal(double v, bool as_float) { return literal(v, as_float); }

Generated generate(const OpSpec& spec, const CodegenOptions& options) {
  if (std::string why = check_dtype(spec); !why.empty()) throw std::invalid_argument(why);
  std::string why = check_expr(spec.semantics, spec.inputs.size());
  if (!why.empty()) throw std::invalid_argument(why);
  if (options.block < 32 || options.block > 1024 || options.block % 32 != 0)
    throw std::invalid_argument("block must be a multiple of 32 in [32, 1024]");
  if (options.unroll < 1 || options.unroll > 16)
    throw std::invalid_argument("unroll must be in [1, 16]");
  if (options.min_blocks < 1 || options.min_blocks > 32)
    throw std::invalid_argument("min_blocks must be in [1, 32]");
  return Writer(spec, options).run();
}

}  // namespace kq::nvrtc
