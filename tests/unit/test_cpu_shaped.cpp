// cpu_tbb on format-2 (shaped) specs: the specs of tests/data/specs_v2 loaded as the host loads
// them, run through the plugin (dlopen, as test_cpu_arm.cpp) on random inputs at a few points,
// and each output held against core's float64 reference (kq::ix::evaluate) with the spec's own
// compare rule. Also: views outside the contract are refused, strided views are read through
// their strides where the spec admits them, and out-of-range subscripts and gathers are errors.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "indexed/evaluate.hpp"
#include "indexed/names.hpp"
#include "indexed/parser.hpp"
#include "kq/half.hpp"
#include "kq/plugin_api.hpp"
#include "spec/spec.hpp"

namespace {

namespace fs = std::filesystem;
namespace ix = kq::ix;
using kq::DType;
using kq::TensorView;

const fs::path kV2 = fs::path(KQ_SOURCE_DIR) / "tests/data/specs_v2";
constexpr const char* kPluginPath = KQ_BIN_DIR "/plugins/libkq_cpu.so";

// --- loading the arm (as test_cpu_arm.cpp) ---------------------------------------------------

void* plugin_handle() {
  static void* h = dlopen(kPluginPath, RTLD_NOW | RTLD_LOCAL);  // never closed: arms outlive tests
  return h;
}

std::unique_ptr<kq::IKernelArm> make_arm() {
  REQUIRE_MESSAGE(plugin_handle() != nullptr, "dlopen ", kPluginPath, ": ", dlerror());
  void* sym = dlsym(plugin_handle(), "kq_create_arms");
  REQUIRE(sym != nullptr);
  kq::ArmList arms;
  reinterpret_cast<void (*)(kq::ArmList&)> (*static_cast<const void* const*>(sym))(arms);
  for (auto& a : arms)
    if (a->identity().name == "cpu_tbb") return std::move(a);
  FAIL("no arm named cpu_tbb");
  return nullptr;
}

// --- problems --------------------------------------------------------------------------------

// Integer inputs hold indices: each test says into what range, from the dims.
using IndexRange = std::function<std::int64_t(const ix::DimValues&)>;

struct Problem {
  ix::DimValues dims;
  kq::Point point;
  ix::Tensors inputs;   // dense, what the reference reads
  ix::Tensors outputs;  // what the arm writes
  std::vector<TensorView> in_views, out_views;
};

std::vector<std::int64_t> shape_of(const ix::TensorDecl& t, const ix::DimValues& dims) {
  std::vector<std::int64_t> s;
  for (const ix::Extent& e : t.shape)
    s.push_back(e.is_dim() ? dims.find(e.name)->second : e.constant);
  return s;
}

TensorView view_of(ix::Buffer& b) {
  TensorView v;
  v.data = b.bytes.data();
  v.dtype = b.dtype;
  v.device = kq::Device::cpu;
  v.rank = static_cast<int>(b.shape.size());
  std::int64_t stride = 1;
  for (int d = v.rank - 1; d >= 0; --d) {
    v.shape[d] = b.shape[static_cast<std::size_t>(d)];
    v.strides[d] = stride;
    stride *= v.shape[d];
  }
  return v;
}

// Values nonzero, of both signs, in [-3, 3]; integer inputs uniform in [0, range).
Problem make_problem(const ix::Program& p, const ix::DimValues& dims, unsigned seed,
                     const IndexRange& range = {}) {
  Problem pr;
  pr.dims = dims;
  for (const ix::DimDecl& d : p.decls.dims) pr.point.dims.push_back(dims.find(d.name)->second);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mag(0.05, 3.0);
  for (const ix::TensorDecl& t : p.decls.tensors) {
    if (t.role == ix::Role::temporary) continue;
    ix::Buffer b = ix::Buffer::zeros(t.dtype, shape_of(t, dims));
    if (t.role == ix::Role::input) {
      for (std::int64_t i = 0; i < b.numel(); ++i) {
        if (kq::is_integer(t.dtype)) {
          REQUIRE(range);
          b.set(i, static_cast<double>(rng() % static_cast<std::uint64_t>(range(dims))));
        } else {
          b.set(i, (rng() & 1 ? 1.0 : -1.0) * mag(rng));
        }
      }
    }
    auto& where = t.role == ix::Role::input ? pr.inputs : pr.outputs;
    where.emplace(t.name, std::move(b));
  }
  // Views in declaration order, inputs then outputs, as the host passes them.
  for (const ix::TensorDecl& t : p.decls.tensors) {
    if (t.role == ix::Role::input) pr.in_views.push_back(view_of(pr.inputs.at(t.name)));
    if (t.role == ix::Role::output) pr.out_views.push_back(view_of(pr.outputs.at(t.name)));
  }
  return pr;
}

Problem make_problem(const kq::Spec& spec, const ix::DimValues& dims, unsigned seed,
                     const IndexRange& range = {}) {
  return make_problem(*spec.shaped->program, dims, seed, range);
}

kq::Status run_arm(kq::IKernelArm& arm, const kq::OpSpec& op, const Problem& pr) {
  kq::Problem problem{&op, pr.in_views, pr.out_views, nullptr};
  if (kq::Status s = arm.prepare(problem); !s.is_ok()) return s;
  return arm.run(pr.in_views, pr.out_views, nullptr);
}

kq::Status run_arm(kq::IKernelArm& arm, const kq::Spec& spec, const Problem& pr) {
  return run_arm(arm, spec.op, pr);
}

// --- comparison --------------------------------------------------------------------------------

// The bits of element i of a floating-point buffer mapped to integers in the order of the values,
// so that the difference of two is their distance in ulps.
std::int64_t ordered(const ix::Buffer& b, std::int64_t i) {
  const unsigned char* p = b.bytes.data() + static_cast<std::size_t>(i) * kq::dtype_size(b.dtype);
  std::int64_t bits = 0, sign = 0;
  switch (b.dtype) {
    case DType::f16:
    case DType::bf16: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      bits = v & 0x7fff;
      sign = v >> 15;
      break;
    }
    case DType::f32: {
      std::uint32_t v;
      std::memcpy(&v, p, 4);
      bits = v & 0x7fffffffu;
      sign = v >> 31;
      break;
    }
    default: {
      std::uint64_t v;
      std::memcpy(&v, p, 8);
      bits = static_cast<std::int64_t>(v & 0x7fffffffffffffffull);
      sign = static_cast<std::int64_t>(v >> 63);
    }
  }
  return sign ? -bits : bits;
}

