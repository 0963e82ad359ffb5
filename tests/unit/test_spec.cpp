// The spec loader: the shipped specs load, defaults apply, and every malformed spec in
// tests/data/bad_specs is rejected at the line, column and field its first line expects.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "spec/spec.hpp"
#include "spec/suggest.hpp"
#include "spec_fixture.hpp"
#include "util/sha256.hpp"

namespace fs = std::filesystem;
using kq::CompareRule;
using kq::Spec;
using kq::SpecError;
using kq::TimingPolicy;

namespace {

const fs::path kRoot = KQ_SOURCE_DIR;

std::vector<fs::path> yaml_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The error parse_spec throws for `text`; fails the test when it does not throw.
SpecError error_of(const std::string& text) {
  try {
    kq::parse_spec(text, "inline.yaml");
  } catch (const SpecError& e) {
    return e;
  }
  FAIL("no SpecError for:\n" << text);
  return SpecError("", 0, 0, "", "");
}

constexpr const char* kMinimal = R"(kq_spec: 1
op: scale
dtype: f32
inputs: [x]
outputs: [out]
semantics: 2 * x
compare: bitwise
timing:
  sizes: [1024]
decision:
  baseline: nvrtc_jit
)";

}  // namespace

TEST_CASE("every shipped spec loads") {
  const auto files = yaml_files(kRoot / "specs");
  CHECK(files.size() >= 7);
  for (const fs::path& f : files) {
    INFO("spec: " << f.string());
    Spec s;
    try {
      s = kq::load_spec(f);
    } catch (const SpecError& e) {
      FAIL_CHECK(std::string(e.what()));
      continue;
    }
    CHECK(s.path == f.string());
    CHECK(s.text == read_text(f));
    CHECK(s.sha256 == kq::sha256_file(f));
    CHECK_FALSE(s.op.description.empty());
    if (s.shaped) {  // format 2: statements, one output or more
      CHECK(s.op.program != nullptr);
      CHECK_FALSE(s.op.outputs.empty());
      continue;
    }
    CHECK(s.op.outputs.size() == 1);
    CHECK_FALSE(s.op.semantics.nodes.empty());
  }
}

TEST_CASE("residual_relu.yaml has the values it states") {
  const Spec s = kq::load_spec(kRoot / "specs" / "residual_relu.yaml");
  CHECK(s.op.op == "residual_relu");
  CHECK(s.op.description == "out = relu(x + residual), elementwise, float32");
  CHECK(s.op.dtype == kq::DType::f32);
  CHECK(s.op.inputs == std::vector<std::string>{"x", "residual"});
  REQUIRE(s.op.outputs.size() == 1);
  CHECK(s.op.outputs[0].name == "out");
  CHECK(s.op.outputs[0].may_alias.empty());
  CHECK(s.op.semantics.text == "relu(x + residual)");
  REQUIRE(s.op.semantics.nodes.size() == 4);
  const auto& root = s.op.semantics.nodes.back();
  CHECK(root.op == kq::Op::relu);
  const auto& sum = s.op.semantics.nodes[root.args[0]];
  CHECK(sum.op == kq::Op::add);
  CHECK(s.op.semantics.nodes[sum.args[0]].input == 0);
  CHECK(s.op.semantics.nodes[sum.args[1]].input == 1);
  CHECK(s.op.domain == kq::Domain::finite);
  CHECK(s.op.layouts.contiguous_only);
  CHECK(s.op.layouts.min_alignment_bytes == 4);
  CHECK(s.op.layouts.ranks == std::vector<int>{1, 2, 3, 4});
  CHECK(s.op.compare.kind == CompareRule::Kind::bitwise);
  CHECK(s.qualification.seed == 20261129u);
  CHECK(s.qualification.extra_sizes == std::vector<std::int64_t>{1, 3, 1000003});
  CHECK(s.qualification.hang_timeout_s == 60.0);
  CHECK(s.timing.sizes == std::vector<std::int64_t>{4096, 65536, 1048576, 16777216, 268435456});
  CHECK(s.timing.l2 == TimingPolicy::L2::flush);
  CHECK(s.timing.modes == std::vector<std::string>{"single", "graph"});
  CHECK(s.timing.min_rounds == 10);
  CHECK(s.timing.max_rounds == 200);
  CHECK(s.timing.max_seconds == 30.0);
  CHECK(s.timing.warmup_ms == 50.0);
  CHECK(s.decision.baselines ==
        std::vector<std::string>{"torch_compile", "nvrtc_jit", "torch_compile_cpu", "cpu_tbb"});
  CHECK(s.decision.eager == std::vector<std::string>{"torch_eager", "torch_eager_cpu"});
  CHECK(s.decision.min_speedup == doctest::Approx(1.03));
  CHECK(s.sha256.size() == 64);
}

