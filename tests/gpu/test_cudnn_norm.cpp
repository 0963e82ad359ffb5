// GPU test of cudnn_norm (plugins/cudnn_graph/norm_arm.cpp), loaded with kq's loader as the host
// loads it: layer norm and RMS norm, with and without weights (the arm's fillers), training and
// inference phases, against float64 at a few shapes (the shipped specs' qualification points, a
// transformer row, a 50257 vocabulary row). Every (spec, shape) prints one line: the plan chosen,
// or why prepare() declined, with cuDNN's message, so that a descriptor mistake reads in one run.
// Without a usable CUDA device the test's main skips, saying why. The qualification is kq's;
// this checks y within a few ulps of its dtype (relative to the terms that add up to it) and the
// statistics within 1e-4.
#include <doctest/doctest.h>

#ifndef KQ_HAVE_CUDA
TEST_CASE("cudnn_norm arm") { MESSAGE("skipped: no CUDA device (kq was built without CUDA)"); }
#else
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kq/half.hpp"
#include "kq/plugin_api.hpp"
#include "plugin_arms.hpp"
#include "spec/spec.hpp"

namespace {

struct DevBuf {
  explicit DevBuf(std::size_t bytes) {
    REQUIRE(cudaMalloc(&p, std::max<std::size_t>(bytes, 16)) == cudaSuccess);
  }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  void* p = nullptr;
};

// A host tensor: values (exactly representable in its dtype) and its shape.
struct Host {
  kq::DType dtype = kq::DType::f32;
  std::vector<std::int64_t> shape;
  std::vector<double> v;
};

std::vector<unsigned char> bytes_of(const Host& h) {
  const std::size_t es = kq::dtype_size(h.dtype);
  std::vector<unsigned char> b(h.v.size() * es);
  for (std::size_t k = 0; k < h.v.size(); ++k)
    kq::store_rounded(h.dtype, h.v[k], b.data() + k * es);
  return b;
}

kq::TensorView view_of(void* p, const Host& h) {
  kq::TensorView t;
  t.data = p;
  t.dtype = h.dtype;
  t.device = kq::Device::cuda;
  t.rank = static_cast<int>(h.shape.size());
  std::int64_t stride = 1;
  for (int k = t.rank - 1; k >= 0; --k) {
    t.shape[k] = h.shape[static_cast<std::size_t>(k)];
    t.strides[k] = stride;
    stride *= t.shape[k];
  }
  return t;
}

// The spec's tensors at this shape: rows is dim 0 of x, the other dims of x in `inner`.
struct Problem {
  std::vector<Host> in, out;  // declaration order
  std::int64_t rows = 0, cols = 0;
};

Problem make_problem(const kq::OpSpec& spec, std::int64_t rows,
                     const std::vector<std::int64_t>& inner, unsigned seed) {
  const kq::ix::Program& p = *spec.program;
  Problem pr;
  pr.rows = rows;
  pr.cols = 1;
  for (std::int64_t e : inner) pr.cols *= e;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-3.0, 3.0), pos(0.5, 1.5), bias(-1.0, 1.0);
  int input = 0;
  for (const kq::ix::TensorDecl& d : p.decls.tensors) {
    if (d.role == kq::ix::Role::temporary) continue;
    Host h;
    h.dtype = d.dtype;
    const bool row_shaped = d.shape.size() == inner.size() + 1;
    const bool stat = d.shape.size() == 1 && d.role == kq::ix::Role::output && !inner.empty();
    if (row_shaped) h.shape.push_back(rows);
    if (!stat)
      h.shape.insert(h.shape.end(), inner.begin(), inner.end());
    else
      h.shape = {rows};
    std::int64_t n = 1;
    for (std::int64_t e : h.shape) n *= e;
    h.v.resize(static_cast<std::size_t>(n));
    if (d.role == kq::ix::Role::input) {
      for (std::size_t k = 0; k < h.v.size(); ++k) {
        // x: each row off centre by its index (the mean matters); w around 1; b around 0.
        double v = input == 0   ? u(rng) + 0.25 * static_cast<double>(k / pr.cols % 7)
                   : input == 1 ? pos(rng)
                                : bias(rng);
        h.v[k] = kq::round_to(h.dtype, v);
      }
      pr.in.push_back(std::move(h));
      ++input;
    } else {
      pr.out.push_back(std::move(h));
    }
  }
  return pr;
}

struct Result {
  kq::Status prepare = kq::Status::ok();
  kq::Status run = kq::Status::ok();
  std::vector<Host> out;
};

