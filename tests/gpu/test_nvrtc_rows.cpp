// GPU test of nvrtc_jit's row kernels (format-2 specs in row form, plugins/nvrtc_jit/
// row_codegen.hpp) against the float64 reference (core/indexed/evaluate.hpp) within a few units
// of each output's precision and its accumulation bound, the bytes past each output untouched:
// softmax and layer norm in bf16, log_softmax and relu in f32, at shapes that leave rows partly
// covered by a block (N = 1, 4099, 50257), contiguous and with padded rows and a reversed weight (a
// spec copy that admits strided views); the column kernel's sum, max, argmax, argmin over dim 1 of
// [B, N, K] and RMS norm over C of [B, C, H, W]; argmax over the last dim (the row kernel,
// ties and NaNs); cumsum forwards, backwards, exclusive and masked;
// instance and layer norm (groups of dims as one row); mse and huber losses (one row over the
// grid); cross entropy and triplet margin (a reduction over the rows). Skips without a usable CUDA
// device (tests/support/gpu_main.cpp).
#include <doctest/doctest.h>

#ifndef KQ_HAVE_CUDA
TEST_CASE("nvrtc_jit row kernels") {
  MESSAGE("skipped: no CUDA device (kq was built without CUDA)");
}
#else
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "indexed/evaluate.hpp"
#include "kq/half.hpp"
#include "kq/plugin_api.hpp"
#include "plugin_arms.hpp"
#include "row_cases.hpp"
#include "spec/spec.hpp"
#include "test_support.hpp"