std::string short_text(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", x);
  return b;
}

// The largest error seen over the tolerance, per output; a test fails above 1.
struct Worst {
  double ratio = 0.0;
  std::string text;
};

void compare_outputs(const kq::Spec& spec, const Problem& pr, const ix::Tensors& want,
                     std::map<std::string, Worst>& worst) {
  const kq::ShapedContract& c = *spec.shaped;
  const ix::Program& p = *c.program;
  const double u = kq::unit_roundoff(c.compute);
  for (const kq::ShapedCompare& rule : c.compare) {
    const ix::TensorDecl& t = p.decls.tensors[static_cast<std::size_t>(rule.output)];
    const ix::Buffer& got = pr.outputs.at(t.name);
    const ix::Buffer& ref = want.at(t.name);
    REQUIRE(got.numel() == ref.numel());
    double atol = 0.0, rtol = 0.0;
    if (rule.kind == kq::ShapedCompare::Kind::tolerance) {
      if (rule.atol) atol = kq::evaluate(*rule.atol, c, pr.point);
      if (rule.rtol) rtol = kq::evaluate(*rule.rtol, c, pr.point);
    } else if (rule.kind == kq::ShapedCompare::Kind::accumulation_bound) {
      // Here: 8 u sqrt(terms), the terms being the largest input's elements.
      double terms = 1.0;
      for (const auto& [name, b] : pr.inputs)
        terms = std::max(terms, static_cast<double>(b.numel()));
      rtol = 8.0 * u * std::sqrt(terms);
    }
    Worst& w = worst[t.name];
    for (std::int64_t i = 0; i < got.numel(); ++i) {
      const double g = got.get(i), r = ref.get(i);
      INFO(spec.op.op, " output ", t.name, " element ", i, ": got ", g, ", want ", r);
      double ratio = 0.0;
      std::string how;
      switch (rule.kind) {
        case kq::ShapedCompare::Kind::bitwise:
          CHECK(std::memcmp(got.bytes.data() + i * kq::dtype_size(got.dtype),
                            ref.bytes.data() + i * kq::dtype_size(ref.dtype),
                            kq::dtype_size(got.dtype)) == 0);
          continue;
        case kq::ShapedCompare::Kind::ulp: {
          const auto d = static_cast<double>(std::llabs(ordered(got, i) - ordered(ref, i)));
          ratio = rule.max_ulp > 0 ? d / static_cast<double>(rule.max_ulp) : (d > 0 ? 2.0 : 0.0);
          how = std::to_string(static_cast<std::int64_t>(d)) + " ulp of " +
                std::to_string(rule.max_ulp);
          break;
        }
        default: {
          const double tol = atol + rtol * std::fabs(r);
          const double err = std::fabs(g - r);
          ratio = tol > 0 ? err / tol : (err > 0 ? 2.0 : 0.0);
          how = "|err| " + short_text(err) + " (tolerance " + short_text(tol) + ")";
        }
      }
      CHECK(ratio <= 1.0);
      if (ratio >= w.ratio) {
        w.ratio = ratio;
        w.text = how;
      }
    }
  }
}

std::string point_text(const ix::DimValues& dims) {
  std::string s;
  for (const auto& [name, v] : dims) s += (s.empty() ? "" : ", ") + name + "=" + std::to_string(v);
  return s;
}

// Runs the arm and the reference at each point and compares; reports the worst error per output.
void check_spec_at(const std::string& file, const std::vector<ix::DimValues>& points,
                   const IndexRange& range = {}) {
  const kq::Spec spec = kq::load_spec(kV2 / file);
  REQUIRE(spec.shaped);
  auto arm = make_arm();
  const kq::Status sup = arm->supports(spec.op);
  INFO(sup.message());
  REQUIRE(sup.is_ok());
  unsigned seed = 1;
  for (const ix::DimValues& dims : points) {
    INFO(file, " at ", point_text(dims));
    Problem pr = make_problem(spec, dims, seed++, range);
    const kq::Status s = run_arm(*arm, spec, pr);
    INFO(s.message());
    REQUIRE(s.is_ok());
    const ix::Tensors want = ix::evaluate(*spec.shaped->program, dims, pr.inputs);
    std::map<std::string, Worst> worst;
    compare_outputs(spec, pr, want, worst);
    for (const auto& [name, w] : worst)
      MESSAGE(file, " at ", point_text(dims), ": ", name, " worst ",
              w.text.empty() ? "bitwise equal" : w.text, ", ", short_text(w.ratio),
              " of the tolerance");
  }
}