// Copies the inputs to the device, prepares, runs once on a new stream, copies the outputs back.
// With `second` the run is on another set of buffers (a new variant pack).
Result run_arm(kq::IKernelArm& arm, const kq::OpSpec& spec, const Problem& pr, bool second) {
  Result r;
  std::vector<std::unique_ptr<DevBuf> > bufs;
  std::vector<kq::TensorView> ins, outs;
  auto place = [&](const std::vector<Host>& hs, std::vector<kq::TensorView>& views, bool input) {
    views.clear();
    for (const Host& h : hs) {
      auto b = bytes_of(h);
      bufs.push_back(std::make_unique<DevBuf>(b.size()));
      if (input)
        REQUIRE(cudaMemcpy(bufs.back()->p, b.data(), b.size(), cudaMemcpyHostToDevice) ==
                cudaSuccess);
      else
        REQUIRE(cudaMemset(bufs.back()->p, 0xFF, std::max<std::size_t>(b.size(), 16)) ==
                cudaSuccess);
      views.push_back(view_of(bufs.back()->p, h));
    }
  };
  place(pr.in, ins, true);
  place(pr.out, outs, false);
  kq::Problem p{&spec, ins, outs};
  r.prepare = arm.prepare(p);
  if (!r.prepare.is_ok()) return r;
  if (second) {
    place(pr.in, ins, true);
    place(pr.out, outs, false);
  } else {
    for (std::size_t k = 0; k < outs.size(); ++k)  // the search wrote them
      REQUIRE(cudaMemset(outs[k].data, 0xFF,
                         pr.out[k].v.size() * kq::dtype_size(pr.out[k].dtype)) == cudaSuccess);
  }
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  r.run = arm.run(ins, outs, stream);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  cudaStreamDestroy(stream);
  r.out = pr.out;
  for (std::size_t k = 0; k < outs.size(); ++k) {
    const std::size_t es = kq::dtype_size(r.out[k].dtype);
    std::vector<unsigned char> b(r.out[k].v.size() * es);
    REQUIRE(cudaMemcpy(b.data(), outs[k].data, b.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
    for (std::size_t i = 0; i < r.out[k].v.size(); ++i)
      r.out[k].v[i] = kq::load_as_double(r.out[k].dtype, b.data() + i * es);
  }
  return r;
}

// The "chosen:" line of the most recent search, from the notes artifact.
std::string chosen_line(const kq::IKernelArm& arm) {
  for (const kq::Artifact& a : arm.artifacts()) {
    if (a.filename != "search.md") continue;
    auto at = a.content.rfind("chosen:");
    if (at == std::string::npos) return "(no plan chosen)";
    return a.content.substr(at, a.content.find('\n', at) - at);
  }
  return "(no search notes)";
}

// With KQ_CUDNN_NOTES set, the arm's search notes and plans are appended there.
void dump_notes(const kq::IKernelArm& arm) {
  const char* path = std::getenv("KQ_CUDNN_NOTES");
  if (path == nullptr) return;
  std::FILE* f = std::fopen(path, "a");
  if (f == nullptr) return;
  for (const kq::Artifact& a : arm.artifacts())
    if (a.kind == "notes" || a.kind == "plan" || a.kind == "flags")
      std::fprintf(f, "==== %s %s\n%s\n", arm.identity().name.c_str(), a.filename.c_str(),
                   a.content.c_str());
  std::fclose(f);
}

double ulp_of(kq::DType t) {
  return t == kq::DType::bf16 ? 0x1p-7 : t == kq::DType::f16 ? 0x1p-10 : 0x1p-23;
}

// Checks every output against float64; returns a one-line summary of the largest errors.
std::string check_values(const kq::OpSpec& spec, const Problem& pr, const Result& r, bool layer,
                         bool training, bool scale, bool bias, double eps) {
  const Host& x = pr.in[0];
  const Host* w = scale ? &pr.in[1] : nullptr;
  const Host* b = bias ? &pr.in[scale ? 2 : 1] : nullptr;
  const Host& y = r.out[0];
  double worst_y = 0, worst_mean = 0, worst_rstd = 0;
  int bad = 0;
  for (std::int64_t row = 0; row < pr.rows; ++row) {
    const double* xr = x.v.data() + row * pr.cols;
    double mu = 0, var = 0, big = 0;
    for (std::int64_t k = 0; k < pr.cols; ++k) big = std::max(big, std::fabs(xr[k]));
    if (layer) {
      for (std::int64_t k = 0; k < pr.cols; ++k) mu += xr[k];
      mu /= static_cast<double>(pr.cols);
    }
    for (std::int64_t k = 0; k < pr.cols; ++k) var += (xr[k] - mu) * (xr[k] - mu);
    var /= static_cast<double>(pr.cols);
    const double rstd = 1.0 / std::sqrt(var + eps);
    if (training) {
      const double got_rstd = r.out[layer ? 2 : 1].v[static_cast<std::size_t>(row)];
      const double e = std::fabs(got_rstd - rstd) / rstd;
      worst_rstd = std::max(worst_rstd, e);
      if (!(e <= 1e-4) && bad++ < 5)
        MESSAGE("row " << row << ": rstd " << got_rstd << ", expected " << rstd);
      if (layer) {
        const double got_mean = r.out[1].v[static_cast<std::size_t>(row)];
        const double em = std::fabs(got_mean - mu) / std::max(big, 1e-30);
        worst_mean = std::max(worst_mean, em);
        if (!(em <= 1e-4) && bad++ < 5)
          MESSAGE("row " << row << ": mean " << got_mean << ", expected " << mu);
      }
    }
    for (std::int64_t k = 0; k < pr.cols; ++k) {
      const double term = (xr[k] - mu) * rstd * (w ? w->v[static_cast<std::size_t>(k)] : 1.0);
      const double add = b ? b->v[static_cast<std::size_t>(k)] : 0.0;
      const double want = term + add;
      const double got = y.v[static_cast<std::size_t>(row * pr.cols + k)];
      // Two ulps of y's dtype relative to the terms; f32 gets the row sums' error as well, and
      // the cancellation of x - mean in float: near the mean, y is far smaller than what it is
      // computed from, and the float mean is off by a few u of the row's largest |x| (not of
      // this element's: on the H200, cuDNN's engine 3 at 256 x 4096 was 1.9 times a bound
      // taken from |x| + |mean|).
      const double wk = w ? std::fabs(w->v[static_cast<std::size_t>(k)]) : 1.0;
      const double cancel = 4.0 * 0x1p-24 * (std::fabs(xr[k]) + big) * rstd * wk;
      const double tol = 2.0 * ulp_of(y.dtype) * (std::fabs(term) + std::fabs(add)) +
                         (y.dtype == kq::DType::f32 ? 1e-5 * std::fabs(term) + cancel : 0.0) +
                         1e-30;
      const double e = std::fabs(got - want) / tol;
      worst_y = std::max(worst_y, std::isnan(e) ? 1e30 : e);
      if (!(std::fabs(got - want) <= tol) && bad++ < 5)
        MESSAGE("row " << row << " col " << k << ": y " << got << ", expected " << want);
    }
  }
  CHECK_MESSAGE(bad == 0, spec.op << ": " << bad << " values off");
  char line[160];
  std::snprintf(line, sizeof line,
                "y error %.3g of its tolerance, mean %.3g (of max |x|), rstd %.3g (relative)",
                worst_y, worst_mean, worst_rstd);
  return line;
}

struct Form {
  bool layer, training, scale, bias;
};

// Prepares and runs `arm` on the spec at each shape; `must` shapes have to be taken.
void exercise(kq::IKernelArm& arm, const kq::OpSpec& spec, const Form& f,
              const std::vector<std::vector<std::int64_t> >& shapes, std::size_t must_from) {
  REQUIRE(arm.supports(spec).is_ok());
  double eps = 0;
  for (const kq::ix::Node& n : spec.program->nodes)
    if (n.kind == kq::ix::NodeKind::param)
      eps = spec.program->decls.params[static_cast<std::size_t>(n.ref)].value;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    const auto& shape = shapes[s];
    std::vector<std::int64_t> inner(shape.begin() + 1, shape.end());
    Problem pr = make_problem(spec, shape[0], inner, 7u + static_cast<unsigned>(s));
    std::string where = spec.op + " " + std::to_string(pr.rows) + " x " + std::to_string(pr.cols);
    Result r = run_arm(arm, spec, pr, s == 1);
    dump_notes(arm);
    if (!r.prepare.is_ok()) {
      std::printf("cudnn_norm %s: prepare %s: %s\n", where.c_str(),
                  r.prepare.is_error() ? "error" : "unsupported", r.prepare.message().c_str());
      CHECK_MESSAGE(!r.prepare.is_error(), where << ": " << r.prepare.message());
      if (s >= must_from) FAIL_CHECK(where << " must be taken: " << r.prepare.message());
      continue;
    }
    CHECK_MESSAGE(r.run.is_ok(), where << ": run: " << r.run.message());
    if (!r.run.is_ok()) continue;
    std::string summary = check_values(spec, pr, r, f.layer, f.training, f.scale, f.bias, eps);
    std::printf("cudnn_norm %s: %s; %s\n", where.c_str(), chosen_line(arm).c_str(),
                summary.c_str());
  }
}

kq::IKernelArm* norm_arm() {
  kq::IKernelArm* a = kq::test::plugin_arm("kq_cudnn_graph", "cudnn_norm");
  if (a == nullptr) MESSAGE("skipped: no arm cudnn_norm in kq_cudnn_graph (built without cuDNN?)");
  return a;
}

// The tree's specs, or the bundle's (KQ_TEST_SOURCE_DIR, tools/bundle.sh).
kq::OpSpec shipped(const char* path) { return kq::load_spec(kq::test::source_dir() / path).op; }

const std::string kTail =
    "compute: f32\ndomain: finite\nlayouts: {contiguous_only: true}\n"
    "timing: {points: [{M: 32, N: 64}]}\ndecision: {baseline: cpu_tbb}\n";

}  // namespace

