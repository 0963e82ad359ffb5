// CUDA C++ from a spec's expression: a pure function of (OpSpec, CodegenOptions), so it can be
// tested without a GPU and its output hashed as the compile-cache key.
//
// The generated module is self-contained for f32 and f64 (no #include: NVRTC provides the vector
// types and the math library); an f16 or bf16 module includes cuda_fp16.h or cuda_bf16.h
// (Generated::cuda_headers: the compile needs the CUDA include folder, cuda_include.hpp). It
// holds five extern "C" kernels over the same element function kq_eval:
//   kq_vec, kq_vec_alias        contiguous, 16-byte vectors (float4 / double2 / uint4 of 8
//                               halves), `unroll` vectors
//                               in flight per thread; a scalar head (elements before the first
//                               16-byte boundary, the same for every pointer) and tail
//   kq_scalar, kq_scalar_alias  contiguous, one element at a time, `unroll` in flight
//   kq_strided                  any strides (negative, 0 = broadcast), rank <= 8, 64-bit offsets
// The plain names read through the non-coherent cache (__ldg) with __restrict__ pointers; the
// _alias twins use plain loads and no __restrict__, for an output that is one of the inputs
// (in place), where both would be undefined behaviour.
//
// Precision (what "exactly right" means here: the reference evaluates the expression in float64,
// each node rounded as a double, and rounds once to the output dtype):
//   - f64 specs: every node is a double; + - * / sqrt are the _rn intrinsics (no FMA contraction);
//     sigmoid, silu and gelu follow the reference's formulas operation by operation.
//   - f32 specs: every node that is not a transcendental function is computed so that it equals
//     the reference's double bit for bit before the final rounding: in double where needed
//     (__dadd_rn etc., constants kept as doubles), or in float where that provably gives the same
//     final float: a + - * / sqrt whose operands are exact floats and whose result reaches the
//     output only through ops that commute with rounding (neg, abs, relu, max, min, clamp, the
//     branches of select, a transcendental's argument) is computed with __fadd_rn etc.: rounding
//     the exact result once to float equals rounding its double rounding to float (53 >= 2*24+2).
//     So relu(x + r), clamp, select, 2.5 * x - 0.75 * y and 0.01 * x match the reference bit for
//     bit, overflow included (2.5 * x may exceed FLT_MAX while 2.5 * x - 0.75 * y does not).
//     A plain float32 rendering (constants rounded to float, each node rounded to float) fails
//     axpby's "overflow" qualification cases (inf where the reference is finite) and is 1 ulp
//     off on leaky_relu; the double nodes cost nothing measurable in these memory-bound kernels.
//     Transcendentals (exp, log, tanh, erf, sigmoid, silu, gelu) are computed in float32 by the
//     CUDA math library (a few ulp), on their argument rounded to float: float speed where it
//     matters; their results, overflow included, are float32's.
//   - f16 and bf16 specs (compute f32, the contract: load half, compute in float32, round once):
//     each input widened exactly to float, the expression planned and computed as for f32, and
//     the root rounded once to the half type from the float or double it was computed in
//     (__float2half_rn / __double2half; bf16 alike), never through float from a double. A float
//     node of the f32 plan is one correctly rounded + - * / sqrt of exact operands whose result
//     reaches the output through exact ops: rounding it to float and then to half equals
//     rounding the exact value to half (24 >= 2 * 11 + 2 bits), so relu(x + r) matches the
//     reference bit for bit; transcendentals are float32's, as the contract's compute says.
//   - Constant-only subexpressions are folded on the host in float64 by the reference's own
//     evaluation (kq/expr_fold.hpp), then kept exact (double) or as a float when the value is
//     exactly one.
#pragma once
#include <cstdint>
#include <string>

#include "kq/op_spec.hpp"
#include "kq/tensor.hpp"

namespace kq::nvrtc {

inline constexpr const char* kVecKernel = "kq_vec";
inline constexpr const char* kVecAliasKernel = "kq_vec_alias";
inline constexpr const char* kScalarKernel = "kq_scalar";
inline constexpr const char* kScalarAliasKernel = "kq_scalar_alias";
inline constexpr const char* kStridedKernel = "kq_strided";

inline constexpr int kMaxInputs = 16;
inline constexpr int kMaxTensors = kMaxInputs + 1;  // the output is the last row of strides

// kq_strided's by-value parameter. The generated struct has the same layout with
// (inputs + 1) rows of strides, a prefix of this one: the driver copies only that many bytes.
struct StridedLayout {
  std::int64_t shape[kMaxRank];
  std::int64_t stride[kMaxTensors][kMaxRank];  // [input..., output][dim], in elements
};

struct CodegenOptions {
  int block = 256;  // threads per block; the kernels' __launch_bounds__
  // Vectors (or elements) each thread loads before it computes and stores. On an H200, 4 was
  // within 1% of 1 and 2 for relu(x + r) and silu(x) * y at 2^28 and 10-15% faster for gelu.
  int unroll = 4;
  int min_blocks = 1;  // __launch_bounds__'s second argument: resident blocks per SM asked for
};

struct Generated {
  std::string source;         // the .cu text
  int vec_width = 4;          // elements per 16-byte vector: 4 (f32), 2 (f64) or 8 (f16, bf16)
  bool cuda_headers = false;  // includes cuda_fp16.h / cuda_bf16.h (f16, bf16)
  int num_inputs = 0;
  int block = 256;
  int unroll = 4;
  std::string plan;   // how each node is computed (float or double), one line per node
  bool rows = false;  // a row module (row_codegen.hpp): one kernel, kq_rows
};

// Empty when there are 1 to kMaxInputs inputs and `e` is well-formed over them
// (kq::expr_problem, kq/expr_checks.hpp); otherwise the reason.
std::string check_expr(const Expr& e, std::size_t num_inputs);

// Empty when the spec's dtype is one the generator handles (f32, f64; f16 and bf16 computed in
// f32); otherwise the reason.
std::string check_dtype(const OpSpec& spec);

// The module for `spec` (check_dtype). Throws std::invalid_argument when check_expr fails
// or an option is out of range (block not a multiple of 32 in [32, 1024], unroll not in [1, 16],
// min_blocks not in [1, 32]).
Generated generate(const OpSpec& spec, const CodegenOptions& options = {});

// Shared with the row generator (row_codegen.hpp): the device helpers every module starts with
// (kq_i64, kq_max / kq_min propagating NaN, the _rn arithmetic, the transcendentals), and an
// exact, locale-independent literal (a hex float, or a bit cast for inf and NaN).
std::string device_helper_library();
std::string exact_literal(double v, bool as_float);

}  // namespace kq::nvrtc