const std::vector<ix::DimValues> kMN = {
    {{"M", 3}, {"N", 1}}, {{"M", 5}, {"N", 33}}, {{"M", 2}, {"N", 1025}}, {{"M", 67}, {"N", 1000}}};

IndexRange dim_range(std::string name) {
  return [name](const ix::DimValues& d) { return d.find(name)->second; };
}

// --- programs written here, beyond the specs' constructs -----------------------------------

// An OpSpec as the host makes one from a format-2 spec: the parsed program, its tensors' names.
kq::OpSpec op_of(std::string_view text, const ix::Declarations& d, DType compute) {
  const ix::ParseResult r = ix::parse_program(text, d);
  INFO("parse: ", r.error ? r.error->text() : "");
  REQUIRE(r.program.has_value());
  kq::OpSpec op;
  op.op = "test";
  op.compute = compute;
  op.program = std::make_shared<const ix::Program>(*r.program);
  bool first = true;
  for (const ix::TensorDecl& t : d.tensors) {
    if (t.role == ix::Role::input) op.inputs.push_back(t.name);
    if (t.role != ix::Role::output) continue;
    op.outputs.push_back(kq::OutputSpec{t.name, {}});
    if (first) op.dtype = t.dtype;
    first = false;
  }
  op.domain = kq::Domain::ieee;
  op.layouts.contiguous_only = false;
  op.layouts.min_alignment_bytes = 1;
  return op;
}

// Integer and bool outputs bitwise; the others within rtol |want| + atol (NaN equal to NaN).
void check_close(const kq::OpSpec& op, const Problem& pr, const ix::Tensors& want, double rtol,
                 double atol = 1e-30) {
  for (const kq::OutputSpec& o : op.outputs) {
    const ix::Buffer& got = pr.outputs.at(o.name);
    const ix::Buffer& ref = want.at(o.name);
    REQUIRE(got.numel() == ref.numel());
    double worst = 0.0;
    for (std::int64_t i = 0; i < got.numel(); ++i) {
      const double g = got.get(i), r = ref.get(i);
      INFO("output ", o.name, " element ", i, ": got ", g, ", want ", r);
      if (kq::is_integer(got.dtype) || std::isnan(r)) {
        CHECK((g == r || (std::isnan(g) && std::isnan(r))));
        continue;
      }
      const double err = std::fabs(g - r);
      CHECK(err <= rtol * std::fabs(r) + atol);
      worst = std::max(worst, err / (rtol * std::fabs(r) + atol));
    }
    if (!kq::is_integer(got.dtype))
      MESSAGE("output ", o.name, ": worst ", short_text(worst), " of the tolerance");
  }
}

// Runs `op` and the reference on a random problem; returns the problem for more checks.
Problem run_both(kq::IKernelArm& arm, const kq::OpSpec& op, const ix::DimValues& dims,
                 unsigned seed, ix::Tensors& want, const IndexRange& range = {},
                 const std::function<void(Problem&)>& edit = {}) {
  Problem pr = make_problem(*op.program, dims, seed, range);
  if (edit) edit(pr);
  REQUIRE(arm.supports(op).is_ok());
  const kq::Status s = run_arm(arm, op, pr);
  INFO(s.message());
  REQUIRE(s.is_ok());
  want = ix::evaluate(*op.program, dims, pr.inputs);
  return pr;
}

}  // namespace

TEST_CASE("softmax, layer norm, argmax, cross-entropy agree with the float64 reference") {
  SUBCASE("softmax") { check_spec_at("softmax.yaml", kMN); }
  SUBCASE("layer_norm") { check_spec_at("layer_norm.yaml", kMN); }
  SUBCASE("argmax") { check_spec_at("argmax.yaml", kMN); }
  SUBCASE("cross_entropy") { check_spec_at("cross_entropy.yaml", kMN, dim_range("N")); }
}

