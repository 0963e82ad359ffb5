// nvrtc_jit's row kernels without a GPU: which shipped format-2 specs lower and why the others
// do not (lower_rows), the generated source (one kernel, reductions, inlined row temporaries,
// 64-bit offsets), the layout the host fills from views, and a real NVRTC compile of every
// lowered spec for sm_90 (NVRTC needs no GPU; it is reached through dlopen so that this test
// links nothing of CUDA).
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

// The plugin's pure parts, compiled into this test (plugins are not libraries to link against).
#include "../../plugins/nvrtc_jit/codegen.cpp"
#include "../../plugins/nvrtc_jit/cuda_include.cpp"
#include "../../plugins/nvrtc_jit/row_codegen.cpp"
#include "../../plugins/nvrtc_jit/row_launch.cpp"
#include "../../plugins/nvrtc_jit/row_lower.cpp"
#include "spec/spec.hpp"

namespace {

namespace fs = std::filesystem;
namespace nv = kq::nvrtc;

const fs::path kRoot = KQ_SOURCE_DIR;

// Every shipped format-2 spec (specs/, specs/kernelbench/, tests/data/specs_v2/), by path
// relative to the source tree.
std::vector<std::string> shipped_shaped_specs() {
  std::vector<std::string> out;
  for (const char* dir : {"specs", "specs/kernelbench", "specs/gemm", "tests/data/specs_v2"})
    for (const auto& e : fs::directory_iterator(kRoot / dir)) {
      if (e.path().extension() != ".yaml") continue;
      const kq::Spec s = kq::load_spec(e.path());
      if (s.op.program) out.push_back(fs::relative(e.path(), kRoot).string());
    }
  std::sort(out.begin(), out.end());
  return out;
}

kq::OpSpec load(const std::string& rel) { return kq::load_spec(kRoot / rel).op; }

// A minimal format-2 spec around `semantics`.
kq::OpSpec shaped(const std::string& decls, const std::string& semantics,
                  const std::string& compare = "{y: {rtol: 1e-5}}",
                  const std::string& point = "{M: 4, N: 8}") {
  const std::string text = "kq_spec: 2\nop: t\n" + decls + "semantics: |\n  " + semantics +
                           "\ncompare: " + compare + "\ntiming: {points: [" + point +
                           "]}\ndecision: {baseline: cpu_tbb}\n";
  return kq::parse_spec(text, "test.yaml").op;
}

// A CUDA view of `shape` and `strides` at a made-up address: plan_rows reads shapes and strides
// alone.
kq::TensorView view(std::vector<std::int64_t> shape, std::vector<std::int64_t> strides,
                    kq::DType dtype = kq::DType::f32) {
  kq::TensorView v;
  v.data = reinterpret_cast<void*>(std::uintptr_t{0x10000});
  v.dtype = dtype;
  v.device = kq::Device::cuda;
  v.rank = static_cast<int>(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) {
    v.shape[i] = shape[i];
    v.strides[i] = strides[i];
  }
  return v;
}

std::string why_not(const kq::OpSpec& s) {
  nv::RowPlan plan;
  return nv::lower_rows(s, plan);
}

// The NVRTC entry points, by dlopen.
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
  // The plugin's options (nvrtc_compile.cpp) for an sm_90 device.
  Out build(const std::string& src, bool cuda_headers) const {
    Out o;
    Program p = nullptr;
    if (create(&p, src.c_str(), "kq_rows_test.cu", 0, nullptr, nullptr) != 0) return o;
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

}  // namespace

// The table in docs/nvrtc-jit.md: every shipped format-2 spec, lowered or declined for a reason.
TEST_CASE("nvrtc rows: the shipped format-2 specs lower or decline with a reason") {
  const std::map<std::string, std::string> expected = {
      {"specs/layer_norm_bf16.yaml", ""},
      {"specs/rms_norm_bf16.yaml", ""},
      {"specs/softmax_bf16.yaml", ""},
      {"specs/gemm/linear_bias_bf16.yaml", ""},
      {"specs/gemm/linear_gelu_bf16.yaml", ""},
      {"specs/gemm/matmul_bf16.yaml", "N, the reduced dim, is two extents of input A[N, N]"},
      {"specs/kernelbench/01_square_matmul.yaml",
       "N, the reduced dim, is two extents of input A[N, N]"},
      {"specs/kernelbench/02_standard_matmul.yaml",
       "K, the reduced dim, is not the innermost extent of input B[K, N]"},
      {"specs/kernelbench/03_batched_matmul.yaml",
       "K, the reduced dim, is not the innermost extent of input B[Bt, K, N]"},
      {"specs/kernelbench/04_matrix_vector_matmul.yaml",
       "K, the reduced dim, is not the innermost extent of input B[K, 1]"},
      {"specs/kernelbench/06_matmul_large_k.yaml",
       "K, the reduced dim, is not the innermost extent of input B[K, N]"},
      {"specs/kernelbench/07_matmul_small_k.yaml",
       "K, the reduced dim, is not the innermost extent of input B[K, N]"},
      {"specs/kernelbench/08_matmul_irregular_shapes.yaml",
       "K, the reduced dim, is not the innermost extent of input B[K, N]"},
      {"specs/kernelbench/09_tall_skinny_matmul.yaml",
       "N, the reduced dim, is not the innermost extent of input B[N, M]"},
      {"specs/kernelbench/10_3d_tensor_matrix_matmul.yaml",
       "K, the reduced dim, is not the innermost extent of input B[K, L]"},
      {"specs/kernelbench/11_4d_tensor_matrix_matmul.yaml",
       "L, the reduced dim, is not the innermost extent of input B[L, K]"},
      {"specs/kernelbench/12_diagonal_matmul.yaml", ""},
      {"specs/kernelbench/13_symmetric_matmul.yaml",
       "N, the reduced dim, is two extents of input A[N, N]"},
      {"specs/kernelbench/14_upper_triangular_matmul.yaml",
       "N, the reduced dim, is two extents of input A[N, N]"},
      {"specs/kernelbench/15_lower_triangular_matmul.yaml",
       "M, the reduced dim, is two extents of input A[M, M]"},
      {"specs/kernelbench/16_matmul_transposed_a.yaml", ""},
      {"specs/kernelbench/17_matmul_transposed_b.yaml", ""},
      {"specs/kernelbench/18_matmul_transposed_both.yaml",
       "K, the reduced dim, is not the innermost extent of input A[K, M]"},
      {"specs/kernelbench/05_matrix_scalar_multiplication.yaml", ""},
      {"specs/kernelbench/100_hinge_loss.yaml", ""},
      {"specs/kernelbench/19_relu.yaml", ""},
      {"specs/kernelbench/20_leaky_relu.yaml", ""},
      {"specs/kernelbench/21_sigmoid.yaml", ""},
      {"specs/kernelbench/22_tanh.yaml", ""},
      {"specs/kernelbench/23_softmax.yaml", ""},
      {"specs/kernelbench/24_log_softmax.yaml", ""},
      {"specs/kernelbench/25_swish.yaml", ""},
      {"specs/kernelbench/26_gelu.yaml", ""},
      {"specs/kernelbench/27_selu.yaml", ""},
      {"specs/kernelbench/28_hard_sigmoid.yaml", ""},
      {"specs/kernelbench/29_softplus.yaml", ""},
      {"specs/kernelbench/30_softsign.yaml", ""},
      {"specs/kernelbench/31_elu.yaml", ""},
      {"specs/kernelbench/32_hard_tanh.yaml", ""},
      {"specs/kernelbench/33_batch_norm.yaml", ""},
      {"specs/kernelbench/34_instance_norm.yaml", ""},
      {"specs/kernelbench/35_group_norm.yaml", ""},
      {"specs/kernelbench/36_rms_norm.yaml", ""},
      {"specs/kernelbench/37_frobenius_norm.yaml", "no free dim: output y has the reduced dims"},
      {"specs/kernelbench/38_l1_norm.yaml", ""},
      {"specs/kernelbench/39_l2_norm.yaml", ""},
      {"specs/kernelbench/40_layer_norm.yaml", ""},
      {"specs/kernelbench/41_max_pool_1d.yaml",
       "a max over 'k', of constant extent 8, is not lowered"},
      {"specs/kernelbench/42_max_pool_2d.yaml",
       "a max over 'p', of constant extent 4, is not lowered"},
      {"specs/kernelbench/43_max_pool_3d.yaml",
       "a max over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/44_avg_pool_1d.yaml",
       "a sum over 'k', of constant extent 8, is not lowered"},
      {"specs/kernelbench/45_avg_pool_2d.yaml",
       "a sum over 'p', of constant extent 11, is not lowered"},
      {"specs/kernelbench/46_avg_pool_3d.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/47_sum_reduction.yaml", ""},
      {"specs/kernelbench/48_mean_reduction.yaml", ""},
      {"specs/kernelbench/49_max_reduction.yaml", ""},
      {"specs/kernelbench/50_conv_standard_2d_alexnet.yaml",
       "a sum over 'p', of constant extent 11, is not lowered"},
      {"specs/kernelbench/51_argmax.yaml", ""},
      {"specs/kernelbench/52_argmin.yaml", ""},
      {"specs/kernelbench/53_min_reduction.yaml", ""},
      {"specs/kernelbench/54_conv_standard_3d.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/55_conv_standard_2d_asymmetric_input.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/56_conv_standard_2d_asymmetric_kernel.yaml",
       "a sum over 'p', of constant extent 5, is not lowered"},
      {"specs/kernelbench/59_conv_standard_3d_asymmetric_input.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/60_conv_standard_3d_asymmetric_kernel.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/62_conv_standard_2d_square_input_asymmetric_kernel.yaml",
       "a sum over 'p', of constant extent 5, is not lowered"},
      {"specs/kernelbench/63_conv_standard_2d_square_kernel.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/66_conv_standard_3d_asymmetric_input_kernel.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/57_conv_transposed_2d.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/58_conv_transposed_3d_asymmetric.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/61_conv_transposed_3d.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/64_conv_transposed_1d.yaml",
       "a sum over 'k', of constant extent 3, is not lowered"},
      {"specs/kernelbench/65_conv_transposed_2d_asymmetric_kernel.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/67_conv_standard_1d.yaml",
       "a sum over 'k', of constant extent 3, is not lowered"},
      {"specs/kernelbench/68_conv_transposed_3d_asymmetric_kernel.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/69_conv_transposed_2d_asymmetric.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/70_conv_transposed_3d_asymmetric_input.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/71_conv_transposed_2d_asymmetric_input.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/72_conv_transposed_3d_grouped_output_padding.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/73_conv_transposed_3d_strided_padded.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/74_conv_transposed_1d_dilated.yaml",
       "a sum over 'k', of constant extent 5, is not lowered"},
      {"specs/kernelbench/75_conv_transposed_2d_grouped_dilated.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/76_conv_standard_1d_dilated_strided.yaml",
       "a sum over 'k', of constant extent 3, is not lowered"},
      {"specs/kernelbench/78_conv_transposed_2d_padded.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/77_conv_transposed_3d_strided_padded_dilated.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/79_conv_transposed_1d_strided_padded_dilated.yaml",
       "a sum over 'k', of constant extent 3, is not lowered"},
      {"specs/kernelbench/80_conv_standard_2d_dilated_padded.yaml",
       "a sum over 'p', of constant extent 5, is not lowered"},
      {"specs/kernelbench/81_conv_transposed_2d_strided_padded_dilated.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/82_conv_depthwise_2d.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/83_conv_depthwise_2d_asymmetric_kernel.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/84_conv_depthwise_2d_asymmetric_input.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/85_conv_depthwise_2d_asymmetric_input_kernel.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/86_conv_depthwise_separable_2d.yaml",
       "a sum over 'p', of constant extent 3, is not lowered"},
      {"specs/kernelbench/87_conv_pointwise_2d.yaml",
       "C, the reduced dim, is not the innermost extent of input x[B, C, H, W] but is of input "
       "wt[O, C]"},
      {"specs/kernelbench/88_min_gpt_new_gelu.yaml", ""},
      {"specs/kernelbench/89_cumsum.yaml", ""},
      {"specs/kernelbench/90_cumprod.yaml", ""},
      {"specs/kernelbench/91_cumsum_reverse.yaml", ""},
      {"specs/kernelbench/92_cumsum_exclusive.yaml", ""},
      {"specs/kernelbench/93_masked_cumsum.yaml", ""},
      {"specs/kernelbench/94_mse_loss.yaml", ""},
      {"specs/kernelbench/95_cross_entropy_loss.yaml", ""},
      {"specs/kernelbench/96_huber_loss.yaml", ""},
      {"specs/kernelbench/97_scaled_dot_product_attention.yaml",
       "a max over S, an earlier one over E: one reduced dim"},
      {"specs/kernelbench/98_kl_div_loss.yaml", ""},
      {"specs/kernelbench/99_triplet_margin_loss.yaml", ""},
      {"tests/data/specs_v2/argmax.yaml", ""},
      {"tests/data/specs_v2/cross_entropy.yaml", ""},
      {"tests/data/specs_v2/cumsum_exclusive.yaml", ""},
      {"tests/data/specs_v2/cumsum_reverse.yaml", ""},
      {"tests/data/specs_v2/group_sum.yaml",
       "index arithmetic in subscript 2 of x (column 18) is not lowered"},
      {"tests/data/specs_v2/layer_norm.yaml", ""},
      {"tests/data/specs_v2/softmax.yaml", ""},
      {"tests/data/specs_v2/softmax_f32.yaml", ""},
      {"tests/data/specs_v2/window_max3.yaml",
       "index arithmetic in subscript 2 of x (column 19) is not lowered"},
  };
  int lowered = 0;
  for (const std::string& rel : shipped_shaped_specs()) {
    const std::string why = why_not(load(rel));
    MESSAGE(rel, ": ", why.empty() ? "lowered" : why);
    auto it = expected.find(rel);
    INFO(rel, ": ", why);
    REQUIRE_MESSAGE(it != expected.end(), "a new shipped spec: add it to this table and docs");
    if (it->second.empty())
      CHECK(why.empty());
    else
      CHECK(why.find(it->second) != std::string::npos);
    lowered += why.empty() ? 1 : 0;
  }
  CHECK(lowered == 55);
}

TEST_CASE("nvrtc rows: decline reasons name the statement and the construct") {
  const std::string mn = "dims: {M: free, N: reduced}\ninputs: {x: {dtype: f32, shape: [M, N]}}\n";
  const std::string row_out = "outputs: {y: {dtype: f32, shape: [M, N]}}\n";
  const std::string scalar_out = "outputs: {y: {dtype: f32, shape: [M]}}\n";
  // A nested reduction.
  CHECK(why_not(shaped(mn + row_out, "y[m, n] = x[m, n] - sum(k, x[m, k] - max(j, x[m, j]))")) ==
        "line 1 `y[m, n] = x[m, n] - sum(k, x[m, k] - max(j, x[m, j]))`: a reduction inside a "
        "reduction (column 38) is not lowered");
  // A padded input read where it may be left: the kernel has no pad to give. Read at its own
  // indices, it is a plain input.
  const std::string padded =
      "dims: {M: free, N: reduced}\ninputs: {x: {dtype: f32, shape: [M, N], pad: 0}}\n";
  CHECK(why_not(shaped(padded + row_out, "y[m, n] = x[m, n - 1] + x[m, n]"))
            .find("subscript 2 of x (column 11), a padded input, may leave it: not lowered") !=
        std::string::npos);
  CHECK(why_not(shaped(padded + row_out, "y[m, n] = x[m, n] / sum(k, x[m, k])")).empty());
  // An index's value as a number.
  CHECK(why_not(shaped(mn + row_out, "y[m, n] = x[m, n] * n"))
            .find("the value of index 'n' used as a number") != std::string::npos);
  // Two positions of the row in one term (an outer product).
  CHECK(why_not(shaped(mn + row_out, "y[m, n] = sum(k, x[m, k] * x[m, n])"))
            .find("x (column 28) is read at 'n' inside a reduction over 'k'") != std::string::npos);
  // A constant subscript.
  CHECK(why_not(shaped(mn + scalar_out, "y[m] = x[m, 0]"))
            .find("index arithmetic in subscript 2 of x") != std::string::npos);
  // Integer tensors and float64.
  CHECK(why_not(shaped(
            "dims: {M: free, N: reduced}\ninputs: {x: {dtype: i32, shape: [M, N]}}\n" + scalar_out,
            "y[m] = sum(n, x[m, n])")) ==
        "input x: dtype i32: integer and bool tensors are not lowered (bar bool inputs and "
        "gathered positions)");
  CHECK(why_not(shaped("dims: {M: free, N: reduced}\ninputs: {x: {dtype: f64, shape: [M, N]}}\n"
                       "outputs: {y: {dtype: f64, shape: [M]}}\n",
                       "y[m] = sum(n, x[m, n])")) ==
        "input x: dtype f64: the row kernel computes in float32");
  // A per-row scalar missing a free dim (a reduction over a free dim by another route).
  CHECK(
      why_not(shaped("dims: {B: free, M: free, N: reduced}\n"
                     "inputs: {x: {dtype: f32, shape: [B, M, N]}}\n"
                     "outputs: {y: {dtype: f32, shape: [B, M, N]}, z: {dtype: f32, shape: [M]}}\n",
                     "y[b, m, n] = x[b, m, n]\n  z[m] = sum(n, x[0, m, n])",
                     "{y: {rtol: 1e-5}, z: {rtol: 1e-5}}", "{B: 2, M: 4, N: 8}"))
          .find("index arithmetic in subscript 1 of x") != std::string::npos);
  // Free dims out of order in an input.
  CHECK(why_not(shaped("dims: {B: free, M: free, N: reduced}\n"
                       "inputs: {x: {dtype: f32, shape: [M, B, N]}}\n"
                       "outputs: {y: {dtype: f32, shape: [B, M, N]}}\n",
                       "y[b, m, n] = x[m, b, n]", "{y: {rtol: 1e-5}}", "{B: 2, M: 4, N: 8}")) ==
        "input x[M, B, N]: its free dims are not in the order (B, M)");
  // The column kernel's limits: R twice in one tensor, an argmax in an expression or into a
  // float, the argmax's index read again.
  const std::string bnk =
      "dims: {B: free, N: reduced, K: free}\n"
      "inputs: {x: {dtype: f32, shape: [B, N, K]}}\n";
  CHECK(why_not(shaped("dims: {N: reduced, K: free}\ninputs: {x: {dtype: f32, shape: [N, N, K]}}\n"
                       "outputs: {y: {dtype: f32, shape: [K]}}\n",
                       "y[k] = sum(n, x[n, n, k])", "{y: {rtol: 1e-5}}", "{N: 4, K: 8}")) ==
        "N, the reduced dim, is two extents of input x[N, N, K]: not lowered");
  CHECK(why_not(shaped(bnk + "outputs: {y: {dtype: i64, shape: [B, K]}}\n",
                       "y[b, k] = argmax(n, x[b, n, k]) + 1", "{y: bitwise}", "{B: 2, N: 4, K: 8}"))
            .find("argmax inside an expression is not lowered") != std::string::npos);
  CHECK(why_not(shaped(bnk + "outputs: {y: {dtype: f32, shape: [B, K]}}\n",
                       "y[b, k] = argmax(n, x[b, n, k])", "{y: bitwise}", "{B: 2, N: 4, K: 8}"))
            .find("argmax into output y of f32: only into an i32 or i64 output is lowered") !=
        std::string::npos);
  CHECK(why_not(shaped(bnk + "outputs: {i: {dtype: i64, shape: [B, K]}, "
                             "z: {dtype: f32, shape: [B, K]}}\n",
                       "i[b, k] = argmin(n, x[b, n, k])\n  z[b, k] = i[b, k] * 2",
                       "{i: bitwise, z: bitwise}", "{B: 2, N: 4, K: 8}"))
            .find("reading i (column 11), an argmax's index, is not lowered") != std::string::npos);
  // Scans: the whole right-hand side, into an output no later statement reads.
  CHECK(why_not(shaped(mn + row_out, "y[m, n] = 2 * cumsum(n, x[m, n])"))
            .find("a cumsum inside an expression is not lowered") != std::string::npos);
  CHECK(why_not(shaped(mn + "temporaries: {c: {shape: [M, N]}}\n" + row_out,
                       "c[m, n] = cumprod(n, x[m, n])\n  y[m, n] = c[m, n]"))
            .find("a cumprod into temporary c is not lowered: only into an output") !=
        std::string::npos);
  CHECK(why_not(shaped(mn + "outputs: {c: {dtype: f32, shape: [M, N]}, "
                            "y: {dtype: f32, shape: [M, N]}}\n",
                       "c[m, n] = cumsum(n, x[m, n])\n  y[m, n] = c[m, n] + 1",
                       "{c: {rtol: 1e-5}, y: {rtol: 1e-5}}"))
            .find("reading c (column 11), a scan's output, is not lowered") != std::string::npos);
  // A reduction over other dims than R: over every free dim after the rows, into scalars.
  const std::string mn_loss = mn +
                              "temporaries: {r: {shape: [M]}}\noutputs: {y: {dtype: f32, "
                              "shape: []}}\n";
  CHECK(why_not(
            shaped(mn_loss, "r[m] = sum(n, x[m, n])\n  y = sum(m, r[m]) / M", "{y: {rtol: 1e-5}}"))
            .empty());
  CHECK(
      why_not(shaped("dims: {B: free, M: free, N: reduced}\n"
                     "inputs: {x: {dtype: f32, shape: [B, M, N]}}\n"
                     "temporaries: {r: {shape: [B, M]}}\noutputs: {y: {dtype: f32, shape: [B]}}\n",
                     "r[b, m] = sum(n, x[b, m, n])\n  y[b] = sum(m, r[b, m])", "{y: {rtol: 1e-5}}",
                     "{B: 2, M: 4, N: 8}"))
          .find("one reduced dim (or group of dims) is lowered (nor over every free dim, after "
                "the rows)") != std::string::npos);
  CHECK(why_not(shaped(mn + "temporaries: {r: {shape: [M]}, s: {shape: []}}\n"
                            "outputs: {z: {dtype: f32, shape: [M]}}\n",
                       "r[m] = sum(n, x[m, n])\n  s = sum(m, r[m])\n  z[m] = r[m] / s",
                       "{z: {rtol: 1e-5}}"))
            .find("z, computed after the rows (from a reduction over them), is not a scalar") !=
        std::string::npos);
  // Accepted: prod, a reduction inside a row statement, a broadcast row and a per-row input.
  CHECK(why_not(shaped("dims: {B: free, M: free, N: reduced}\n"
                       "inputs: {x: {dtype: bf16, shape: [B, M, N]}, w: {dtype: f16, shape: [N]},"
                       " s: {dtype: f32, shape: [M]}}\n"
                       "outputs: {y: {dtype: f32, shape: [B, M, N]}}\n",
                       "y[b, m, n] = x[b, m, n] * w[n] / prod(k, x[b, m, k]) + s[m]",
                       "{y: {rtol: 1e-5}}", "{B: 2, M: 4, N: 8}")) == "");
}

TEST_CASE("nvrtc rows: the generated softmax") {
  const kq::OpSpec s = load("specs/softmax_bf16.yaml");
  nv::RowPlan plan;
  REQUIRE(nv::lower_rows(s, plan).empty());
  CHECK(plan.free_dims.size() == 1);
  CHECK(plan.num_inputs == 1);
  CHECK(plan.num_outputs == 1);
  const nv::Generated g = nv::generate_rows(s, plan);
  INFO(g.source);
  CHECK(g.rows);
  CHECK(g.cuda_headers);
  CHECK(g.source.find("#include <cuda_bf16.h>") != std::string::npos);
  CHECK(g.source.find("extern \"C\" __global__ void __launch_bounds__(512, 2) kq_rows(") !=
        std::string::npos);
  // A max and a sum over the row, each through the block reduction; e inlined, never stored.
  CHECK(g.source.find("kq_block_max(acc, kq_sh)") != std::string::npos);
  CHECK(g.source.find("kq_block_sum(kq_sum_value(acc, comp), kq_sh)") != std::string::npos);
  CHECK(g.source.find("kq_sum_step(acc, comp, ") != std::string::npos);  // compensated
  CHECK(g.source.find("kq_exp(") != std::string::npos);
  // 64-bit row and element offsets.
  CHECK(g.source.find("for (kq_i64 row = blockIdx.x;") != std::string::npos);
  // Every loop over the row: kRowUnroll (4) positions a step, then the rest one at a time.
  CHECK(g.source.find("for (; kq_j0 + 3 * kq_nt < L.len; kq_j0 += 4 * kq_nt) {") !=
        std::string::npos);
  CHECK(g.source.find("const kq_i64 j = kq_j0 + kq_u * kq_nt;") != std::string::npos);
  CHECK(g.source.find("for (kq_i64 j = kq_j0; j < L.len; j += kq_nt) {") != std::string::npos);
  // The step's loads into per-step arrays first, then its arithmetic.
  CHECK(g.source.find("[kq_u] = kq_ld(in0 + (o0 + j * L.row_stride[0]));  // x") !=
        std::string::npos);
  CHECK(g.source.find("const float e") != std::string::npos);
  CHECK(g.source.find("kq_st(out0 + (o1 + j * L.row_stride[1])") != std::string::npos);
  CHECK(g.plan.find("row temporary, inlined where it is read") != std::string::npos);
  // The same spec gives the same text (the cache key).
  CHECK(nv::generate_rows(s, plan).source == g.source);
}

TEST_CASE("nvrtc rows: the column kernel, sum and argmax over dim 1 of [B, N, K]") {
  const kq::OpSpec sum = load("specs/kernelbench/47_sum_reduction.yaml");  // y of [B, 1, K]
  nv::RowPlan plan;
  REQUIRE(nv::lower_rows(sum, plan).empty());
  CHECK(plan.columns);
  CHECK(plan.free_dims.size() == 2);                          // B, K
  CHECK(plan.tensors[0].r_at == 1);                           // x[B, N, K]
  CHECK(plan.tensors[1].free_pos == std::vector<int>{0, 2});  // y[B, 1, K]: the 1 skipped
  nv::Generated g = nv::generate_rows(sum, plan);
  INFO(g.source);
  CHECK(g.block == nv::kColBlock);
  CHECK(g.source.find("__launch_bounds__(256) kq_rows(") != std::string::npos);
  // A thread per row; its own loop over N, four positions a step; no combining, no shared memory.
  CHECK(g.source.find("for (kq_i64 row = (kq_i64)blockIdx.x * blockDim.x + threadIdx.x;") !=
        std::string::npos);
  CHECK(g.source.find("kq_i64 kq_j0 = 0;") != std::string::npos);
  CHECK(g.source.find("const kq_i64 kq_nt = 1;") != std::string::npos);
  CHECK(g.source.find("kq_sum_step(acc, comp, ") != std::string::npos);
  CHECK(g.source.find("= kq_sum_value(acc, comp);") != std::string::npos);
  CHECK(g.source.find("kq_block_") == std::string::npos);
  CHECK(g.source.find("kq_sh") == std::string::npos);
  // Each thread stores its own row's result.
  CHECK(g.source.find("threadIdx.x == 0") == std::string::npos);
  CHECK(g.source.find("    kq_st(out0 + o1, v1);") != std::string::npos);
  CHECK(g.plan.find("one thread per row (the column kernel") != std::string::npos);

  // The layout: x [B, N, K] padded (K + 3 a row of N), y [B, 1, K].
  const std::int64_t B = 3, N = 5, K = 7;
  std::vector<kq::TensorView> in = {view({B, N, K}, {N * (K + 3), K + 3, 1})};
  std::vector<kq::TensorView> out = {view({B, 1, K}, {K, K, 1})};
  nv::RowLayout L;
  REQUIRE(nv::plan_rows(sum, plan, in, out, L).empty());
  CHECK(L.rows == B * K);
  CHECK(L.len == N);
  CHECK(L.row_stride[0] == K + 3);
  CHECK(L.free_stride[0][0] == N * (K + 3));
  CHECK(L.free_stride[0][1] == 1);
  CHECK(L.free_stride[1][0] == K);
  CHECK(L.free_stride[1][1] == 1);
  // A thread a row, 256 a block; grid-stride beyond 8 waves.
  nv::RowLayout big = L;
  big.rows = 128 * 4095;
  CHECK(nv::row_grid(plan, big, 132, 8, 0).blocks == (128 * 4095 + 255) / 256);
  CHECK(nv::row_grid(plan, big, 132, 8, 0).block == 256);
  big.rows = std::int64_t{1} << 40;
  CHECK(nv::row_grid(plan, big, 132, 8, 0).blocks == 132 * 8 * 8);
  CHECK(nv::row_grid(plan, big, 132, 8, 2).blocks == 132 * 8 * 2);
  // The row kernel: a block per row, smaller blocks more an SM.
  nv::RowPlan rows;
  big.len = 200;  // 64 threads: 8 times the 512-thread blocks an SM
  CHECK(nv::row_grid(rows, big, 132, 2, 0).block == 64);
  CHECK(nv::row_grid(rows, big, 132, 2, 0).blocks == 132 * 2 * 8 * 8);
  big.rows = 7;
  CHECK(nv::row_grid(rows, big, 132, 2, 0).blocks == 7);
  // A split plan: one wave at most, each thread 4 positions or more.
  nv::RowPlan split;
  split.split = true;
  big.rows = 1;
  big.len = std::int64_t{1} << 30;
  CHECK(nv::row_grid(split, big, 132, 2, 0).blocks == 132 * 2);
  CHECK(nv::row_grid(split, big, 132, 2, 0).block == 512);
  big.len = 5000;  // 512 threads of 4 positions: 3 blocks
  CHECK(nv::row_grid(split, big, 132, 2, 0).blocks == 3);
  big.len = 0;
  CHECK(nv::row_grid(split, big, 132, 2, 0).blocks == 1);

  const kq::OpSpec arg = load("specs/kernelbench/51_argmax.yaml");
  REQUIRE(nv::lower_rows(arg, plan).empty());
  g = nv::generate_rows(arg, plan);
  INFO(g.source);
  // The first extreme: a strictly greater term, or the first NaN, which is final.
  CHECK(g.source.find("if (at < 0 || (best == best && (e3 != e3 || e3 > best))) {") !=
        std::string::npos);
  CHECK(g.source.find("__device__ __forceinline__ void kq_st(long long* p, kq_i64 v)") !=
        std::string::npos);
  CHECK(g.source.find("const kq_i64 v1 = r4;") != std::string::npos);
  CHECK(g.source.find("long long* __restrict__ out0") != std::string::npos);

  // Along the innermost extent, a block a row: each thread's first extreme, then the block's.
  const kq::OpSpec row_arg = load("tests/data/specs_v2/argmax.yaml");
  REQUIRE(nv::lower_rows(row_arg, plan).empty());
  CHECK_FALSE(plan.columns);
  g = nv::generate_rows(row_arg, plan);
  INFO(g.source);
  CHECK(g.source.find("__shared__ kq_i64 kq_shi[32];") != std::string::npos);
  CHECK(g.source.find("= kq_block_argmax(best, at, kq_sh, kq_shi);") != std::string::npos);
  // Over every element (no free dim) it is declined: the blocks' extremes are not combined.
  CHECK(why_not(shaped("dims: {M: reduced, N: reduced}\ninputs: {x: {dtype: f32, shape: [M, N]}}\n"
                       "outputs: {i: {dtype: i64, shape: []}}\n",
                       "i = argmax((m, n), x[m, n])", "{i: bitwise}", "{M: 4, N: 8}"))
            .find("an argmax or argmin over every element is not lowered") != std::string::npos);
}

TEST_CASE("nvrtc rows: a group of reduced dims is one row where the view lets it") {
  const kq::OpSpec s = load("specs/kernelbench/34_instance_norm.yaml");  // over (H, W)
  nv::RowPlan plan;
  REQUIRE(nv::lower_rows(s, plan).empty());
  CHECK(plan.r_dims.size() == 2);
  CHECK(plan.free_dims.size() == 2);  // B, C
  CHECK_FALSE(plan.columns);
  const nv::Generated g = nv::generate_rows(s, plan);
  CHECK(g.plan.find("row length (H, W)") != std::string::npos);
  const std::vector<kq::TensorView> dense = {view({2, 3, 7, 9}, {189, 63, 9, 1})};
  nv::RowLayout L;
  REQUIRE(nv::plan_rows(s, plan, dense, dense, L).empty());
  CHECK(L.rows == 6);
  CHECK(L.len == 63);
  CHECK(L.row_stride[0] == 1);
  CHECK(L.free_stride[0][1] == 63);
  // Rows of W padded to 10: H and W no longer make one run of memory; the call is refused.
  const std::vector<kq::TensorView> padded = {view({2, 3, 7, 9}, {210, 70, 10, 1})};
  CHECK(nv::plan_rows(s, plan, padded, dense, L) ==
        "the reduced dims of x do not collapse into one row in this view (strides 10 and 1 over "
        "extent 9)");
}

TEST_CASE("nvrtc rows: R's dims decomposed one by one where a tensor has them apart") {
  // Batch norm: x and y [B, C, H, W] over (B, H, W) per C; weight and bias [C].
  const kq::OpSpec s = load("specs/kernelbench/33_batch_norm.yaml");
  nv::RowPlan plan;
  REQUIRE(nv::lower_rows(s, plan).empty());
  CHECK(plan.r_dims.size() == 3);
  CHECK(plan.tensors[0].r_general);                                 // x
  CHECK(plan.tensors[0].r_positions == std::vector<int>{0, 2, 3});  // B, H, W
  CHECK_FALSE(plan.tensors[1].row);                                 // weight: per row
  const nv::Generated g = nv::generate_rows(s, plan);
  // The position's digits, W fastest, each times the tensor's stride there.
  CHECK(g.source.find("(j % L.group_extent[2]) * L.group_stride[0][2] + ((j / "
                      "L.group_extent[2]) % L.group_extent[1]) * L.group_stride[0][1] + (((j / "
                      "L.group_extent[2]) / L.group_extent[1])) * L.group_stride[0][0]") !=
        std::string::npos);
  // x with rows of W padded to 10: no single stride along R, none needed.
  const std::vector<kq::TensorView> in = {view({2, 3, 7, 9}, {210, 70, 10, 1}), view({3}, {1}),
                                          view({3}, {1})};
  const std::vector<kq::TensorView> out = {view({2, 3, 7, 9}, {189, 63, 9, 1})};
  nv::RowLayout L;
  REQUIRE(nv::plan_rows(s, plan, in, out, L).empty());
  CHECK(L.rows == 3);
  CHECK(L.len == 2 * 7 * 9);
  CHECK(L.group_extent[0] == 2);
  CHECK(L.group_extent[2] == 9);
  CHECK(L.group_stride[0][0] == 210);
  CHECK(L.group_stride[0][1] == 10);
  CHECK(L.group_stride[0][2] == 1);
  CHECK(L.group_stride[3][0] == 189);  // y
  CHECK(L.free_stride[0][0] == 70);    // x along C
}

TEST_CASE("nvrtc rows: the layout from views") {
  const kq::OpSpec s = load("specs/layer_norm_bf16.yaml");
  nv::RowPlan plan;
  REQUIRE(nv::lower_rows(s, plan).empty());
  // x [M, N] with padded rows (stride 4100), w and b [N], y [M, N], mean and rstd [M].
  const std::int64_t M = 3'000'000'000 / 4099 + 7, N = 4099;  // > 2^31 elements
  const kq::DType bf16 = kq::DType::bf16;
  std::vector<kq::TensorView> in = {view({M, N}, {4100, 1}, bf16), view({N}, {1}, bf16),
                                    view({N}, {2}, bf16)};
  std::vector<kq::TensorView> out = {view({M, N}, {N, 1}, bf16), view({M}, {1}), view({M}, {1})};
  nv::RowLayout L;
  REQUIRE(nv::plan_rows(s, plan, in, out, L).empty());
  CHECK(L.rows == M);
  CHECK(L.len == N);
  CHECK(L.free_extent[0] == M);
  CHECK(L.free_stride[0][0] == 4100);
  CHECK(L.row_stride[0] == 1);
  CHECK(L.free_stride[1][0] == 0);  // w: the same row for every row
  CHECK(L.row_stride[2] == 2);
  CHECK(L.free_stride[3][0] == N);
  CHECK(L.row_stride[4] == 0);  // mean: a per-row scalar
  CHECK(L.dim_value[1] == static_cast<float>(N));
  CHECK(nv::row_block(0) == 32);
  CHECK(nv::row_block(N) == 512);
  CHECK(nv::row_block(200) == 64);
}

// The longest run of global loads in `ptx` with no float32 arithmetic between them (address
// arithmetic and conversions may come between): the loads a thread has in flight together.
int longest_load_run(const std::string& ptx) {
  static const std::regex load(R"(^\s*(@%p\d+\s+)?ld\.global)");
  static const std::regex arith(
      R"(^\s*(@%p\d+\s+)?(add|sub|mul|div|fma|max|min|neg|abs|ex2|lg2|rcp|sqrt|tanh|setp)\.\S*f32)");
  int best = 0, run = 0;
  std::istringstream in(ptx);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, load))
      best = std::max(best, ++run);
    else if (std::regex_search(line, arith))
      run = 0;
  }
  return best;
}

