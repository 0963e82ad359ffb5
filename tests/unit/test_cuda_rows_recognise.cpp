// Which format-2 specs the cuda_rows arms take (plugins/cuda_rows/recognise.hpp): by the
// program's structure alone, then their contract (f32/f16/bf16 tensors, compute f32, finite
// domain, contiguous rows, eps, x and y of one dtype), each declined with its reason. Needs no
// GPU: recognise() is pure C++, and the plugin's arms answer supports() without touching the
// device; the plugin part runs where the plugin was built (CUDA), and says so elsewhere.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "../../plugins/cuda_rows/recognise.hpp"
#include "plugin_arms.hpp"
#include "spec/spec.hpp"

namespace {

namespace fs = std::filesystem;
using kq::rows::RowOp;

// Every format-2 spec in the tree, by its path from the source root.
const std::map<std::string, kq::Spec>& shaped_specs() {
  static const std::map<std::string, kq::Spec> specs = [] {
    std::map<std::string, kq::Spec> s;
    for (const char* dir : {"specs", "specs/kernelbench", "tests/data/specs_v2"}) {
      for (const auto& e : fs::directory_iterator(fs::path(KQ_SOURCE_DIR) / dir)) {
        if (e.path().extension() != ".yaml") continue;
        kq::Spec spec = kq::load_spec(e.path());
        if (spec.op.program) s.emplace(std::string(dir) + "/" + e.path().filename().string(), spec);
      }
    }
    return s;
  }();
  return specs;
}

// The specs each op's arm must take; it must decline every other.
const std::map<RowOp, std::set<std::string>> kTakes = {
    {RowOp::softmax,
     {"specs/softmax_bf16.yaml", "specs/kernelbench/23_softmax.yaml",
      "tests/data/specs_v2/softmax.yaml", "tests/data/specs_v2/softmax_f32.yaml"}},
    {RowOp::log_softmax, {"specs/kernelbench/24_log_softmax.yaml"}},
    {RowOp::layer_norm,
     {"specs/layer_norm_bf16.yaml", "specs/kernelbench/40_layer_norm.yaml",
      "tests/data/specs_v2/layer_norm.yaml"}},
    {RowOp::rms_norm, {"specs/rms_norm_bf16.yaml"}},
};

const kq::OpSpec& spec_at(const std::string& path) {
  auto it = shaped_specs().find(path);
  REQUIRE_MESSAGE(it != shaped_specs().end(), path);
  return it->second.op;
}

// A copy of `spec` whose program's tensor `name` has dtype `t`.
kq::OpSpec with_dtype(const kq::OpSpec& spec, const std::string& name, kq::DType t) {
  kq::OpSpec s = spec;
  auto p = std::make_shared<kq::ix::Program>(*spec.program);
  for (auto& d : p->decls.tensors)
    if (d.name == name) d.dtype = t;
  s.program = p;
  return s;
}

}  // namespace

TEST_CASE("each cuda_rows op takes exactly its specs, by structure") {
  REQUIRE(!shaped_specs().empty());
  for (const auto& [op, takes] : kTakes) {
    for (const auto& [path, spec] : shaped_specs()) {
      const kq::Status s = kq::rows::recognise(op, spec.op);
      INFO(kq::rows::to_string(op) << " on " << path << ": " << s.message());
      CHECK(s.is_ok() == (takes.count(path) == 1));
      if (!s.is_ok() && takes.count(path) == 0) {
        CHECK(s.is_unsupported());
        CHECK(s.message().find("computes ") == 0);
        CHECK(s.message().find("canonical form") != std::string::npos);
      }
    }
  }
}