// y of a KernelBench spec at `dims` (derived ones included) held to the spec's own rule for
// {bound: accumulation}: |got - want| <= 2 u E + ulp(want), E the reference's bound. Every
// output reads elements of x, unless `sparse` (a transposed convolution of stride S > D, whose
// outputs between the taps' positions are 0).
void check_bounded(kq::IKernelArm& arm, const std::string& file, const ix::DimValues& dims,
                   bool sparse = false) {
  const kq::Spec spec = kq::load_spec(kV2 / ("../../../specs/kernelbench/" + file));
  const ix::Program& p = *spec.shaped->program;
  Problem pr = make_problem(spec, dims, 3);
  const kq::Status s = run_arm(arm, spec, pr);
  INFO(file, ": ", s.message());
  REQUIRE(s.is_ok());
  const int y = ix::find_named(p.decls.tensors, "y");
  const ix::Evaluation want = ix::evaluate_with_bounds(p, dims, pr.inputs, std::vector<int>{y});
  const ix::Buffer& got = pr.outputs.at("y");
  const ix::Buffer& ref = want.outputs.at("y");
  const ix::Buffer& bound = want.bounds.at("y");
  std::int64_t nonzero = 0;
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    const double r = ref.get(i);
    const auto f = static_cast<float>(r);
    const double ulp = std::nextafter(f, std::numeric_limits<float>::infinity()) - f;
    INFO(file, " element ", i, ": got ", got.get(i), ", want ", r, ", E ", bound.get(i));
    CHECK(std::fabs(got.get(i) - r) <= 2.0 * 0x1p-24 * bound.get(i) + ulp);
    nonzero += r != 0.0 ? 1 : 0;
  }
  if (sparse)
    CHECK(nonzero > 0);
  else
    CHECK(nonzero == got.numel());  // every window holds elements of x
}

// The poolings that pad (KernelBench 41, 43, 44, 46): where a window leaves x, at both ends of
// every row and across cpu_tbb's blocks of lanes, the read gives the pad (-inf or 0).
TEST_CASE("padded reads: poolings that pad agree with the float64 reference") {
  const std::string kb = "../../../specs/kernelbench/";
  check_spec_at(kb + "41_max_pool_1d.yaml", {{{"B", 1}, {"C", 1}, {"L", 14}, {"LO", 1}},
                                             {{"B", 2}, {"C", 3}, {"L", 600}, {"LO", 587}}});
  check_spec_at(
      kb + "43_max_pool_3d.yaml",
      {{{"B", 1}, {"C", 2}, {"D", 6}, {"H", 7}, {"W", 13}, {"OD", 1}, {"OH", 2}, {"OW", 5}}});
  auto arm = make_arm();
  check_bounded(*arm, "44_avg_pool_1d.yaml", {{"B", 2}, {"C", 3}, {"L", 700}, {"LO", 701}});
  check_bounded(
      *arm, "46_avg_pool_3d.yaml",
      {{"B", 2}, {"C", 1}, {"D", 1}, {"H", 4}, {"W", 300}, {"OD", 1}, {"OH", 2}, {"OW", 150}});
}

// The convolutions: padded and strided with a bias (50), dilated and strided (76), 3-d (54),
// padded and dilated (80), depthwise (82, 83 with a 3 x 1 kernel), depthwise-separable and padded
// (86: two statements), transposed (64, 78 padded: taps running down x; 79, 81 strided: a
// division exact at one tap in S; 75 grouped).
TEST_CASE("convolutions agree with the float64 reference") {
  auto arm = make_arm();
  check_bounded(*arm, "50_conv_standard_2d_alexnet.yaml",
                {{"B", 2}, {"C", 3}, {"O", 5}, {"H", 41}, {"W", 30}, {"OH", 9}, {"OW", 6}});
  check_bounded(*arm, "76_conv_standard_1d_dilated_strided.yaml",
                {{"B", 2}, {"C", 3}, {"O", 5}, {"L", 1000}, {"LO", 331}});
  check_bounded(*arm, "54_conv_standard_3d.yaml",
                {{"B", 1},
                 {"C", 2},
                 {"O", 3},
                 {"D", 4},
                 {"H", 5},
                 {"W", 40},
                 {"OD", 2},
                 {"OH", 3},
                 {"OW", 38}});
  check_bounded(*arm, "80_conv_standard_2d_dilated_padded.yaml",
                {{"B", 1}, {"C", 2}, {"O", 3}, {"H", 13}, {"W", 300}, {"OH", 9}, {"OW", 284}});
  check_bounded(*arm, "82_conv_depthwise_2d.yaml",
                {{"B", 2}, {"C", 3}, {"H", 9}, {"W", 300}, {"OH", 7}, {"OW", 298}});
  check_bounded(*arm, "83_conv_depthwise_2d_asymmetric_kernel.yaml",
                {{"B", 2}, {"C", 3}, {"H", 9}, {"W", 300}, {"OH", 7}, {"OW", 300}});
  check_bounded(*arm, "64_conv_transposed_1d.yaml",
                {{"B", 2}, {"C", 3}, {"O", 4}, {"L", 300}, {"LO", 302}});
  check_bounded(*arm, "78_conv_transposed_2d_padded.yaml",
                {{"B", 1}, {"C", 2}, {"O", 3}, {"H", 5}, {"W", 300}, {"OH", 5}, {"OW", 300}});
  check_bounded(*arm, "79_conv_transposed_1d_strided_padded_dilated.yaml",
                {{"B", 2}, {"C", 3}, {"O", 4}, {"L", 150}, {"LO", 301}}, true);
  check_bounded(*arm, "81_conv_transposed_2d_strided_padded_dilated.yaml",
                {{"B", 1}, {"C", 2}, {"O", 3}, {"H", 3}, {"W", 60}, {"OH", 13}, {"OW", 298}}, true);
  check_bounded(
      *arm, "75_conv_transposed_2d_grouped_dilated.yaml",
      {{"B", 1}, {"G", 2}, {"CG", 2}, {"OG", 3}, {"H", 3}, {"W", 40}, {"OH", 7}, {"OW", 118}},
      true);
  check_bounded(*arm, "86_conv_depthwise_separable_2d.yaml",
                {{"B", 1}, {"C", 3}, {"O", 4}, {"H", 9}, {"W", 300}, {"OH", 9}, {"OW", 300}});
}

