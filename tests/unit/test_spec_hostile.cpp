// The spec loader on hostile text that tests/data/bad_specs cannot hold (generated here: deep
// nesting, megabytes, every kind of bad UTF-8), and every fuzzer finding replayed through the
// fuzzer's own checks (tests/fuzz/fuzz_checks.hpp). Each must be refused with a position, fast.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../fuzz/fuzz_checks.hpp"
#include "spec/spec.hpp"
#include "spec_fixture.hpp"

namespace fs = std::filesystem;
using kq::SpecError;

namespace {

const fs::path kRoot = KQ_SOURCE_DIR;

// The error parse_spec throws for `text`, which must come within `seconds`.
SpecError error_of(const std::string& text, double seconds = 2.0) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    kq::parse_spec(text, "hostile.yaml");
  } catch (const SpecError& e) {
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
    CHECK(took.count() < seconds);
    return e;
  }
  FAIL("no SpecError for text of " << text.size() << " bytes: " << text.substr(0, 200));
  return SpecError("", 0, 0, "", "");
}

void check_error(const std::string& text, int line, int column, const std::string& message) {
  const SpecError e = error_of(text);
  INFO("got: " << std::string(e.what()).substr(0, 500));
  CHECK(e.file() == "hostile.yaml");
  CHECK(e.line() == line);
  CHECK(e.column() == column);
  CHECK(e.message().find(message) != std::string::npos);
}

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

// The residual_relu test spec with its semantics line replaced.
std::string with_semantics(const std::string& expression) {
  std::string text = kq::test::residual_relu_yaml();
  const std::string old = "semantics: relu(x + residual)";
  text.replace(text.find(old), old.size(), "semantics: " + expression);
  return text;
}

}  // namespace

TEST_CASE("a document that is not a map, or not one document") {
  check_error("", 1, 1, "no spec in the file");
  check_error("# only a comment\n", 1, 1, "no spec in the file");
  check_error(", 1", 1, 1, "YAML syntax error: unexpected ','");
  check_error("  ,", 1, 3, "YAML syntax error: unexpected ','");
  check_error("a\n...\n,\n", 3, 1, "unexpected ','");
  check_error("]", 1, 1, "YAML syntax error");
  check_error("}", 1, 1, "YAML syntax error");
  check_error("42", 1, 1, "expected a map, got '42'");
  check_error("\"quoted\"", 1, 1, "expected a map, got the string \"quoted\"");
  check_error("[1, 2]", 1, 1, "expected a map, got a list");
  check_error("- a\n- b\n", 1, 1, "expected a map, got a list");
  check_error("---\n", 1, 1, "expected a map, got no value");
  check_error("a: 1\n---\nb: 2\n", 3, 1, "a spec file holds one YAML document");
  check_error("--- a\n--- b\n--- c\n", 2, 5, "a spec file holds one YAML document");
  check_error("? [a]\n: 1\n", 1, 3, "keys must be plain names, got a list");
}

TEST_CASE("deep nesting is refused at the level past the limit, without recursing into it") {
  for (const char* open : {"[", "{", "[{", "{a: [", "- "}) {
    const std::string text = repeat(open, 100000);
    const SpecError e = error_of(text);
    INFO(open << ": " << e.what());
    CHECK(e.line() == 1);
    CHECK(e.message().find("nest deeper than 32 levels") != std::string::npos);
  }
  // Block style: one level per line.
  std::string block;
  for (int i = 0; i < 1000; ++i) block += std::string(static_cast<std::size_t>(i), ' ') + "-\n";
  check_error(block, 33, 33, "nest deeper than 32 levels");
  // 32 levels are still read (and refused only for not being a spec).
  check_error(repeat("[", 32) + repeat("]", 32), 1, 1, "expected a map, got a list");
}

TEST_CASE("anchors, aliases and merge keys are refused before anything is expanded") {
  std::string laughs = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 30; ++i) {
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" +
              repeat("*a" + std::to_string(i - 1) + ", ", 8) + "*a" + std::to_string(i - 1) + "]\n";
  }
  check_error(laughs, 1, 5, "YAML anchors (&a0) and aliases are not supported");
  check_error("a: *x\n", 1, 4, "the referenced anchor is not defined");
  check_error("kq_spec: 1\nop: &o x\n", 2, 5, "YAML anchors (&o)");
  check_error("kq_spec: 1\n<<: {op: x}\n", 2, 1, "YAML merge keys are not supported");
}

TEST_CASE("too many nodes, too many bytes") {
  check_error("[" + repeat("1, ", 20000) + "1]", 1, 29999, "more than 10000 YAML nodes");
  std::string big = kq::test::residual_relu_yaml();
  big += "# " + std::string(kq::kMaxSpecBytes, 'x') + "\n";
  check_error(big, 1, 1, "a spec is at most 1048576 bytes (1 MiB)");
  const std::string exact = std::string(kq::kMaxSpecBytes, ' ');
  check_error(exact, 1, 1, "no spec in the file");  // at the limit: read, and empty
}