TEST_CASE("layer norm, bf16, weight and bias, training (specs/layer_norm_bf16.yaml)") {
  kq::IKernelArm* arm = norm_arm();
  if (!arm) return;
  // The qualification points first (may be declined: printed), then shapes that must run.
  exercise(*arm, shipped("specs/layer_norm_bf16.yaml"), {true, true, true, true},
           {{1, 1}, {7, 4099}, {3, 50257}, {256, 4096}}, 3);
}

TEST_CASE("RMS norm, bf16, weight, inference (specs/rms_norm_bf16.yaml)") {
  kq::IKernelArm* arm = norm_arm();
  if (!arm) return;
  exercise(*arm, shipped("specs/rms_norm_bf16.yaml"), {false, false, true, false},
           {{1, 1}, {7, 4099}, {3, 50257}, {256, 4096}}, 3);
}

TEST_CASE("layer norm, f32, no weight or bias (the arm's fillers), training") {
  kq::IKernelArm* arm = norm_arm();
  if (!arm) return;
  const std::string text =
      "kq_spec: 2\nop: layer_norm_plain_f32\ndims: {M: free, N: reduced}\nparams: {eps: 1e-5}\n"
      "inputs: {x: {dtype: f32, shape: [M, N]}}\n"
      "outputs:\n  y: {dtype: f32, shape: [M, N]}\n  mean: {dtype: f32, shape: [M]}\n"
      "  rstd: {dtype: f32, shape: [M]}\n"
      "temporaries: {var: {shape: [M]}}\n"
      "semantics: |\n"
      "  mean[m] = sum(n, x[m, n]) / N\n"
      "  var[m] = sum(n, (x[m, n] - mean[m]) * (x[m, n] - mean[m])) / N\n"
      "  rstd[m] = 1 / sqrt(var[m] + eps)\n"
      "  y[m, n] = (x[m, n] - mean[m]) * rstd[m]\n"
      "compare: {y: {rtol: 1e-4}, mean: {rtol: 1e-4}, rstd: {rtol: 1e-4}}\n" +
      kTail;
  exercise(*arm, kq::parse_spec(text, "layer_norm_plain_f32.yaml").op, {true, true, false, false},
           {{7, 4099}, {256, 4096}}, 1);
}