TEST_CASE("scans: exclusive reverse cumsum and cumprod") {
  check_spec_at("cumsum_reverse.yaml", kMN);
}

TEST_CASE("group sums through index arithmetic, and a gather per group") {
  check_spec_at("group_sum.yaml",
                {{{"B", 3}, {"G", 2}, {"C", 1}, {"K", 2}},
                 {{"B", 5}, {"G", 4}, {"C", 33}, {"K", 132}},
                 {{"B", 2}, {"G", 3}, {"C", 1025}, {"K", 3080}},  // K > G C: columns left over
                 {{"B", 300}, {"G", 8}, {"C", 64}, {"K", 512}}},
                dim_range("C"));
}

TEST_CASE("argmax: the first of ties, the first NaN") {
  const kq::Spec spec = kq::load_spec(kV2 / "argmax.yaml");
  auto arm = make_arm();
  Problem pr = make_problem(spec, {{"M", 4}, {"N", 600}}, 7);
  ix::Buffer& x = pr.inputs.at("x");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  x.set(0 * 600 + 10, 9.0);  // row 0: a tie at 10 and 500
  x.set(0 * 600 + 500, 9.0);
  x.set(1 * 600 + 300, nan);  // row 1: NaNs at 300 and 400, a larger value after
  x.set(1 * 600 + 400, nan);
  x.set(1 * 600 + 599, 100.0);
  x.set(2 * 600 + 0, 50.0);  // row 2: the first element
  REQUIRE(run_arm(*arm, spec, pr).is_ok());
  const ix::Tensors want = ix::evaluate(*spec.shaped->program, pr.dims, pr.inputs);
  const ix::Buffer& idx = pr.outputs.at("idx");
  CHECK(idx.get(0) == 10);
  CHECK(idx.get(1) == 300);
  CHECK(idx.get(2) == 0);
  for (std::int64_t m = 0; m < 4; ++m) CHECK(idx.get(m) == want.at("idx").get(m));
}

TEST_CASE("views outside the contract are refused") {
  const kq::Spec spec = kq::load_spec(kV2 / "softmax.yaml");
  auto arm = make_arm();
  Problem pr = make_problem(spec, {{"M", 4}, {"N", 8}}, 3);
  REQUIRE(run_arm(*arm, spec, pr).is_ok());

  SUBCASE("wrong shape") {
    Problem bad = pr;
    bad.out_views[0].shape[1] = 7;
    bad.out_views[0].strides[0] = 7;
    const kq::Status s = arm->run(bad.in_views, bad.out_views, nullptr);
    INFO(s.message());
    CHECK(s.is_unsupported());
    CHECK(s.message().find("N = 7") != std::string::npos);
    CHECK(run_arm(*arm, spec, bad).is_unsupported());  // prepare() refuses it too
  }
  SUBCASE("wrong dtype") {
    Problem bad = pr;
    bad.in_views[0].dtype = DType::f32;
    const kq::Status s = arm->run(bad.in_views, bad.out_views, nullptr);
    INFO(s.message());
    CHECK(s.is_unsupported());
    CHECK(s.message().find("dtype f32, the spec declares bf16") != std::string::npos);
  }
  SUBCASE("strided where the spec admits contiguous views only") {
    Problem bad = pr;
    bad.in_views[0].shape[1] = 4;  // every other column of a [4, 8] buffer, as [4, 4]
    bad.in_views[0].strides[1] = 2;
    bad.out_views[0].shape[1] = 4;
    bad.out_views[0].strides[0] = 4;
    const kq::Status s = arm->run(bad.in_views, bad.out_views, nullptr);
    INFO(s.message());
    CHECK(s.is_unsupported());
    CHECK(s.message().find("strided") != std::string::npos);
  }
  SUBCASE("an output that overlaps an input") {
    Problem bad = pr;
    bad.out_views[0].data = bad.in_views[0].data;
    CHECK(arm->run(bad.in_views, bad.out_views, nullptr).is_unsupported());
  }
  SUBCASE("counts") { CHECK(arm->run({}, pr.out_views, nullptr).is_unsupported()); }
}