TEST_CASE("the cuda_rows contract declines, each for its reason") {
  const kq::OpSpec& softmax = spec_at("specs/softmax_bf16.yaml");
  const kq::OpSpec& layer_norm = spec_at("specs/layer_norm_bf16.yaml");
  const kq::OpSpec& rms = spec_at("specs/rms_norm_bf16.yaml");
  auto reason = [](RowOp op, const kq::OpSpec& s) {
    const kq::Status st = kq::rows::recognise(op, s);
    CHECK(st.is_unsupported());
    return st.message();
  };
  // A name is not a computation: softmax's op name on RMS norm's statements is RMS norm.
  kq::OpSpec renamed = rms;
  renamed.op = "softmax";
  CHECK(kq::rows::recognise(RowOp::softmax, renamed).is_unsupported());
  CHECK(kq::rows::recognise(RowOp::rms_norm, renamed).is_ok());

  CHECK(reason(RowOp::softmax, with_dtype(softmax, "x", kq::DType::f64)) ==
        "input x is f64: the kernel loads and stores f32, f16 and bf16 only");
  CHECK(reason(RowOp::layer_norm, with_dtype(layer_norm, "mean", kq::DType::i32)) ==
        "output mean is i32: the kernel loads and stores f32, f16 and bf16 only");
  CHECK(reason(RowOp::softmax, with_dtype(softmax, "y", kq::DType::f32)) ==
        "input x is bf16 and output y f32: the kernels are built for one element type in and "
        "out");
  // w, b, mean and rstd each have a dtype of their own (loaded and stored one by one).
  CHECK(
      kq::rows::recognise(RowOp::layer_norm, with_dtype(layer_norm, "w", kq::DType::f32)).is_ok());
  CHECK(kq::rows::recognise(RowOp::layer_norm, with_dtype(layer_norm, "rstd", kq::DType::bf16))
            .is_ok());

  kq::OpSpec s = softmax;
  s.compute = kq::DType::f64;
  CHECK(reason(RowOp::softmax, s) ==
        "computes in float32 only, and the spec's compute type is f64");
  s = softmax;
  s.domain = kq::Domain::ieee;
  CHECK(reason(RowOp::softmax, s).find("finite inputs only") == 0);
  s = softmax;
  s.layouts.contiguous_only = false;
  CHECK(reason(RowOp::softmax, s) == "contiguous rows only, and the spec admits strided views");
  s = rms;
  auto p = std::make_shared<kq::ix::Program>(*rms.program);
  p->decls.params.clear();
  s.program = p;
  // The canonical text names eps only by place (p0): without a param the program is the same.
  if (kq::ix::computes(*p, kq::rows::kRmsNorm))
    CHECK(reason(RowOp::rms_norm, s) == "needs eps, the spec's first param");
  kq::OpSpec format1 = softmax;
  format1.program = nullptr;
  CHECK(reason(RowOp::softmax, format1) == "format-2 (shaped) specs only");
}

TEST_CASE("the cuda_rows plugin's arms answer supports() as recognise() does") {
  const fs::path so = kq::test::plugin_file("kq_cuda_rows");
  if (!fs::exists(so)) {
    MESSAGE("skipped: " << so.string() << " was not built (no CUDA here)");
    return;
  }
  const std::map<std::string, RowOp> arms = {{"cuda_softmax", RowOp::softmax},
                                             {"cuda_log_softmax", RowOp::log_softmax},
                                             {"cuda_layer_norm", RowOp::layer_norm},
                                             {"cuda_rms_norm", RowOp::rms_norm}};
  for (const auto& [name, op] : arms) {
    kq::IKernelArm* arm = kq::test::plugin_arm("kq_cuda_rows", name);
    REQUIRE_MESSAGE(arm != nullptr, name);
    const kq::ArmIdentity id = arm->identity();
    CHECK(id.family == "cuda");
    CHECK(id.device == kq::Device::cuda);
    CHECK(id.expected_rejection.empty());
    for (const auto& [path, spec] : shaped_specs()) {
      const kq::Status s = arm->supports(spec.op);
      INFO(name << " on " << path << ": " << s.message());
      CHECK(s.is_ok() == (kTakes.at(op).count(path) == 1));
      CHECK(s.message() == kq::rows::recognise(op, spec.op).message());
    }
    // Format-1 specs: declined, never an error.
    const kq::Spec relu = kq::load_spec(fs::path(KQ_SOURCE_DIR) / "specs/residual_relu.yaml");
    CHECK(arm->supports(relu.op).is_unsupported());
  }
  const fs::path broken =
      kq::test::bin_dir() / "plugins" / "full_only" / "libkq_broken_cuda_shaped.so";
  REQUIRE(fs::exists(broken));
  kq::PluginSet set = kq::load_plugins({{}, {broken}});
  REQUIRE(set.arms.size() == 1);
  const kq::ArmIdentity id = set.arms[0].identity;
  CHECK(id.name == "broken_cuda_softmax_offsets32");
  CHECK(id.family == "broken");
  CHECK(id.expected_rejection == "values|input_modified|output_guard|cuda_error");
  for (const auto& [path, spec] : shaped_specs())
    CHECK(set.arms[0].arm->supports(spec.op).is_ok() ==
          (kTakes.at(RowOp::softmax).count(path) == 1));
}