TEST_CASE("the other shipped specs use the comparison rules their comments argue for") {
  const fs::path dir = kRoot / "specs";
  const Spec gelu = kq::load_spec(dir / "gelu.yaml");
  CHECK(gelu.op.compare.kind == CompareRule::Kind::tolerance);
  CHECK(gelu.op.compare.atol == 1e-6);
  CHECK(gelu.op.compare.rtol == 1e-5);
  CHECK(gelu.op.outputs[0].may_alias == std::vector<std::string>{"x"});
  const Spec leaky = kq::load_spec(dir / "leaky_relu.yaml");
  CHECK(leaky.op.compare.kind == CompareRule::Kind::ulp);
  CHECK(leaky.op.compare.max_ulp == 1);
  CHECK(leaky.op.semantics.nodes.back().op == kq::Op::select);
  CHECK_FALSE(leaky.op.layouts.contiguous_only);
  CHECK(leaky.op.layouts.ranks.size() == 8);
  const Spec clamp = kq::load_spec(dir / "clamp.yaml");
  CHECK(clamp.op.domain == kq::Domain::ieee);
  CHECK(clamp.op.compare.kind == CompareRule::Kind::bitwise);
  const Spec silu = kq::load_spec(dir / "silu_mul.yaml");
  CHECK(silu.op.inputs == std::vector<std::string>{"x", "y"});
  CHECK(silu.op.layouts.min_alignment_bytes == 16);
  CHECK(silu.timing.l2 == TimingPolicy::L2::rotate);
  CHECK(silu.qualification.seed == 7u);
  CHECK(silu.decision.min_speedup == doctest::Approx(1.05));
  const Spec ieee = kq::load_spec(dir / "residual_relu_ieee.yaml");
  CHECK(ieee.op.domain == kq::Domain::ieee);
  const Spec axpby = kq::load_spec(dir / "axpby.yaml");
  CHECK(axpby.op.compare.kind == CompareRule::Kind::tolerance);
}

TEST_CASE("absent optional fields take their defaults") {
  const Spec s = kq::parse_spec(kMinimal, "minimal.yaml");
  CHECK(s.path == "minimal.yaml");
  CHECK(s.text == kMinimal);
  CHECK(s.sha256 == kq::sha256_hex(kMinimal));
  CHECK(s.op.description.empty());
  CHECK(s.op.domain == kq::Domain::finite);
  REQUIRE(s.op.outputs.size() == 1);
  CHECK(s.op.outputs[0].name == "out");
  CHECK(s.op.outputs[0].may_alias.empty());
  const kq::LayoutContract layouts;
  CHECK(s.op.layouts.contiguous_only == layouts.contiguous_only);
  CHECK(s.op.layouts.min_alignment_bytes == 4);
  CHECK(s.op.layouts.ranks == layouts.ranks);
  const kq::QualificationExtras q;
  CHECK(s.qualification.seed == q.seed);
  CHECK(s.qualification.extra_sizes.empty());
  CHECK(s.qualification.hang_timeout_s == q.hang_timeout_s);
  const TimingPolicy t;
  CHECK(s.timing.sizes == std::vector<std::int64_t>{1024});
  CHECK(s.timing.l2 == t.l2);
  CHECK(s.timing.modes == t.modes);
  CHECK(s.timing.min_rounds == t.min_rounds);
  CHECK(s.timing.max_rounds == t.max_rounds);
  CHECK(s.timing.max_seconds == t.max_seconds);
  CHECK(s.timing.warmup_ms == t.warmup_ms);
  CHECK(s.decision.baselines == std::vector<std::string>{"nvrtc_jit"});
  CHECK(s.decision.min_speedup == doctest::Approx(1.03));
}

TEST_CASE("f64 defaults min_alignment_bytes to 8") {
  std::string text = kMinimal;
  text.replace(text.find("dtype: f32"), 10, "dtype: f64");
  const Spec s = kq::parse_spec(text, "f64.yaml");
  CHECK(s.op.dtype == kq::DType::f64);
  CHECK(s.op.layouts.min_alignment_bytes == 8);
}