TEST_CASE("strided inputs are read through their strides where the spec admits them") {
  // cumsum_reverse.yaml: x given transposed (memory [N, M]); group_sum.yaml: x with padded rows,
  // w reversed (a negative stride).
  auto arm = make_arm();
  {
    const kq::Spec spec = kq::load_spec(kV2 / "cumsum_reverse.yaml");
    Problem pr = make_problem(spec, {{"M", 6}, {"N", 300}}, 11);
    const ix::Buffer& x = pr.inputs.at("x");
    std::vector<float> t(static_cast<std::size_t>(6 * 300));
    for (std::int64_t m = 0; m < 6; ++m)
      for (std::int64_t n = 0; n < 300; ++n)
        t[static_cast<std::size_t>(n * 6 + m)] = static_cast<float>(x.get(m * 300 + n));
    pr.in_views[0].data = t.data();
    pr.in_views[0].strides[0] = 1;
    pr.in_views[0].strides[1] = 6;
    // The output c written transposed too, then read back into its dense buffer.
    std::vector<float> ct(t.size());
    pr.out_views[0].data = ct.data();
    pr.out_views[0].strides[0] = 1;
    pr.out_views[0].strides[1] = 6;
    const kq::Status s = run_arm(*arm, spec, pr);
    INFO(s.message());
    REQUIRE(s.is_ok());
    for (std::int64_t m = 0; m < 6; ++m)
      for (std::int64_t n = 0; n < 300; ++n)
        pr.outputs.at("c").set(m * 300 + n, ct[static_cast<std::size_t>(n * 6 + m)]);
    std::map<std::string, Worst> worst;
    compare_outputs(spec, pr, ix::evaluate(*spec.shaped->program, pr.dims, pr.inputs), worst);

    // An output whose elements share memory would be written by two threads at once.
    pr.out_views[1].strides[0] = 0;
    const kq::Status overlap = arm->run(pr.in_views, pr.out_views, nullptr);
    INFO(overlap.message());
    CHECK(overlap.is_unsupported());
    CHECK(overlap.message().find("share memory") != std::string::npos);
  }
  {
    const kq::Spec spec = kq::load_spec(kV2 / "group_sum.yaml");
    const ix::DimValues dims = {{"B", 3}, {"G", 4}, {"C", 40}, {"K", 160}};
    Problem pr = make_problem(spec, dims, 12, dim_range("C"));
    const ix::Buffer& x = pr.inputs.at("x");
    const ix::Buffer& w = pr.inputs.at("w");
    const std::int64_t row = 160 + 6;  // padded rows
    std::vector<kq::Half> xs(static_cast<std::size_t>(3 * row));
    for (std::int64_t b = 0; b < 3; ++b)
      for (std::int64_t k = 0; k < 160; ++k)
        xs[static_cast<std::size_t>(b * row + k)] = kq::Half(x.get(b * 160 + k));
    std::vector<float> wr(40);
    for (std::int64_t j = 0; j < 40; ++j)
      wr[static_cast<std::size_t>(39 - j)] = static_cast<float>(w.get(j));
    pr.in_views[0].data = xs.data();
    pr.in_views[0].strides[0] = row;
    pr.in_views[1].data = wr.data() + 39;
    pr.in_views[1].strides[0] = -1;
    const kq::Status s = run_arm(*arm, spec, pr);
    INFO(s.message());
    REQUIRE(s.is_ok());
    std::map<std::string, Worst> worst;
    compare_outputs(spec, pr, ix::evaluate(*spec.shaped->program, pr.dims, pr.inputs), worst);
  }
}

TEST_CASE("out-of-range subscripts and gathers are errors, never reads out of bounds") {
  auto arm = make_arm();
  SUBCASE("a target outside [0, N)") {
    const kq::Spec spec = kq::load_spec(kV2 / "cross_entropy.yaml");
    Problem pr = make_problem(spec, {{"M", 5}, {"N", 7}}, 5, dim_range("N"));
    pr.inputs.at("t").set(3, 7.0);
    const kq::Status s = run_arm(*arm, spec, pr);
    INFO(s.message());
    CHECK(s.is_error());
    CHECK(s.message().find("is 7 (a gather through 't'), outside [0, 7)") != std::string::npos);
    pr.inputs.at("t").set(3, -1.0);
    CHECK(run_arm(*arm, spec, pr).is_error());
  }
  SUBCASE("index arithmetic past the extent: K < G C") {
    const kq::Spec spec = kq::load_spec(kV2 / "group_sum.yaml");
    Problem pr = make_problem(spec, {{"B", 2}, {"G", 3}, {"C", 5}, {"K", 14}}, 6, dim_range("C"));
    const kq::Status s = run_arm(*arm, spec, pr);
    INFO(s.message());
    CHECK(s.is_error());
    CHECK(s.message().find("outside [0, 14)") != std::string::npos);
  }
  SUBCASE("a picked channel outside its group's columns") {
    const kq::Spec spec = kq::load_spec(kV2 / "group_sum.yaml");
    Problem pr = make_problem(spec, {{"B", 2}, {"G", 3}, {"C", 5}, {"K", 15}}, 6, dim_range("C"));
    pr.inputs.at("pick").set(2, 5.0);  // 2 * 5 + 5 = 15
    const kq::Status s = run_arm(*arm, spec, pr);
    INFO(s.message());
    CHECK(s.is_error());
    CHECK(s.message().find("subscript 2 of 'x' is 15, outside [0, 15)") != std::string::npos);
  }
}

TEST_CASE("supports() declines what cpu_tbb does not compute, with the reason") {
  kq::Spec spec = kq::load_spec(kV2 / "softmax.yaml");
  auto arm = make_arm();
  CHECK(arm->supports(spec.op).is_ok());
  spec.op.compute = DType::bf16;
  const kq::Status s = arm->supports(spec.op);
  CHECK(s.is_unsupported());
  CHECK(s.message().find("compute bf16") != std::string::npos);
}