TEST_CASE("RMS norm, f32, no weight, rstd as an output (training)") {
  kq::IKernelArm* arm = norm_arm();
  if (!arm) return;
  const std::string text =
      "kq_spec: 2\nop: rms_norm_train_f32\ndims: {M: free, N: reduced}\nparams: {eps: 1e-6}\n"
      "inputs: {x: {dtype: f32, shape: [M, N]}}\n"
      "outputs:\n  y: {dtype: f32, shape: [M, N]}\n  rstd: {dtype: f32, shape: [M]}\n"
      "semantics: |\n"
      "  rstd[m] = 1 / sqrt(sum(n, x[m, n] * x[m, n]) / N + eps)\n"
      "  y[m, n] = x[m, n] * rstd[m]\n"
      "compare: {y: {rtol: 1e-4}, rstd: {rtol: 1e-4}}\n" +
      kTail;
  exercise(*arm, kq::parse_spec(text, "rms_norm_train_f32.yaml").op, {false, true, false, false},
           {{7, 4099}, {256, 4096}}, 1);
}

TEST_CASE("KernelBench layer norm over (C, H, W), f32, inference") {
  kq::IKernelArm* arm = norm_arm();
  if (!arm) return;
  exercise(*arm, shipped("specs/kernelbench/40_layer_norm.yaml"), {true, false, true, true},
           {{3, 5, 7, 9}, {4, 64, 16, 16}}, 1);
}

TEST_CASE("softmax is declined with the reason") {
  kq::IKernelArm* arm = norm_arm();
  if (!arm) return;
  kq::Status s = arm->supports(shipped("specs/softmax_bf16.yaml"));
  CHECK(s.is_unsupported());
  CHECK(s.message().find("SDPA") != std::string::npos);
}
#endif