namespace {

#define CUDA_OK(call)                                                                       \
  do {                                                                                      \
    const cudaError_t e_ = (call);                                                          \
    REQUIRE_MESSAGE(e_ == cudaSuccess, #call << ": " << std::string(cudaGetErrorName(e_))); \
  } while (0)

constexpr std::size_t kPad = 64;  // guard bytes after each tensor's last element
constexpr unsigned char kGuard = 0xAB;

struct DeviceTensor {
  kq::TensorView view;
  void* base = nullptr;
  std::size_t span_bytes = 0;  // from base to past the last element
  ~DeviceTensor() { cudaFree(base); }
};

// `padded`: rows (the innermost dim's neighbour) one element longer than the row; `reversed`:
// a rank-1 tensor walked backwards (stride -1, data at its last element).
void make(DeviceTensor& t, kq::DType dtype, const std::vector<std::int64_t>& shape, bool padded,
          bool reversed) {
  t.view.dtype = dtype;
  t.view.device = kq::Device::cuda;
  t.view.rank = static_cast<int>(shape.size());
  std::int64_t stride = 1, span = 1;
  for (int i = t.view.rank - 1; i >= 0; --i) {
    t.view.shape[i] = shape[static_cast<std::size_t>(i)];
    t.view.strides[i] = stride;
    const std::int64_t len = shape[static_cast<std::size_t>(i)] + (padded && i == t.view.rank - 1);
    stride *= len;
  }
  span = stride;
  const std::size_t es = kq::dtype_size(dtype);
  t.span_bytes = static_cast<std::size_t>(span) * es;
  CUDA_OK(cudaMalloc(&t.base, t.span_bytes + kPad));
  CUDA_OK(cudaMemset(t.base, kGuard, t.span_bytes + kPad));
  t.view.data = t.base;
  if (reversed && t.view.rank == 1 && shape[0] > 0) {
    t.view.strides[0] = -1;
    t.view.data = static_cast<char*>(t.base) + (shape[0] - 1) * static_cast<std::int64_t>(es);
  }
}

// Element i (row-major over the view's shape) -> its byte offset from base.
std::int64_t byte_offset(const DeviceTensor& t, std::int64_t i) {
  std::int64_t off = 0;
  for (int d = t.view.rank - 1; d >= 0; --d) {
    const std::int64_t c = i % t.view.shape[d];
    i /= t.view.shape[d];
    off += c * t.view.strides[d];
  }
  return (static_cast<char*>(t.view.data) - static_cast<char*>(t.base)) +
         off * static_cast<std::int64_t>(kq::dtype_size(t.view.dtype));
}

void upload(DeviceTensor& t, const kq::ix::Buffer& b) {
  std::vector<unsigned char> host(t.span_bytes, kGuard);
  const std::size_t es = kq::dtype_size(b.dtype);
  for (std::int64_t i = 0; i < b.numel(); ++i)
    std::memcpy(host.data() + byte_offset(t, i), b.bytes.data() + i * es, es);
  CUDA_OK(cudaMemcpy(t.base, host.data(), host.size(), cudaMemcpyHostToDevice));
}

struct Case {
  const char* spec;
  kq::ix::DimValues dims;
  bool strided;
  const char* positions = nullptr;  // the dim whose extent bounds i32 and i64 inputs' values
  kq::test::rows::Draw draw = kq::test::rows::Draw::uniform;
};

using kq::test::rows::dims_text;

void run_case(kq::IKernelArm* arm, const Case& c) {
  kq::OpSpec spec = kq::load_spec(kq::test::source_dir() / c.spec).op;
  if (c.strided) {
    spec.layouts.contiguous_only = false;
    spec.layouts.min_alignment_bytes = 2;
  }
  const kq::ix::Program& p = *spec.program;
  const kq::ix::DimValues& dims = c.dims;
  std::mt19937_64 rng(std::hash<std::string>{}(c.spec + dims_text(dims)));
  kq::ix::Tensors host_in;
  std::vector<DeviceTensor> in(spec.inputs.size()), out(spec.outputs.size());
  std::vector<const kq::ix::TensorDecl*> out_decls;
  std::vector<int> out_positions;
  std::size_t ni = 0, no = 0;
  for (const kq::ix::TensorDecl& d : p.decls.tensors) {
    if (d.role == kq::ix::Role::temporary) continue;
    const auto shape = kq::test::rows::shape_of(d, dims);
    const bool row = shape.size() > 1;
    if (d.role == kq::ix::Role::input) {
      std::vector<double> v(static_cast<std::size_t>(kq::ix::numel_of(shape)));
      const std::int64_t positions = c.positions ? dims.at(c.positions) : 0;
      for (double& x : v) x = kq::test::rows::draw(c.draw, d.dtype, rng, positions);
      kq::ix::Buffer b = kq::ix::Buffer::of(d.dtype, shape, v);
      make(in[ni], d.dtype, shape, c.strided && row, c.strided && shape.size() == 1);
      upload(in[ni], b);
      host_in.emplace(d.name, std::move(b));
      ++ni;
    } else {
      make(out[no++], d.dtype, shape, c.strided && row, false);
      out_decls.push_back(&d);
      out_positions.push_back(static_cast<int>(&d - p.decls.tensors.data()));
    }
  }
  const kq::ix::Evaluation want = kq::ix::evaluate_with_bounds(p, dims, host_in, out_positions);

  kq::Problem problem{&spec, {}, {}, nullptr};
  for (auto& t : in) problem.inputs.push_back(t.view);
  for (auto& t : out) problem.outputs.push_back(t.view);
  const kq::Status ps = arm->prepare(problem);
  REQUIRE_MESSAGE(ps.is_ok(), ps.message());
  const kq::Status rs = arm->run(problem.inputs, problem.outputs, nullptr);
  REQUIRE_MESSAGE(rs.is_ok(), rs.message());
  CUDA_OK(cudaDeviceSynchronize());

  for (std::size_t o = 0; o < out.size(); ++o) {
    const kq::ix::Buffer& w = want.outputs.at(out_decls[o]->name);
    const kq::ix::Buffer& bound = want.bounds.at(out_decls[o]->name);
    std::vector<unsigned char> host(out[o].span_bytes + kPad);
    CUDA_OK(cudaMemcpy(host.data(), out[o].base, host.size(), cudaMemcpyDeviceToHost));
    const kq::DType t = out[o].view.dtype;
    const std::size_t es = kq::dtype_size(t);
    const bool exact = kq::test::rows::exact(c.spec, t);
    int bad = 0;
    std::vector<bool> touched(host.size(), false);
    for (std::int64_t i = 0; i < w.numel(); ++i) {
      const std::int64_t at = byte_offset(out[o], i);
      for (std::size_t k = 0; k < es; ++k) touched[static_cast<std::size_t>(at) + k] = true;
      const double got = kq::load_as_double(t, host.data() + at), exp = w.get(i);
      if (!kq::test::rows::close_enough(got, exp, bound.get(i), t, exact) && bad++ < 5)
        FAIL_CHECK(std::string(c.spec)
                   << dims_text(dims) << std::string(c.strided ? " strided" : "") << " output "
                   << out_decls[o]->name << "[" << i << "]: got " << got << ", want " << exp);
    }
    CHECK(bad == 0);
    int overwritten = 0;
    for (std::size_t b = 0; b < host.size(); ++b)
      if (!touched[b] && host[b] != kGuard) ++overwritten;
    CHECK_MESSAGE(overwritten == 0, std::string(c.spec) << ": bytes outside output "
                                                        << out_decls[o]->name << " written");
  }
}

}  // namespace

TEST_CASE("nvrtc_jit row kernels against the float64 reference") {
  kq::IKernelArm* arm = kq::test::plugin_arm("kq_nvrtc_jit", "nvrtc_jit");
  REQUIRE(arm != nullptr);
  const Case cases[] = {
      {"specs/softmax_bf16.yaml", {{"M", 7}, {"N", 4099}}, false},
      {"specs/softmax_bf16.yaml", {{"M", 3}, {"N", 1}}, false},
      {"specs/softmax_bf16.yaml", {{"M", 2}, {"N", 50257}}, true},
      {"specs/layer_norm_bf16.yaml", {{"M", 7}, {"N", 4099}}, false},
      {"specs/layer_norm_bf16.yaml", {{"M", 5}, {"N", 333}}, true},
      {"specs/rms_norm_bf16.yaml", {{"M", 9}, {"N", 1000}}, false},
      {"specs/kernelbench/24_log_softmax.yaml", {{"M", 6}, {"N", 2049}}, false},
      {"specs/kernelbench/19_relu.yaml", {{"M", 4}, {"N", 77}}, true},
      // The column kernel: a thread per row, rows along K; N a tail of the four-position step.
      {"specs/kernelbench/47_sum_reduction.yaml", {{"B", 3}, {"N", 1027}, {"K", 333}}, false},
      {"specs/kernelbench/47_sum_reduction.yaml", {{"B", 2}, {"N", 1}, {"K", 5}}, true},
      {"specs/kernelbench/49_max_reduction.yaml", {{"B", 5}, {"N", 258}, {"K", 97}}, true},
      {"specs/kernelbench/51_argmax.yaml", {{"B", 4}, {"N", 301}, {"K", 129}}, false},
      {"specs/kernelbench/52_argmin.yaml", {{"B", 1}, {"N", 6}, {"K", 2000}}, true},
      {"specs/kernelbench/36_rms_norm.yaml", {{"B", 2}, {"C", 67}, {"H", 9}, {"W", 31}}, false},
      // argmax along the innermost extent: a block a row, the threads' first extremes combined.
      {"tests/data/specs_v2/argmax.yaml", {{"M", 7}, {"N", 4099}}, false},
      {"tests/data/specs_v2/argmax.yaml", {{"M", 3}, {"N", 50257}}, true},
      {"tests/data/specs_v2/argmax.yaml",
       {{"M", 9}, {"N", 3001}},
       false,
       nullptr,
       kq::test::rows::Draw::ties},
      {"tests/data/specs_v2/argmax.yaml",
       {{"M", 40}, {"N", 37}},
       false,
       nullptr,
       kq::test::rows::Draw::ties_nan},
      // No free dim: the row over the grid, the last block combining the partials.
      {"specs/kernelbench/94_mse_loss.yaml", {{"M", 3}, {"N", 70000}}, false},
      {"specs/kernelbench/96_huber_loss.yaml", {{"M", 5}, {"N", 7}}, false},
      // Reductions over the rows after those along them (a gathered target for cross entropy).
      {"specs/kernelbench/99_triplet_margin_loss.yaml", {{"M", 3000}, {"D", 300}}, false},
      {"specs/kernelbench/95_cross_entropy_loss.yaml", {{"M", 4000}, {"N", 1000}}, false, "N"},
      // Groups of reduced dims collapsed into one row.
      {"specs/kernelbench/34_instance_norm.yaml",
       {{"B", 2}, {"C", 3}, {"H", 33}, {"W", 65}},
       false},
      {"specs/kernelbench/40_layer_norm.yaml", {{"B", 3}, {"C", 4}, {"H", 5}, {"W", 103}}, false},
      // R's dims decomposed one by one (batch norm's x, group norm's weight, hinge's t).
      {"specs/kernelbench/33_batch_norm.yaml", {{"B", 3}, {"C", 4}, {"H", 33}, {"W", 70}}, false},
      {"specs/kernelbench/35_group_norm.yaml",
       {{"B", 2}, {"G", 3}, {"CG", 4}, {"H", 17}, {"W", 33}},
       false},
      {"specs/kernelbench/100_hinge_loss.yaml", {{"M", 300}, {"N", 2001}}, false},
      // Scans: chunks of four positions a thread, a block scan, the chunks' running total.
      {"specs/kernelbench/89_cumsum.yaml", {{"M", 3}, {"N", 4099}}, false},
      {"specs/kernelbench/91_cumsum_reverse.yaml", {{"M", 2}, {"N", 1500}}, true},
      {"specs/kernelbench/92_cumsum_exclusive.yaml", {{"M", 2}, {"N", 700}}, false},
      {"specs/kernelbench/93_masked_cumsum.yaml", {{"M", 2}, {"N", 2999}}, false},
  };
  for (const Case& c : cases) {
    const std::string where = c.spec + dims_text(c.dims) + (c.strided ? " strided" : "");
    INFO(where);
    run_case(arm, c);
  }
  // The artifacts: the generated source and its row plan.
  bool source = false, plan = false;
  for (const kq::Artifact& a : arm->artifacts()) {
    source =
        source || (a.filename == "kernel.cu" && a.content.find("kq_rows") != std::string::npos);
    plan = plan || a.filename == "row_plan.txt";
  }
  CHECK(source);
  CHECK(plan);
}

TEST_CASE("nvrtc_jit declines the format-2 specs it does not lower, saying why") {
  kq::IKernelArm* arm = kq::test::plugin_arm("kq_nvrtc_jit", "nvrtc_jit");
  REQUIRE(arm != nullptr);
  const kq::OpSpec spec =
      kq::load_spec(kq::test::source_dir() / "specs/kernelbench/37_frobenius_norm.yaml").op;
  const kq::Status s = arm->supports(spec);
  CHECK(s.code() == kq::Status::Code::unsupported);
  CHECK(s.message().find("no free dim") != std::string::npos);
  // The scalar twin leaves format-2 specs to nvrtc_jit.
  kq::IKernelArm* scalar = kq::test::plugin_arm("kq_nvrtc_jit", "nvrtc_jit_scalar");
  REQUIRE(scalar != nullptr);
  const kq::OpSpec softmax = kq::load_spec(kq::test::source_dir() / "specs/softmax_bf16.yaml").op;
  CHECK(arm->supports(softmax).is_ok());
  CHECK(scalar->supports(softmax).code() == kq::Status::Code::unsupported);
}
#endif