TEST_CASE("every op, computed in float and in double") {
  const char* kOps[][2] = {
      {"yneg", "-x[m, n]"},
      {"yrelu", "relu(x[m, n])"},
      {"yabs", "abs(x[m, n])"},
      {"yexp", "exp(x[m, n])"},
      {"ylog", "log(abs(x[m, n]))"},
      {"ysqrt", "sqrt(abs(x[m, n]))"},
      {"ytanh", "tanh(x[m, n])"},
      {"ysigmoid", "sigmoid(x[m, n])"},
      {"yerf", "erf(x[m, n])"},
      {"ygelu", "gelu(x[m, n])"},
      {"ysilu", "silu(x[m, n])"},
      {"yadd", "x[m, n] + z[m, n]"},
      {"ysub", "x[m, n] - z[m, n]"},
      {"ymul", "x[m, n] * z[m, n]"},
      {"ydiv", "x[m, n] / z[m, n]"},
      {"ymax", "max(x[m, n], z[m, n])"},
      {"ymin", "min(x[m, n], z[m, n])"},
      {"ylt", "x[m, n] < z[m, n]"},
      {"yle", "x[m, n] <= z[m, n]"},
      {"ygt", "x[m, n] > z[m, n]"},
      {"yge", "x[m, n] >= z[m, n]"},
      {"yeq", "x[m, n] == x[m, n]"},
      {"yne", "x[m, n] != z[m, n]"},
      {"yselect", "select(x[m, n] > 0, x[m, n], z[m, n])"},
      {"yclamp", "clamp(x[m, n], -1, 1)"},
      {"yconst", "x[m, n] * 0 + m + n * N + eps"},
  };
  auto arm = make_arm();
  for (DType t : {DType::f32, DType::f64}) {
    ix::Declarations d;
    d.dims = {{"M", ix::DimKind::free}, {"N", ix::DimKind::free}};
    d.params = {{"eps", 0.25}};
    d.tensors = {{"x", ix::Role::input, t, {"M", "N"}}, {"z", ix::Role::input, t, {"M", "N"}}};
    std::string text;
    for (const auto& [name, expr] : kOps) {
      d.tensors.push_back({name, ix::Role::output, t, {"M", "N"}});
      text += std::string(name) + "[m, n] = " + expr + "\n";
    }
    const kq::OpSpec op = op_of(text, d, t);
    for (const ix::DimValues& dims :
         {ix::DimValues{{"M", 3}, {"N", 5}}, ix::DimValues{{"M", 9}, {"N", 700}}}) {
      INFO("compute ", kq::to_string(t), " at ", point_text(dims));
      ix::Tensors want;
      const Problem pr = run_both(*arm, op, dims, 21, want);
      // A few ulps of the compute type: gelu's erfc amplifies its argument's rounding.
      check_close(op, pr, want, 32 * kq::unit_roundoff(t));
    }
  }
}

TEST_CASE("reductions over several indices, and NaN in max, min and argmin") {
  ix::Declarations d;
  d.dims = {{"B", ix::DimKind::free},
            {"C", ix::DimKind::free},
            {"H", ix::DimKind::reduced},
            {"W", ix::DimKind::reduced}};
  d.tensors = {{"x", ix::Role::input, DType::f32, {"B", "C", "H", "W"}},
               {"s", ix::Role::output, DType::f32, {"B", "C"}},
               {"p", ix::Role::output, DType::f32, {"B", "C"}},
               {"lo", ix::Role::output, DType::f32, {"B", "C"}},
               {"at", ix::Role::output, DType::i64, {"B", "C"}},
               {"hi", ix::Role::output, DType::f32, {"C"}},
               {"amax", ix::Role::output, DType::i32, {"C"}}};
  const kq::OpSpec op = op_of(
      "s[b, c] = sum((h, w), x[b, c, h, w]) / (H * W)\n"
      "p[b, c] = prod((h, w), 1 + x[b, c, h, w] / 64)\n"
      "lo[b, c] = min((h, w), x[b, c, h, w])\n"
      "at[b, c] = argmin((h, w), x[b, c, h, w])\n"
      "hi[c] = max((b, h, w), x[b, c, h, w])\n"
      "amax[c] = argmax((h, b, w), x[b, c, h, w])\n",
      d, DType::f32);
  auto arm = make_arm();
  const double u = kq::unit_roundoff(DType::f32);
  for (const ix::DimValues& dims : {ix::DimValues{{"B", 2}, {"C", 3}, {"H", 1}, {"W", 1}},
                                    ix::DimValues{{"B", 3}, {"C", 4}, {"H", 7}, {"W", 300}}}) {
    INFO(point_text(dims));
    ix::Tensors want;
    Problem pr = run_both(*arm, op, dims, 31, want);
    check_close(op, pr, want, 16 * u * std::sqrt(7.0 * 300.0), 16 * u);
  }
  SUBCASE("NaN") {
    const ix::DimValues dims{{"B", 2}, {"C", 2}, {"H", 3}, {"W", 40}};
    ix::Tensors want;
    Problem pr = run_both(*arm, op, dims, 32, want, {}, [](Problem& p) {
      ix::Buffer& x = p.inputs.at("x");
      x.set(((1 * 2 + 0) * 3 + 1) * 40 + 7, std::numeric_limits<double>::quiet_NaN());
      x.set(((1 * 2 + 0) * 3 + 2) * 40 + 3, std::numeric_limits<double>::quiet_NaN());
    });
    check_close(op, pr, want, 1e-5);
    CHECK(std::isnan(pr.outputs.at("lo").get(1 * 2 + 0)));
    CHECK(pr.outputs.at("at").get(1 * 2 + 0) == 1 * 40 + 7);  // the first NaN
    CHECK(std::isnan(pr.outputs.at("hi").get(0)));
  }
}

