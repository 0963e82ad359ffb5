// specs/kernelbench: the KernelBench level-1 problems kq mirrors, one format-2 spec each, and the
// bf16 transformer-shape specs beside them. Each loads through the spec loader as format 2
// (shaped) with at least one timing point and a compare rule; the folder holds exactly the 100
// problems, named NN_name.yaml after their KernelBench number.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "spec/spec.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kSpecs = fs::path(KQ_SOURCE_DIR) / "specs";

// The KernelBench level-1 problems with a spec: the 17 matrix products (1 to 4, 6 to 18), the
// 14 pointwise ones, softmax and log-softmax, the eight norms, six poolings (41 to 46), six
// reductions, 35 convolutions (50 to 87), five scans, six losses and attention: all 100.
const std::set<int> kProblems = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17,
                                 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
                                 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51,
                                 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68,
                                 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85,
                                 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100};

std::vector<fs::path> kernelbench_files() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kSpecs / "kernelbench"))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::optional<kq::Spec> load(const fs::path& file) {
  try {
    return kq::load_spec(file);
  } catch (const kq::SpecError& e) {
    FAIL_CHECK(std::string(e.what()));
  }
  return std::nullopt;
}

// Format 2, named, with a compare rule and at least one timing point.
std::optional<kq::Spec> check_format2(const fs::path& file) {
  INFO(file.string());
  auto s = load(file);
  if (!s) return s;
  CHECK(s->shaped.has_value());
  if (!s->shaped) return std::nullopt;
  CHECK(!s->op.op.empty());
  CHECK(!s->shaped->compare.empty());
  CHECK(!s->shaped->timing_points.empty());
  return s;
}

}  // namespace

TEST_CASE("specs/kernelbench holds the 100 problems, one NN_name.yaml each") {
  const auto files = kernelbench_files();
  CHECK(files.size() == 100);
  std::set<int> numbers;
  for (const auto& f : files) {
    const std::string name = f.filename().string();
    INFO(name);
    const auto underscore = name.find('_');
    REQUIRE(underscore != std::string::npos);
    REQUIRE(underscore > 0);
    const std::string digits = name.substr(0, underscore);
    REQUIRE(std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }));
    CHECK(numbers.insert(std::stoi(digits)).second);
  }
  CHECK(numbers == kProblems);
}

TEST_CASE("every KernelBench spec loads as format 2 with a timing point") {
  for (const auto& f : kernelbench_files()) check_format2(f);
}

TEST_CASE("the bf16 transformer-shape specs load as format 2, 32768x4096 among their points") {
  for (const char* name : {"softmax_bf16.yaml", "layer_norm_bf16.yaml", "rms_norm_bf16.yaml"}) {
    INFO(name);
    const auto s = check_format2(kSpecs / name);
    if (!s) continue;
    const auto& points = s->shaped->timing_points;
    // Dims in declaration order: M (rows), N (the reduced last dim).
    const kq::Point wanted{{32768, 4096}};
    CHECK(std::find(points.begin(), points.end(), wanted) != points.end());
  }
}
