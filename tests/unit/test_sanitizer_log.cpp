// compute-sanitizer logs as the H200 wrote them: memcheck's "ERROR SUMMARY" and racecheck's
// "RACECHECK SUMMARY", where only errors count.
#include <doctest/doctest.h>

#include <fstream>

#include "qualify/sanitizer_log.hpp"
#include "test_support.hpp"

namespace {

nlohmann::json parse(const std::string& text) {
  const auto dir = kq::test::temp_dir("sanitizer-log");
  std::ofstream(dir / "log.txt") << text;
  return kq::read_sanitizer_log(dir / "log.txt");
}

}  // namespace

TEST_CASE("memcheck: the error count and the first error") {
  auto j = parse(
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at kq::broken::cuda::<unnamed>::writes_past_end(const float *, const float "
      "*, float *, long)+0x250\n"
      "=========     Access to 0x7f3fa1000000 is out of bounds\n"
      "========= \n"
      "========= ERROR SUMMARY: 5 errors\n");
  CHECK(j["errors"] == 5);
  CHECK(j["first"] == "Invalid __global__ write of size 4 bytes");
}

TEST_CASE("a clean memcheck log: zero errors, no first error") {
  auto j = parse("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n");
  CHECK(j["errors"] == 0);
  CHECK(j["first"] == "");
}

TEST_CASE("racecheck: hazards displayed are not errors; its errors are") {
  auto clean = parse(
      "========= COMPUTE-SANITIZER\n"
      "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n");
  CHECK(clean["errors"] == 0);
  CHECK(clean["first"] == "");
  auto warned = parse("========= RACECHECK SUMMARY: 3 hazards displayed (0 errors, 3 warnings)\n");
  CHECK(warned["errors"] == 0);
  auto raced = parse(
      "========= Error: Race reported between Write access at k()+0x40\n"
      "=========     and Read access at k()+0x80 [128 hazards]\n"
      "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n");
  CHECK(raced["errors"] == 1);
  CHECK(raced["first"] == "Error: Race reported between Write access at k()+0x40");
}

TEST_CASE("a log without a summary (the tool died): errors -1") {
  CHECK(parse("========= COMPUTE-SANITIZER\n")["errors"] == -1);
  CHECK(kq::read_sanitizer_log("/nonexistent/kq/log.txt")["errors"] == -1);
}
