// The torch arms of format-2 (shaped) specs, generated from their statements
// (plugins/python/arms/_torch_shaped.py, run by torch_arms.py's arms), checked in the python
// plugin's own embedded module and interpreter: each spec is parsed by the host, handed to Python
// as spec_object() makes it for arms, translated, run on random inputs and compared with a
// float64 numpy reference written in tests/python/torch_shaped_check.py. Also: the layout of
// spec.program, kq.Tensor's i32, i64 and bool views, format-1 specs through the same arms, and
// torch_attention.py's and torch_conv.py's arms (tests/python/torch_attention_check.py,
// torch_conv_check.py).
// Skips the torch parts, saying why, where the plugin's Python has no torch or numpy.
//
// KQ_TEST_SHAPED_DUMP=FILE also writes the specs as JSON, for running the same checks with
// another torch (a GPU host's: python3 tests/python/torch_shaped_check.py FILE --device cuda).
#include <doctest/doctest.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "interpreter.hpp"
#include "kq_module.hpp"
#include "spec/spec.hpp"
#include "tensor_object.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
namespace py = pybind11;

// The check module, with the shipped arms' folder and this one on sys.path. Needs the GIL.
py::module_ checks() {
  static bool added = false;
  if (!added) {
    py::module_ sys = py::module_::import("sys");
    sys.attr("dont_write_bytecode") = true;  // no __pycache__ in the source tree
    py::list path = sys.attr("path");
    path.insert(0, (kq::test::source_dir() / "plugins/python/arms").string());
    path.insert(0, (kq::test::source_dir() / "tests/python").string());
    added = true;
  }
  kq::python::kq_module();  // `import kq` before the arms do
  return py::module_::import("torch_shaped_check");
}

kq::Spec load_v2(const std::string& name) {
  return kq::load_spec(kq::test::source_dir() / "tests/data/specs_v2" / name);
}

// Whether the check module says it cannot run here (no torch, no numpy); says why.
bool skipped(const py::module_& m) {
  const py::object why = m.attr("missing")();
  if (why.is_none()) return false;
  MESSAGE("skipped: " << why.cast<std::string>());
  return true;
}

// Python's answer: a list of problems, each a string; empty when all is well.
std::vector<std::string> problems(const py::object& found) {
  return found.cast<std::vector<std::string>>();
}

}  // namespace

TEST_CASE("spec.program: a format-2 spec's declarations and statements as Python data") {
  kq::python::ensure_interpreter();
  py::gil_scoped_acquire gil;
  py::module_ m = checks();
  const kq::Spec softmax = load_v2("softmax.yaml");
  const kq::Spec layer_norm = load_v2("layer_norm.yaml");
  const kq::Spec format1 = kq::load_spec(kq::test::source_dir() / "specs/residual_relu.yaml");
  const auto found = problems(m.attr("layout_problems")(kq::python::spec_object(softmax.op),
                                                        kq::python::spec_object(layer_norm.op),
                                                        kq::python::spec_object(format1.op)));
  for (const auto& p : found) CHECK_MESSAGE(false, p);
}

TEST_CASE("kq.Tensor: i32, i64 and bool views as numpy and torch tensors over kq's memory") {
  kq::python::ensure_interpreter();
  py::gil_scoped_acquire gil;
  py::module_ m = checks();
  std::int32_t i32[3] = {7, -2, 2147483647};
  std::int64_t i64[2] = {std::int64_t{1} << 40, -5};
  std::uint8_t flags[4] = {1, 0, 0, 1};
  using kq::TensorView;
  const auto view = [](void* p, std::int64_t n, kq::DType t) {
    return kq::python::tensor_object(TensorView::contiguous_1d(p, n, t, kq::Device::cpu), false);
  };
  const auto found =
      problems(m.attr("tensor_problems")(view(i32, 3, kq::DType::i32), view(i64, 2, kq::DType::i64),
                                         view(flags, 4, kq::DType::boolean)));
  for (const auto& p : found) CHECK_MESSAGE(false, p);
  // The check writes through each view: the buffers are the ones Python saw.
  CHECK(i32[1] == 5);
  CHECK(i64[1] == 6);
  CHECK(flags[1] == 1);
}