TEST_CASE("NUL, control characters and invalid UTF-8 are refused at their line and column") {
  std::string text = kq::test::residual_relu_yaml();
  const std::size_t op = text.find("residual_relu");  // line 2, column 5
  auto with = [&](const std::string& bytes) {
    std::string t = text;
    t.insert(op + 2, bytes);
    return t;
  };
  check_error(with(std::string(1, '\0')), 2, 7, "a NUL byte");
  check_error(with("\x01"), 2, 7, "control character 0x01");
  check_error(with("\x7F"), 2, 7, "control character 0x7F");
  check_error(with("\xFF"), 2, 7, "invalid UTF-8 (byte 0xFF)");
  check_error(with("\x80"), 2, 7, "invalid UTF-8 (byte 0x80)");              // stray continuation
  check_error(with("\xC0\xAF"), 2, 7, "invalid UTF-8 (byte 0xC0)");          // overlong '/'
  check_error(with("\xE0\x80\xAF"), 2, 7, "invalid UTF-8 (byte 0xE0)");      // overlong, 3 bytes
  check_error(with("\xED\xA0\x80"), 2, 7, "invalid UTF-8 (byte 0xED)");      // a surrogate
  check_error(with("\xF4\x90\x80\x80"), 2, 7, "invalid UTF-8 (byte 0xF4)");  // above U+10FFFF
  check_error(with("\xF5\x80\x80\x80"), 2, 7, "invalid UTF-8 (byte 0xF5)");
  check_error(text + "\xE2\x82", 19, 1, "invalid UTF-8 (byte 0xE2)");  // truncated at the end
  // UTF-16 has NUL bytes: refused as not UTF-8, not parsed as something else.
  check_error(std::string("\xFF\xFEk\0q\0", 6), 1, 1, "invalid UTF-8 (byte 0xFF)");
  check_error(std::string("k\0q\0", 4), 1, 2, "a NUL byte");
  // Columns count characters: the bad byte after two 2-byte characters is at column 3.
  check_error("\xC3\xA9\xC3\xA9\xFF", 1, 3, "invalid UTF-8");
  // Well-formed multi-byte text is fine (and refused for what it says).
  check_error("op: \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\n", 1, 1, "missing required key");
}

TEST_CASE("huge numbers are refused with the field and a reason") {
  auto timing = [](const std::string& sizes) {
    std::string text = kq::test::residual_relu_yaml();
    text.replace(text.find("sizes: [4096]"), 13, "sizes: " + sizes);
    return text;
  };
  check_error(timing("[99999999999999999999]"), 16, 11, "is out of range");
  check_error(timing("[-99999999999999999999]"), 16, 11, "is out of range");
  check_error(timing("[9223372036854775807]"), 16, 11, "must be at most 2^40");
  check_error(timing("[-1]"), 16, 11, "must be a positive integer, got -1");
  check_error(timing("[1e999]"), 16, 11, "expected an integer, got '1e999'");
  check_error(timing("[" + std::string(5000, '9') + "]"), 16, 11, "...' is out of range");
  std::string text = kq::test::residual_relu_yaml();
  text.replace(text.find("baseline: nvrtc_jit"), 19, "baseline: nvrtc_jit\n  min_speedup: 1e999");
  check_error(text, 19, 16, "outside the float64 range");
}

TEST_CASE("long and deeply nested expressions: bounded, with the column of the problem") {
  // 256 levels parse; the 257th is refused at its column (the value starts at column 12).
  CHECK_NOTHROW(kq::parse_spec(
      with_semantics(repeat("(", 255) + "relu(x + residual)" + repeat(")", 255)), "deep.yaml"));
  check_error(with_semantics(repeat("(", 300) + "relu(x + residual)" + repeat(")", 300)), 8, 268,
              "expression nests deeper than 256 levels");
  check_error(with_semantics(repeat("-", 100000) + "relu(x + residual)"), 8, 268,
              "expression nests deeper than 256 levels");
  check_error(with_semantics(repeat("relu(", 100000) + "x + residual"), 8, 1296,
              "expression nests deeper than 256 levels");
  // A long flat chain is no problem: it is a loop, not recursion.
  const auto t0 = std::chrono::steady_clock::now();
  const kq::Spec s =
      kq::parse_spec(with_semantics("relu(x + residual)" + repeat(" + x", 200000)), "long.yaml");
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  CHECK(s.op.semantics.nodes.size() == 400004);
  CHECK(took.count() < 5.0);
  // A huge unknown key or value is quoted as an excerpt, not in full.
  const SpecError e =
      error_of(with_semantics("relu(x + residual)") + std::string(900, 'k') + ": 1\n");
  CHECK(e.message().find(std::string(60, 'k') + "...") != std::string::npos);
  CHECK(e.message().size() < 400);
}

TEST_CASE("every fuzzer finding, bad spec and shipped spec passes the fuzzer's checks") {
  std::vector<fs::path> files;
  for (const char* dir :
       {"tests/data/fuzz_regressions", "tests/data/bad_specs", "specs", "tests/fuzz/seeds"}) {
    for (const auto& e : fs::directory_iterator(kRoot / dir)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 130);
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    INFO(f.string());
    const auto finding = kq::fuzz::check_input(text.str());
    CHECK_MESSAGE(!finding.has_value(), finding.value_or(""));
  }
}