TEST_CASE("inputs as maps, outputs as bare names, flow style and special floats") {
  const Spec s = kq::parse_spec(R"yaml(kq_spec: 1
op: mix
description: "quoted: with a colon"
dtype: f32
inputs: [{name: a}, b]
outputs: [c]
semantics: "select(a >= b, a, b)"
compare: {atol: 0, rtol: 1e-6}
qualification: {seed: 0, extra_sizes: [7, 1], hang_timeout_s: 0.5}
timing: {sizes: [1, 268435456], modes: [graph], min_rounds: 3, max_rounds: 3, warmup_ms: 0}
decision: {baseline: cpu_tbb, min_speedup: 1}
)yaml",
                                "forms.yaml");
  CHECK(s.op.description == "quoted: with a colon");
  CHECK(s.op.inputs == std::vector<std::string>{"a", "b"});
  CHECK(s.op.outputs[0].name == "c");
  CHECK(s.op.compare.kind == CompareRule::Kind::tolerance);
  CHECK(s.op.compare.atol == 0.0);
  CHECK(s.op.compare.rtol == 1e-6);
  CHECK(s.qualification.seed == 0u);
  CHECK(s.qualification.extra_sizes == std::vector<std::int64_t>{7, 1});
  CHECK(s.timing.sizes.back() == 268435456);
  CHECK(s.timing.modes == std::vector<std::string>{"graph"});
  CHECK(s.timing.min_rounds == 3);
  CHECK(s.timing.warmup_ms == 0.0);
  CHECK(s.decision.min_speedup == 1.0);
}

TEST_CASE("every malformed spec is rejected where its '# expect:' line says") {
  // # expect: LINE:COLUMN FIELD :: MESSAGE-SUBSTRING   (FIELD is empty for file-level errors)
  const std::regex expect_re(R"(^# expect: (\d+):(\d+) (\S*) :: (.+)$)");
  const auto files = yaml_files(kRoot / "tests" / "data" / "bad_specs");
  CHECK(files.size() >= 24);
  for (const fs::path& f : files) {
    const std::string text = read_text(f);
    const std::string first = text.substr(0, text.find('\n'));
    std::smatch m;
    INFO("file: " << f.string());
    REQUIRE_MESSAGE(std::regex_match(first, m, expect_re), "bad expect line: " << first);
    const int line = std::stoi(m[1]);
    const int column = std::stoi(m[2]);
    const std::string field = m[3];
    const std::string message = m[4];
    try {
      kq::load_spec(f);
      FAIL_CHECK("accepted, expected " << first);
    } catch (const SpecError& e) {
      const std::string got = e.what();
      INFO("got: " << got);
      CHECK(e.file() == f.string());
      CHECK(e.line() == line);
      CHECK(e.column() == column);
      CHECK(e.field() == field);
      CHECK_MESSAGE(e.message().find(message) != std::string::npos, "want '" << message << "'");
    }
  }
}

TEST_CASE("SpecError::what() is file:line:column: field: message") {
  const SpecError e("specs/a.yaml", 12, 5, "timing.sizes[2]", "must be a positive integer");
  CHECK(std::string(e.what()) == "specs/a.yaml:12:5: timing.sizes[2]: must be a positive integer");
  CHECK(e.file() == "specs/a.yaml");
  CHECK(e.line() == 12);
  CHECK(e.column() == 5);
  CHECK(e.field() == "timing.sizes[2]");
  CHECK(e.message() == "must be a positive integer");
  const SpecError no_field("b.yaml", 0, 0, "", "cannot read the spec file: gone");
  CHECK(std::string(no_field.what()) == "b.yaml:0:0: cannot read the spec file: gone");
  const std::runtime_error& base = e;
  CHECK(std::string(base.what()).find("specs/a.yaml:12:5") == 0);
}

TEST_CASE("parse_spec reports errors under the name it is given") {
  std::string text = kMinimal;
  text.replace(text.find("op: scale"), 9, "op: 9scale");
  const SpecError e = error_of(text);
  CHECK(e.file() == "inline.yaml");
  CHECK(e.line() == 2);
  CHECK(e.column() == 5);
  CHECK(e.field() == "op");
  CHECK(std::string(e.what()).find("inline.yaml:2:5: op: op name '9scale'") == 0);
}

TEST_CASE("the semantics column follows the expression inside its line") {
  std::string text = kMinimal;
  text.replace(text.find("semantics: 2 * x"), 16, "semantics:    2 * x * zz");
  const SpecError e = error_of(text);
  CHECK(e.line() == 6);
  CHECK(e.column() == 23);  // 'zz': value at column 15, expression column 9
  CHECK(e.field() == "semantics");
}