TEST_CASE("the torch arms of format-2 specs agree with a float64 numpy reference") {
  kq::python::ensure_interpreter();
  py::gil_scoped_acquire gil;
  py::module_ m = checks();
  if (skipped(m)) return;
  std::vector<kq::Spec> specs;
  for (const auto& e : fs::directory_iterator(kq::test::source_dir() / "tests/data/specs_v2"))
    if (e.path().extension() == ".yaml") specs.push_back(kq::load_spec(e.path()));
  for (const auto& [name, text] : m.attr("SPECS").cast<py::dict>())
    specs.push_back(kq::parse_spec(text.cast<std::string>(), name.cast<std::string>() + ".yaml"));
  CHECK(specs.size() >= 12);
  py::list objects;
  for (const kq::Spec& s : specs) {
    py::object spec = kq::python::spec_object(s.op);
    objects.append(spec);
    INFO(s.op.op);
    const auto found = problems(m.attr("check")(spec));
    for (const auto& p : found) CHECK_MESSAGE(false, s.op.op << ": " << p);
  }
  if (const char* dump = std::getenv("KQ_TEST_SHAPED_DUMP")) m.attr("dump")(objects, dump);
  // What they cannot translate they decline, saying why.
  for (const auto& [name, text] : m.attr("DECLINED").cast<py::dict>()) {
    const kq::Spec s = kq::parse_spec(text.cast<std::string>(), name.cast<std::string>() + ".yaml");
    const auto found = problems(m.attr("declined_problems")(kq::python::spec_object(s.op)));
    for (const auto& p : found) CHECK_MESSAGE(false, s.op.op << ": " << p);
  }
}

TEST_CASE(
    "format-1 specs: the torch arms still compute the expression, max and min of constants too") {
  kq::python::ensure_interpreter();
  py::gil_scoped_acquire gil;
  py::module_ m = checks();
  if (skipped(m)) return;
  const fs::path file = kq::test::source_dir() / "specs/residual_relu.yaml";
  std::string text = kq::test::read_file(file);
  std::vector<kq::Spec> specs{kq::load_spec(file)};
  // max(x, c) bounds x from below (clamp_min), min(r, c) from above.
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"semantics: relu(x + residual)",
                                            "semantics: max(x, 0.5) + min(residual, -0.25)"},
        {"op: residual_relu", "op: max_min_const"}}) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  specs.push_back(kq::parse_spec(text, "max_min_const.yaml"));
  for (const kq::Spec& s : specs) {
    const auto found = problems(m.attr("format1_problems")(kq::python::spec_object(s.op)));
    for (const auto& p : found) CHECK_MESSAGE(false, s.op.op << ": " << p);
  }
}

TEST_CASE("torch_sdpa: attention recognised by its statements, F.sdpa written into the output") {
  kq::python::ensure_interpreter();
  py::gil_scoped_acquire gil;
  py::module_ m = checks();
  if (skipped(m)) return;
  const fs::path file =
      kq::test::source_dir() / "specs/kernelbench/97_scaled_dot_product_attention.yaml";
  const kq::Spec attention = kq::load_spec(file);
  std::string text = kq::test::read_file(file);
  const std::string f32_out = "y: {dtype: f32, shape: [Bt, H, L, Ev]}";
  const auto at = text.find(f32_out);
  REQUIRE(at != std::string::npos);
  text.replace(at, f32_out.size(), "y: {dtype: bf16, shape: [Bt, H, L, Ev]}");
  const kq::Spec mixed = kq::parse_spec(text, "attention_bf16_out.yaml");
  const kq::Spec softmax = load_v2("softmax.yaml");
  const auto found = problems(py::module_::import("torch_attention_check")
                                  .attr("problems")(kq::python::spec_object(attention.op),
                                                    kq::python::spec_object(softmax.op),
                                                    kq::python::spec_object(mixed.op)));
  for (const auto& p : found) CHECK_MESSAGE(false, p);
}

