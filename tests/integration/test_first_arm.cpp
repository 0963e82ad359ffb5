// examples/first_arm, the arms a new user runs first, as README.md shows them: README.md quotes
// each of its files byte for byte (after a line `<!-- file: examples/first_arm/NAME -->`); the
// Triton arm loads from `--python-arms examples/first_arm` where plugins/python is built, and is
// skipped without a CUDA device; the CUDA arm builds against the installed SDK where nvcc is
// (find_package(kq), kq_add_plugin on a .cu file), loads, and qualifies where a GPU is.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "device/memory.hpp"
#include "sdk_install.hpp"
#include "test_support.hpp"
#include "util/sha256.hpp"

namespace {

namespace fs = std::filesystem;
using kq::test::q;
using kq::test::read_json;

const char* const kFiles[] = {"triton_residual_relu.py", "cuda_residual_relu.cu", "CMakeLists.txt"};

fs::path example(const std::string& name) {
  return kq::test::source_dir() / "examples/first_arm" / name;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

// What README.md quotes of a file: the body of the fenced code block on the line right after
// the file's marker, or `why` there is none. A fence opens with three or more backticks (an info
// string may follow) and closes with a line of as many or more backticks only.
struct Quote {
  bool found = false;
  std::string body;
  std::string why;
};

Quote quoted(const std::vector<std::string>& readme, const std::string& name) {
  const std::string marker = "<!-- file: examples/first_arm/" + name + " -->";
  Quote out;
  const auto it = std::find(readme.begin(), readme.end(), marker);
  if (it == readme.end()) {
    out.why = "README.md has no line '" + marker +
              "' followed by a fenced code block holding the file (the README's first-arm "
              "section quotes each file of examples/first_arm verbatim)";
    return out;
  }
  const std::size_t open = static_cast<std::size_t>(it - readme.begin()) + 1;
  if (open >= readme.size() || readme[open].rfind("```", 0) != 0) {
    out.why = "README.md line " + std::to_string(open + 1) + ", right after '" + marker +
              "', is not a code fence (```)";
    return out;
  }
  const std::string fence = readme[open].substr(0, readme[open].find_first_not_of('`'));
  for (std::size_t i = open + 1; i < readme.size(); ++i) {
    if (readme[i].rfind(fence, 0) == 0 && readme[i].find_first_not_of('`') == std::string::npos) {
      out.found = true;
      return out;
    }
    out.body += readme[i] + "\n";
  }
  out.why = "the code block of README.md line " + std::to_string(open + 1) + ", after '" + marker +
            "', is never closed";
  return out;
}

// Where README.md's copy of a file first differs from it, line by line.
std::string first_difference(const std::string& quote, const std::string& file) {
  const auto a = lines_of(quote), b = lines_of(file);
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string x = i < a.size() ? "'" + a[i] + "'" : "nothing";
    const std::string y = i < b.size() ? "'" + b[i] + "'" : "nothing";
    if (x != y)
      return "README.md's copy differs from the file at its line " + std::to_string(i + 1) +
             ": README.md has " + x + ", the file " + y;
  }
  return "README.md's copy differs from the file in its last line's end";
}

}  // namespace

TEST_CASE("README.md quotes each file of examples/first_arm byte for byte") {
  const auto readme = lines_of(kq::test::read_file(kq::test::source_dir() / "README.md"));
  for (const std::string name : kFiles) {
    CAPTURE(name);
    REQUIRE(fs::exists(example(name)));
    const Quote quote = quoted(readme, name);
    CHECK_MESSAGE(quote.found, quote.why);
    if (!quote.found) continue;
    const std::string file = kq::test::read_file(example(name));
    const bool same = quote.body == file;
    CHECK_MESSAGE(same, first_difference(quote.body, file));
  }
}

