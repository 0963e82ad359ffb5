// kq check-spec, run and qualify on hostile specs: every one exits 2 with file:line:column, under
// a 2 GiB address-space limit and a 30 s wall-clock limit, so that a regression fails the test
// instead of exhausting the machine. The committed files are tests/data/bad_specs; the ones too
// big to commit (100 MB, 100000 nested brackets) are written here.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "bounded_run.hpp"

namespace fs = std::filesystem;
using kq::test::run_kq_bounded;

namespace {

// What a hostile spec must get: exit 2, in time, with `position` ("file:line:column:") and
// `message` in the output.
void check_refused(const std::vector<std::string>& args, const std::string& position,
                   const std::string& message) {
  const kq::test::BoundedResult r = run_kq_bounded(args);
  INFO("kq " << args[0] << " " << args[1] << ": " << r.out.substr(0, 2000));
  CHECK_FALSE(r.timed_out);
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find(position) != std::string::npos);
  CHECK(r.out.find(message) != std::string::npos);
}

fs::path write_file(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

}  // namespace

TEST_CASE("check-spec refuses every bad spec with exit 2 and the position its expect line says") {
  const std::regex expect_re(R"(^# expect: (\d+):(\d+) (\S*) :: (.+)$)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kq::test::source_dir() / "tests/data/bad_specs")) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 100);
  for (const fs::path& f : files) {
    const std::string text = kq::test::read_file(f);
    const std::string first = text.substr(0, text.find('\n'));
    std::smatch m;
    REQUIRE_MESSAGE(std::regex_match(first, m, expect_re), f << ": bad expect line");
    check_refused({"check-spec", f.string()},
                  f.string() + ":" + m[1].str() + ":" + m[2].str() + ": ", m[4].str());
  }
}

TEST_CASE("files too big to commit: 100 MB, 100000 nested brackets, /dev/zero") {
  const fs::path dir = kq::test::temp_dir("hostile-specs");
  // 100 MB without writing it: a sparse file is refused on its size before a byte is read.
  const fs::path huge = dir / "huge.yaml";
  std::ofstream(huge) << "kq_spec: 1\n";
  fs::resize_file(huge, 100u << 20);
  check_refused({"check-spec", huge.string()}, huge.string() + ":1:1: ",
                "the file is 104857600 bytes; a spec is at most 1048576 bytes");
  // A device has no size: at most 1 MiB + 1 byte of it is read.
  check_refused({"check-spec", "/dev/zero"},
                "/dev/zero:1:1: ", "more than 1048576 bytes; a spec is at most 1048576 bytes");

  const fs::path brackets = write_file(dir, "brackets.yaml", std::string(100000, '['));
  check_refused({"check-spec", brackets.string()},
                brackets.string() + ":1:", "nest deeper than 32 levels");
  const fs::path braces = write_file(dir, "braces.yaml", std::string(100000, '{'));
  check_refused({"check-spec", braces.string()},
                braces.string() + ":1:", "nest deeper than 32 levels");
  std::string mixed;
  for (int i = 0; i < 50000; ++i) mixed += "a: [{";
  const fs::path both = write_file(dir, "mixed.yaml", mixed);
  check_refused({"check-spec", both.string()}, both.string() + ":1:", "nest deeper than 32");
  std::string block;
  for (int i = 0; i < 200; ++i) block += std::string(static_cast<std::size_t>(i), ' ') + "-\n";
  const fs::path blocks = write_file(dir, "block.yaml", block);
  check_refused({"check-spec", blocks.string()}, blocks.string() + ":33:", "nest deeper than 32");

  const fs::path empty = write_file(dir, "empty.yaml", "");
  check_refused({"check-spec", empty.string()}, empty.string() + ":1:1: ", "no spec in the file");
  const fs::path big_text = write_file(dir, "big.yaml", std::string((1u << 20) + 1, ' '));
  check_refused({"check-spec", big_text.string()},
                big_text.string() + ":1:1: ", "the file is 1048577 bytes");
}

TEST_CASE("run and qualify refuse a hostile spec the same way") {
  const fs::path dir = kq::test::temp_dir("hostile-run");
  const fs::path junk = write_file(dir, "junk.yaml", ", 1\n");
  for (const char* command : {"run", "qualify"}) {
    check_refused({command, junk.string(), "--out", (dir / command).string()},
                  junk.string() + ":1:1: ", "unexpected ','");
  }
  const fs::path laughs = kq::test::source_dir() / "tests/data/bad_specs/billion_laughs.yaml";
  check_refused({"run", laughs.string(), "--out", (dir / "laughs").string()}, laughs.string() + ":",
                "anchors");
}