namespace {

// A spec's text with `from` replaced by `to` (which must be there), parsed.
kq::Spec edited(const char* file, const std::string& from, const std::string& to) {
  std::string text = kq::test::read_file(kq::test::source_dir() / "specs/kernelbench" / file);
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, file, " lacks ", from);
  text.replace(at, from.size(), to);
  return kq::parse_spec(text, std::string("edited ") + file);
}

}  // namespace

TEST_CASE("torch_conv: convolutions recognised by their statements, F.conv into the output") {
  kq::python::ensure_interpreter();
  py::gil_scoped_acquire gil;
  py::module_ m = checks();
  if (skipped(m)) return;
  py::list convs;
  // Every shipped convolution of one statement.
  for (const auto& e : fs::directory_iterator(kq::test::source_dir() / "specs/kernelbench")) {
    const std::string name = e.path().filename().string();
    if (name.find("conv") == std::string::npos || name.find("pointwise") != std::string::npos ||
        name.find("separable") != std::string::npos)
      continue;
    convs.append(kq::python::spec_object(kq::load_spec(e.path()).op));
  }
  CHECK(convs.size() == 33);
  const kq::Spec softmax = load_v2("softmax.yaml");
  // A true convolution (the kernel flipped), a pad F.conv does not make, mixed dtypes.
  const kq::Spec flipped = edited("55_conv_standard_2d_asymmetric_input.yaml",
                                  "x[b, c, i + p, j + q]", "x[b, c, i - p + 2, j - q + 2]");
  const kq::Spec pad_one =
      edited("80_conv_standard_2d_dilated_padded.yaml", "H, W], pad: 0}", "H, W], pad: 1}");
  const kq::Spec mixed = edited("67_conv_standard_1d.yaml", "y: {dtype: f32", "y: {dtype: bf16");
  // A bias of one group's channels, which F.conv_transpose's bias (every channel) is not.
  std::string text = kq::test::read_file(
      kq::test::source_dir() / "specs/kernelbench/75_conv_transposed_2d_grouped_dilated.yaml");
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"w: {dtype: f32, shape: [G, CG, OG, 3, 5]}",
                                            "w: {dtype: f32, shape: [G, CG, OG, 3, 5]}, "
                                            "bias: {dtype: f32, shape: [OG]}"},
        {"* w[g, c, o, p, q])", "* w[g, c, o, p, q]) + bias[o]"}}) {
    const auto at = text.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    text.replace(at, from.size(), to);
  }
  const kq::Spec grouped_bias = kq::parse_spec(text, "grouped_bias.yaml");
  py::list others;
  others.append(py::make_tuple(kq::python::spec_object(softmax.op), "computes a convolution"));
  others.append(py::make_tuple(kq::python::spec_object(flipped.op), "S and D at least 1"));
  others.append(py::make_tuple(kq::python::spec_object(pad_one.op), "F.conv pads with 0 only"));
  others.append(py::make_tuple(kq::python::spec_object(mixed.op), "of one float dtype"));
  others.append(
      py::make_tuple(kq::python::spec_object(grouped_bias.op), "grouped convolution without"));
  const auto found =
      problems(py::module_::import("torch_conv_check").attr("problems")(convs, others));
  for (const auto& p : found) CHECK_MESSAGE(false, p);
  // The CUDA arm's cuDNN precision: IEEE under an f32 contract, TF32 where admitted.
  const kq::Spec conv2d = kq::load_spec(kq::test::source_dir() /
                                        "specs/kernelbench/63_conv_standard_2d_square_kernel.yaml");
  for (const auto& p :
       problems(py::module_::import("torch_conv_check")
                    .attr("precision_problems")(kq::python::spec_object(conv2d.op))))
    CHECK_MESSAGE(false, p);
  const kq::Spec separable = kq::load_spec(kq::test::source_dir() /
                                           "specs/kernelbench/86_conv_depthwise_separable_2d.yaml");
  for (const auto& p :
       problems(py::module_::import("torch_conv_check")
                    .attr("separable_problems")(kq::python::spec_object(separable.op))))
    CHECK_MESSAGE(false, p);
}