TEST_CASE("the Triton example loads as a Python arm, and runs where CUDA is") {
  if (std::string(KQ_TEST_PYTHON).empty()) {
    MESSAGE(
        "skipped: plugins/python was not built here (no Python development files or "
        "pybind11)");
    return;
  }
  auto r = kq::test::run_kq("list --python-arms examples/first_arm");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("triton_residual_relu ") != std::string::npos);
  CHECK(r.out.find("load errors") == std::string::npos);

  const fs::path dir = kq::test::temp_dir("first-arm-triton");
  r = kq::test::run_kq(
      "run specs/residual_relu.yaml --python-arms examples/first_arm --arms "
      "triton_residual_relu --quick --out " +
      q(dir / "run"));
  INFO(r.out);
  const auto arm = read_json(dir / "run" / "summary.json")["arms"][0];
  INFO(arm.dump());
  CHECK(arm["name"] == "triton_residual_relu");
  std::string why;
  if (!kq::cuda_usable(&why)) {
    MESSAGE((std::string("no CUDA device here (") + why + "): the Triton arm is listed, skipped"));
    CHECK(arm["verdict"] == "skipped");
    CHECK(arm["detail"] == why);
    return;
  }
  if (arm["verdict"] == "unsupported") {  // a GPU, but not the Python modules the arm requires
    const std::string detail = arm["detail"];
    MESSAGE((std::string("the Triton arm could not run here: ") + detail));
    CHECK((detail.find("not installed") != std::string::npos ||
           detail.find("PyTorch") != std::string::npos));
    return;
  }
  CHECK(arm["verdict"] == "qualified");
}

TEST_CASE("the CUDA example builds against the installed SDK, loads, and qualifies on a GPU") {
  const std::string nvcc = KQ_TEST_CUDA_COMPILER;
  if (nvcc.empty()) {
    MESSAGE("skipped: this build found no nvcc, so examples/first_arm (a .cu plugin) is not built");
    return;
  }
  const kq::test::Prefix& p = kq::test::prefix();
  INFO(p.install.out);
  REQUIRE(p.install.exit_code == 0);
  const fs::path build = p.dir / "first-arm-build";
  // This build's nvcc, its host compiler and architectures (given ','-separated), so that the
  // plugin runs here.
  std::string archs = KQ_TEST_CUDA_ARCHITECTURES;
  std::replace(archs.begin(), archs.end(), ',', ';');
  std::string cuda =
      "-DCMAKE_CUDA_COMPILER='" + nvcc + "' -DCMAKE_CUDA_ARCHITECTURES='" + archs + "'";
  if (!std::string(KQ_TEST_CUDA_HOST_COMPILER).empty())
    cuda += " -DCMAKE_CUDA_HOST_COMPILER='" KQ_TEST_CUDA_HOST_COMPILER "'";
  auto r = kq::test::build_against(p, example(""), build, cuda);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  REQUIRE(fs::exists(build / "plugins/libkq_first_arm.so"));

  r = kq::test::sh(q(p.dir / "bin/kq") + " list --plugin-dir " + q(build / "plugins"));
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("cuda_residual_relu ") != std::string::npos);
  CHECK(r.out.find("libkq_first_arm.so:") == std::string::npos);  // no load error

  std::string why;
  if (!kq::cuda_usable(&why)) {
    MESSAGE(
        (std::string("no CUDA device here (") + why + "): the CUDA arm is built, listed, not run"));
    return;
  }
  const fs::path out = p.dir / "run-first-arm";
  r = kq::test::sh("cd " + q(p.dir) + " && bin/kq run " +
                   q(kq::test::source_dir() / "specs/residual_relu.yaml") + " --plugin-dir " +
                   q(build / "plugins") + " --arms cuda_residual_relu --quick --out " + q(out));
  INFO(r.out);
  const auto arm = read_json(out / "manifest.json")["arms"][0];
  INFO(arm.dump());
  bool hashed = false;
  for (const auto& s : arm["sources"])
    hashed |= s["path"] == "cuda_residual_relu.cu" &&
              s["sha256"] == kq::sha256_file(example("cuda_residual_relu.cu"));
  CHECK(hashed);
  CHECK(arm["compile_flags"].get<std::string>().find("nvcc ") != std::string::npos);
  CHECK(read_json(out / "summary.json")["arms"][0]["verdict"] == "qualified");
}
