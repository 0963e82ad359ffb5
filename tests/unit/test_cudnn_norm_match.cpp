// cudnn_norm's recognition without a GPU or a cuDNN handle (plugins/cudnn_graph/norm_match.cpp):
// which format-2 specs it computes, read from their structure only, and the reason it gives for
// every other one: softmax (no standalone softmax in cuDNN's graph API), other computations,
// dtypes, the compute type, the domain and the layouts.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "spec/spec.hpp"

// The plugin's pure part, compiled into this test (plugins are not libraries to link against).
#include "../../plugins/cudnn_graph/norm_match.cpp"

namespace fs = std::filesystem;
using kq::DType;
using kq::cudnn_graph::match_norm;
using kq::cudnn_graph::NormKind;
using kq::cudnn_graph::NormMatch;

namespace {

kq::Spec shipped(const std::string& path) { return kq::load_spec(fs::path(KQ_SOURCE_DIR) / path); }

// A layer norm over the last dim with each section replaceable, so that a test changes one thing.
struct LayerNorm {
  std::string params = "params: {eps: 1e-5}\n";
  std::string compute = "compute: f32\n";
  std::string inputs =
      "inputs:\n  x: {dtype: f32, shape: [M, N]}\n  w: {dtype: f32, shape: [N]}\n"
      "  b: {dtype: f32, shape: [N]}\n";
  std::string outputs =
      "outputs:\n  y: {dtype: f32, shape: [M, N]}\n  mean: {dtype: f32, shape: [M]}\n"
      "  rstd: {dtype: f32, shape: [M]}\n";
  std::string temporaries = "temporaries: {var: {shape: [M]}}\n";
  std::string semantics =
      "semantics: |\n"
      "  mean[m] = sum(n, x[m, n]) / N\n"
      "  var[m] = sum(n, (x[m, n] - mean[m]) * (x[m, n] - mean[m])) / N\n"
      "  rstd[m] = 1 / sqrt(var[m] + eps)\n"
      "  y[m, n] = (x[m, n] - mean[m]) * rstd[m] * w[n] + b[n]\n";
  std::string compare = "compare: {y: {rtol: 1e-3}, mean: {rtol: 1e-3}, rstd: {rtol: 1e-3}}\n";
  std::string domain = "domain: finite\n";
  std::string layouts = "layouts: {contiguous_only: true}\n";