TEST_CASE("an integer temporary gathered through; bool and i32 tensors; integer outputs checked") {
  ix::Declarations d;
  d.dims = {{"M", ix::DimKind::free}, {"N", ix::DimKind::reduced}};
  d.tensors = {{"x", ix::Role::input, DType::f32, {"M", "N"}},
               {"mask", ix::Role::input, DType::boolean, {"M", "N"}},
               {"y", ix::Role::output, DType::f32, {"M"}},
               {"count", ix::Role::output, DType::i32, {"M"}},
               {"pos", ix::Role::output, DType::boolean, {"M", "N"}},
               {"kept", ix::Role::output, DType::bf16, {"M", "N"}},
               {"a", ix::Role::temporary, DType::i64, {"M"}}};
  const kq::OpSpec op = op_of(
      "a[m] = argmax(n, x[m, n])\n"
      "y[m] = x[m, a[m]] * 2 + a[m]\n"
      "count[m] = sum(n, mask[m, n])\n"
      "pos[m, n] = x[m, n] > 0\n"
      "kept[m, n] = select(mask[m, n], x[m, n], 0)\n",
      d, DType::f32);
  auto arm = make_arm();
  for (const ix::DimValues& dims :
       {ix::DimValues{{"M", 3}, {"N", 1}}, ix::DimValues{{"M", 70}, {"N", 1000}}}) {
    INFO(point_text(dims));
    ix::Tensors want;
    const Problem pr = run_both(*arm, op, dims, 41, want, [](const ix::DimValues&) { return 2; });
    check_close(op, pr, want, 2 * kq::unit_roundoff(DType::f32));
  }
  SUBCASE("an output given a value its integer dtype cannot hold") {
    ix::Declarations e = d;
    e.tensors = {d.tensors[0], {"bad", ix::Role::output, DType::i32, {"M"}}};
    const kq::OpSpec bad = op_of("bad[m] = x[m, 0] / 3\n", e, DType::f32);
    Problem pr = make_problem(*bad.program, {{"M", 4}, {"N", 5}}, 42);
    const kq::Status s = run_arm(*arm, bad, pr);
    INFO(s.message());
    CHECK(s.is_error());
    CHECK(s.message().find("which a i32 cannot hold") != std::string::npos);
  }
}

TEST_CASE("a reduction varying along the lane, scans around reductions, outputs read later") {
  ix::Declarations d;
  d.dims = {{"M", ix::DimKind::free}, {"N", ix::DimKind::free}, {"K", ix::DimKind::reduced}};
  d.tensors = {{"a", ix::Role::input, DType::f32, {"M", "K"}},
               {"b", ix::Role::input, DType::f16, {"K", "N"}},
               {"mm", ix::Role::output, DType::f32, {"M", "N"}},
               {"c", ix::Role::output, DType::f32, {"M", "K"}},
               {"down", ix::Role::output, DType::f32, {"M", "N"}},
               {"share", ix::Role::output, DType::f32, {"M", "N"}}};
  const kq::OpSpec op = op_of(
      "mm[m, n] = sum(k, a[m, k] * b[k, n])\n"
      // two scans of one statement, a reduction inside one of them (its row max, remembered)
      "c[m, k] = cumsum(k, a[m, k] - max(j, a[m, j])) + cumprod(k, 1 + 0 * a[m, k], exclusive)\n"
      "down[m, n] = cumsum(m, mm[m, n], reverse)\n"
      "share[m, n] = mm[m, n] / sum(i, abs(mm[m, i]))\n",
      d, DType::f32);
  auto arm = make_arm();
  const double u = kq::unit_roundoff(DType::f32);
  for (const ix::DimValues& dims : {ix::DimValues{{"M", 2}, {"N", 3}, {"K", 1}},
                                    ix::DimValues{{"M", 37}, {"N", 300}, {"K", 129}}}) {
    INFO(point_text(dims));
    ix::Tensors want;
    const Problem pr = run_both(*arm, op, dims, 51, want);
    // Sums of mixed signs: the absolute part scales with the terms' magnitudes (|a b| < 9).
    check_close(op, pr, want, 64 * u, 9 * 129 * 8 * u);
  }
}

TEST_CASE("scalar tensors: a statement of one element") {
  ix::Declarations d;
  d.dims = {{"N", ix::DimKind::reduced}};
  d.tensors = {{"x", ix::Role::input, DType::f64, {}},
               {"v", ix::Role::input, DType::f32, {"N"}},
               {"s", ix::Role::output, DType::f32, {}},
               {"t", ix::Role::output, DType::f16, {"N"}}};
  const kq::OpSpec op = op_of("s = x * 2 + sum(i, v[i])\nt[n] = v[n] - s\n", d, DType::f32);
  auto arm = make_arm();
  ix::Tensors want;
  const Problem pr = run_both(*arm, op, {{"N", 9}}, 61, want);
  check_close(op, pr, want, 8 * kq::unit_roundoff(DType::f32), 1e-6);
}