TEST_CASE("nvrtc rows: every lowered shipped spec compiles clean for sm_90") {
  if (!nvrtc().lib) {
    MESSAGE("skipped: libnvrtc not loadable (", nvrtc().why, ")");
    return;
  }
  std::string looked;
  REQUIRE_MESSAGE(!nv::cuda_include_dir(looked).empty(), "no cuda_bf16.h in ", looked);
  int compiled = 0;
  for (const std::string& rel : shipped_shaped_specs()) {
    const kq::OpSpec s = load(rel);
    nv::RowPlan plan;
    if (!nv::lower_rows(s, plan).empty()) continue;
    const nv::Generated g = nv::generate_rows(s, plan);
    const auto o = nvrtc().build(g.source, g.cuda_headers);
    INFO(rel, "\nlog:\n", o.log, "\nsource:\n", g.source);
    REQUIRE(o.result == 0);
    CHECK(o.log.find("Compiling entry function 'kq_rows'") != std::string::npos);
    CHECK(o.log.find("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads") !=
          std::string::npos);
    CHECK(o.ptx.find("ld.local") == std::string::npos);
    CHECK(longest_load_run(o.ptx) >= nv::kRowUnroll);  // the unrolled step's loads, together
    ++compiled;
  }
  CHECK(compiled == 55);
}