TEST_CASE("an unreadable file is a SpecError at 0:0") {
  const fs::path missing = kRoot / "tests" / "data" / "no_such_spec.yaml";
  try {
    kq::load_spec(missing);
    FAIL("loaded a missing file");
  } catch (const SpecError& e) {
    CHECK(e.file() == missing.string());
    CHECK(e.line() == 0);
    CHECK(e.column() == 0);
    CHECK(e.field().empty());
    CHECK(e.message().find("cannot read the spec file") != std::string::npos);
  }
  try {
    kq::load_spec(kRoot / "specs");
    FAIL("loaded a directory");
  } catch (const SpecError& e) {
    CHECK(e.line() == 0);
    CHECK(e.column() == 0);
    CHECK(e.message().find("directory") != std::string::npos);
  }
}

TEST_CASE("sha256 matches the standard test vectors") {
  CHECK(kq::sha256_hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(kq::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(kq::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const fs::path tmp = fs::temp_directory_path() / "kq_test_sha256.bin";
  std::string big(200000, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 % 251);
  {
    std::ofstream out(tmp, std::ios::binary);
    out << big;
  }
  CHECK(kq::sha256_file(tmp) == kq::sha256_hex(big));
  fs::remove(tmp);
  CHECK_THROWS_AS(kq::sha256_file(tmp), std::runtime_error);
}

TEST_CASE("closest_match suggests near misses only") {
  const std::vector<std::string_view> keys = {"semantics", "sizes", "seed", "ownership"};
  CHECK(kq::closest_match("semantic", keys) == "semantics");
  CHECK(kq::closest_match("Semantics", keys) == "semantics");
  CHECK(kq::closest_match("ownrship", keys) == "ownership");
  CHECK(kq::closest_match("szies", keys) == "sizes");
  CHECK_FALSE(kq::closest_match("colour", keys).has_value());
  CHECK(kq::edit_distance("abc", "acb") == 1);
  CHECK(kq::edit_distance("", "abc") == 3);
  CHECK(kq::join_names({"a", "b", "c"}) == "a, b, c");
}

TEST_CASE("decision.baseline: one arm, or an ordered list of arms") {
  const std::string head = kq::test::residual_relu_yaml();
  auto with = [&](const std::string& baseline) {
    std::string y = head;
    y.replace(y.find("  baseline: nvrtc_jit"), std::string("  baseline: nvrtc_jit").size(),
              "  baseline: " + baseline);
    return y;
  };
  CHECK(kq::parse_spec(with("[torch_compile, nvrtc_jit]"), "t.yaml").decision.baselines ==
        std::vector<std::string>{"torch_compile", "nvrtc_jit"});
  CHECK_THROWS_WITH_AS(kq::parse_spec(with("[]"), "t.yaml"),
                       doctest::Contains("at least one baseline arm is required"), kq::SpecError);
  CHECK_THROWS_WITH_AS(kq::parse_spec(with("[a, a]"), "t.yaml"),
                       doctest::Contains("decision.baseline[1]: 'a' is listed twice"),
                       kq::SpecError);
}

TEST_CASE("decision.eager: optional; one arm or an ordered list, errors at their line") {
  CHECK(kq::parse_spec(kMinimal, "t.yaml").decision.eager.empty());
  auto with = [&](const std::string& eager) {
    return std::string(kMinimal) + "  eager: " + eager + "\n";
  };
  CHECK(kq::parse_spec(with("torch_eager"), "t.yaml").decision.eager ==
        std::vector<std::string>{"torch_eager"});
  CHECK(kq::parse_spec(with("[torch_eager, numpy_eager]"), "t.yaml").decision.eager ==
        std::vector<std::string>{"torch_eager", "numpy_eager"});
  const SpecError empty = error_of(with("[]"));
  CHECK(empty.line() == 12);
  CHECK(empty.field() == "decision.eager");
  CHECK(empty.message() == "at least one eager arm is required");
  const SpecError blank = error_of(with("''"));
  CHECK(blank.field() == "decision.eager");
  CHECK(blank.message() == "the eager arm name is empty");
  CHECK(error_of(with("[a, a]")).field() == "decision.eager[1]");
  CHECK(std::string(error_of(with("{arm: a}")).what()).find("inline.yaml:12:10: decision.eager") ==
        0);
  // Every shipped spec states the eager arm its speed-ups are also measured against.
  for (const fs::path& f : yaml_files(kRoot / "specs")) {
    INFO("spec: " << f.string());
    CHECK(kq::load_spec(f).decision.eager ==
          std::vector<std::string>{"torch_eager", "torch_eager_cpu"});
  }
}