  std::string text() const {
    return "kq_spec: 2\nop: t\ndims: {M: free, N: reduced}\n" + params + compute + inputs +
           outputs + temporaries + semantics + compare + domain + layouts +
           "timing: {points: [{M: 32, N: 64}]}\ndecision: {baseline: cpu_tbb}\n";
  }
  kq::OpSpec spec() const { return kq::parse_spec(text(), "t.yaml").op; }
};

// The reason the spec is declined; fails the test when it is taken.
std::string reason(const kq::OpSpec& spec) {
  NormMatch m;
  kq::Status s = match_norm(spec, m);
  CHECK(s.is_unsupported());
  return s.message();
}

NormMatch taken(const kq::OpSpec& spec) {
  NormMatch m;
  kq::Status s = match_norm(spec, m);
  INFO(s.message());
  CHECK(s.is_ok());
  return m;
}

bool contains(const std::string& text, const std::string& part) {
  INFO(text);
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("the shipped layer norms: training phase, weight and bias") {
  for (const char* path : {"specs/layer_norm_bf16.yaml", "tests/data/specs_v2/layer_norm.yaml"}) {
    INFO(path);
    NormMatch m = taken(shipped(path).op);
    CHECK(m.form.kind == NormKind::layer);
    CHECK(m.form.rank == 2);
    CHECK(m.form.training);
    CHECK(m.form.scale);
    CHECK(m.form.bias);
    CHECK(m.eps == 1e-5);
    CHECK(m.x == DType::bf16);
    CHECK(m.scale == DType::bf16);
    CHECK(m.bias == DType::bf16);
    CHECK(m.y == DType::bf16);
  }
}

TEST_CASE("the shipped RMS norm: inference phase (rstd is a temporary), weight") {
  NormMatch m = taken(shipped("specs/rms_norm_bf16.yaml").op);
  CHECK(m.form.kind == NormKind::rms);
  CHECK_FALSE(m.form.training);
  CHECK(m.form.scale);
  CHECK_FALSE(m.form.bias);
  CHECK(m.eps == 1e-6);
}

TEST_CASE("KernelBench's layer norm over (C, H, W): rank 4, inference") {
  NormMatch m = taken(shipped("specs/kernelbench/40_layer_norm.yaml").op);
  CHECK(m.form.kind == NormKind::layer);
  CHECK(m.form.rank == 4);
  CHECK_FALSE(m.form.training);
  CHECK(m.form.scale);
  CHECK(m.form.bias);
  CHECK(m.x == DType::f32);
}

TEST_CASE("softmax and log-softmax are declined: no standalone softmax in cuDNN's graph API") {
  for (const char* path : {"specs/softmax_bf16.yaml", "specs/kernelbench/23_softmax.yaml",
                           "tests/data/specs_v2/softmax.yaml"}) {
    INFO(path);
    const std::string r = reason(shipped(path).op);
    CHECK(r.rfind("softmax: ", 0) == 0);
    CHECK(contains(r, "no standalone softmax operation"));
    CHECK(contains(r, "SDPA"));
  }
  const std::string r = reason(shipped("specs/kernelbench/24_log_softmax.yaml").op);
  CHECK(r.rfind("log-softmax: ", 0) == 0);
  CHECK(contains(r, "SDPA"));
}

TEST_CASE("other computations are declined with what the arm computes") {
  // RMS norm over C of [B, C, H, W]: not over every dim but the first.
  for (const char* path :
       {"specs/kernelbench/36_rms_norm.yaml", "specs/kernelbench/33_batch_norm.yaml",
        "specs/kernelbench/47_sum_reduction.yaml", "tests/data/specs_v2/cross_entropy.yaml"}) {
    INFO(path);
    CHECK(contains(reason(shipped(path).op), "computes layer norm and RMS norm over every dim"));
  }
  CHECK(contains(reason(shipped("specs/residual_relu.yaml").op), "format-1"));
}

TEST_CASE("every shipped format-2 spec is taken or declined with a reason") {
  int taken_count = 0;
  for (const char* dir : {"specs", "specs/kernelbench", "tests/data/specs_v2"})
    for (const auto& e : fs::directory_iterator(fs::path(KQ_SOURCE_DIR) / dir)) {
      if (e.path().extension() != ".yaml") continue;
      kq::Spec spec = kq::load_spec(e.path());
      if (!spec.op.program) continue;
      NormMatch m;
      kq::Status s = match_norm(spec.op, m);
      INFO(e.path().string() << ": " << s.message());
      CHECK_FALSE(s.is_error());
      CHECK((s.is_ok() || !s.message().empty()));
      taken_count += s.is_ok();
    }
  CHECK(taken_count == 4);  // the two layer norms, the RMS norm, KernelBench's layer norm
}

TEST_CASE("layer norm without weight or bias: the arm fills them in") {
  LayerNorm ln;
  ln.inputs = "inputs: {x: {dtype: f16, shape: [M, N]}}\n";
  ln.outputs =
      "outputs:\n  y: {dtype: f16, shape: [M, N]}\n  mean: {dtype: f32, shape: [M]}\n"
      "  rstd: {dtype: f32, shape: [M]}\n";
  ln.semantics =
      "semantics: |\n"
      "  mean[m] = sum(n, x[m, n]) / N\n"
      "  var[m] = sum(n, (x[m, n] - mean[m]) * (x[m, n] - mean[m])) / N\n"
      "  rstd[m] = 1 / sqrt(var[m] + eps)\n"
      "  y[m, n] = (x[m, n] - mean[m]) * rstd[m]\n";
  ln.compare = "compare: {y: {rtol: 1e-2}, mean: {rtol: 1e-3}, rstd: {rtol: 1e-3}}\n";
  NormMatch m = taken(ln.spec());
  CHECK(m.form.training);
  CHECK_FALSE(m.form.scale);
  CHECK_FALSE(m.form.bias);
  CHECK(m.scale == DType::f16);  // the fillers take x's dtype
  CHECK(m.bias == DType::f16);
}

TEST_CASE("layer norm with its statistics as temporaries: inference") {
  LayerNorm ln;
  ln.outputs = "outputs: {y: {dtype: f32, shape: [M, N]}}\n";
  ln.temporaries = "temporaries: {mean: {shape: [M]}, var: {shape: [M]}, rstd: {shape: [M]}}\n";
  ln.compare = "compare: {y: {rtol: 1e-3}}\n";
  NormMatch m = taken(ln.spec());
  CHECK_FALSE(m.form.training);
  CHECK(m.form.scale);
  CHECK(m.form.bias);
}

TEST_CASE("RMS norm with rstd as an output: training; without a weight; over two dims") {
  const std::string tail =
      "compute: f32\ndomain: finite\nlayouts: {contiguous_only: true}\n"
      "timing: {points: [{M: 32, N: 64}]}\ndecision: {baseline: cpu_tbb}\n";
  const std::string training =
      "kq_spec: 2\nop: t\ndims: {M: free, N: reduced}\nparams: {eps: 1e-6}\n"
      "inputs: {x: {dtype: f32, shape: [M, N]}}\n"
      "outputs:\n  y: {dtype: f32, shape: [M, N]}\n  rstd: {dtype: f32, shape: [M]}\n"
      "semantics: |\n"
      "  rstd[m] = 1 / sqrt(sum(n, x[m, n] * x[m, n]) / N + eps)\n"
      "  y[m, n] = x[m, n] * rstd[m]\n"
      "compare: {y: {rtol: 1e-3}, rstd: {rtol: 1e-3}}\n" +
      tail;
  NormMatch m = taken(kq::parse_spec(training, "t.yaml").op);
  CHECK(m.form.kind == NormKind::rms);
  CHECK(m.form.training);
  CHECK_FALSE(m.form.scale);

  const std::string two_dims =
      "kq_spec: 2\nop: t\ndims: {M: free, H: reduced, W: reduced}\nparams: {eps: 1e-6}\n"
      "inputs:\n  x: {dtype: bf16, shape: [M, H, W]}\n  g: {dtype: bf16, shape: [H, W]}\n"
      "outputs: {y: {dtype: bf16, shape: [M, H, W]}}\n"
      "temporaries: {rstd: {shape: [M]}}\n"
      "semantics: |\n"
      "  rstd[m] = 1 / sqrt(sum((h, w), x[m, h, w] * x[m, h, w]) / (H * W) + eps)\n"
      "  y[m, h, w] = x[m, h, w] * rstd[m] * g[h, w]\n"
      "compare: {y: {ulp: 2}}\n"
      "compute: f32\ndomain: finite\nlayouts: {contiguous_only: true}\n"
      "timing: {points: [{M: 32, H: 8, W: 8}]}\ndecision: {baseline: cpu_tbb}\n";
  m = taken(kq::parse_spec(two_dims, "t.yaml").op);
  CHECK(m.form.rank == 3);
  CHECK(m.form.scale);
  CHECK_FALSE(m.form.training);
}

TEST_CASE("eps is the param the statements use, wherever it is declared") {
  LayerNorm ln;
  ln.params = "params: {alpha: 2.0, eps: 1e-3}\n";
  // alpha unused by the statements; a spec loader that refuses unused params would say so here.
  kq::OpSpec spec;
  try {
    spec = ln.spec();
  } catch (const std::exception& e) {
    MESSAGE("a spec with an unused param does not load: " << e.what());
    return;
  }
  CHECK(taken(spec).eps == 1e-3);
}

TEST_CASE("declined: dtypes, statistics not in f32, compute, domain, strided layouts") {
  {
    LayerNorm ln;
    ln.inputs =
        "inputs:\n  x: {dtype: f64, shape: [M, N]}\n  w: {dtype: f32, shape: [N]}\n"
        "  b: {dtype: f32, shape: [N]}\n";
    ln.compute = "compute: f64\n";
    CHECK(contains(reason(ln.spec()), "input x is f64"));
  }
  {
    LayerNorm ln;
    ln.outputs =
        "outputs:\n  y: {dtype: bf16, shape: [M, N]}\n  mean: {dtype: bf16, shape: [M]}\n"
        "  rstd: {dtype: f32, shape: [M]}\n";
    CHECK(contains(reason(ln.spec()), "statistics output mean is bf16"));
  }
  {
    LayerNorm ln;
    ln.compute = "compute: f64\n";
    CHECK(contains(reason(ln.spec()), "computes in float32 only"));
  }
  {
    LayerNorm ln;
    ln.domain = "domain: ieee\n";
    CHECK(contains(reason(ln.spec()), "finite inputs only"));
  }
  {
    LayerNorm ln;
    ln.layouts = "layouts: {contiguous_only: false}\n";
    CHECK(contains(reason(ln.spec()), "contiguous tensors only"));
  }
}

TEST_CASE("a reordered statement is another computation") {
  LayerNorm ln;
  // y = w * (...) + b: the same value, another canonical form; declined, never guessed.
  ln.semantics =
      "semantics: |\n"
      "  mean[m] = sum(n, x[m, n]) / N\n"
      "  var[m] = sum(n, (x[m, n] - mean[m]) * (x[m, n] - mean[m])) / N\n"
      "  rstd[m] = 1 / sqrt(var[m] + eps)\n"
      "  y[m, n] = w[n] * ((x[m, n] - mean[m]) * rstd[m]) + b[n]\n";
  CHECK(contains(reason(ln.spec()), "computes layer norm and RMS norm"));
}
