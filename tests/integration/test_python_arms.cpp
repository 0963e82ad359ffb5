// Arms written in Python (plugins/python): the shipped numpy arm qualifies through kq like any
// other, with its file's SHA-256 in its identity; files from KQ_PYTHON_ARMS load beside it; a
// file that cannot be imported is named with its line and exception while the others load; an
// exception in run() is that call's error, its traceback in the worker's log. Disabled where
// the plugin was not built (tests/CMakeLists.txt says why).
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "util/sha256.hpp"

namespace {

namespace fs = std::filesystem;
using kq::test::run_kq;

nlohmann::json read_json(const fs::path& f) {
  std::ifstream in(f);
  return nlohmann::json::parse(in);
}

void write(const fs::path& f, const std::string& text) { std::ofstream(f) << text; }

}  // namespace

TEST_CASE("the shipped numpy arm is listed and qualifies, its file hashed in its identity") {
  auto r = run_kq("list");
  INFO(r.out);
  CHECK(r.out.find("numpy_residual_relu") != std::string::npos);

  const fs::path dir = kq::test::temp_dir("python-numpy");
  r = run_kq(
      "run specs/residual_relu.yaml --arms numpy_residual_relu --quick --sizes 4096 --out '" +
      (dir / "run").string() + "'");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  const auto summary = read_json(dir / "run" / "summary.json");
  CHECK(summary["arms"][0]["verdict"] == "qualified");
  CHECK(summary["headline"]["out_of_contract_refused"] ==
        summary["headline"]["out_of_contract_cases"]);
  bool hashed = false;
  const fs::path file = kq::test::source_dir() / "plugins/python/arms/numpy_residual_relu.py";
  const auto manifest = read_json(dir / "run" / "manifest.json");
  for (const auto& s : manifest["arms"][0]["sources"])
    hashed |= s["path"] == "plugins/python/arms/numpy_residual_relu.py" &&
              s["sha256"] == kq::sha256_file(file);
  CHECK(hashed);
}

TEST_CASE("KQ_PYTHON_ARMS: unimportable files are named, the others load, an exception fails") {
  const fs::path dir = kq::test::temp_dir("python-extra");
  const fs::path arms = dir / "arms";
  fs::create_directories(arms);
  write(arms / "bad_syntax.py", "import kq\n\nclass Broken(kq.Arm)\n    name = 'x'\n");
  write(arms / "missing_module.py", "import no_such_module_for_kq\n");
  write(arms / "raises.py",
        "import kq\n\n"
        "class Raises(kq.Arm):\n"
        "    name = 'py_raises'\n"
        "    def run(self, inputs, outputs):\n"
        "        raise ValueError('out of cheese')\n");
  setenv("KQ_PYTHON_ARMS", arms.c_str(), 1);
  auto r = run_kq("list");
  INFO(r.out);
  CHECK(r.out.find("load errors:") != std::string::npos);
  CHECK(r.out.find("bad_syntax.py: cannot import: line 3: SyntaxError") != std::string::npos);
  CHECK(r.out.find("missing_module.py: cannot import: line 1: ModuleNotFoundError") !=
        std::string::npos);
  CHECK(r.out.find("py_raises") != std::string::npos);
  CHECK(r.out.find("numpy_residual_relu") != std::string::npos);

  r = run_kq("run specs/residual_relu.yaml --arms py_raises --quick --sizes 4096 --out '" +
             (dir / "run").string() + "'");
  unsetenv("KQ_PYTHON_ARMS");
  INFO(r.out);
  CHECK(r.exit_code == 1);
  const auto summary = read_json(dir / "run" / "summary.json");
  CHECK(summary["arms"][0]["verdict"] == "rejected");
  CHECK(summary["arms"][0]["check"] == "arm_error");
  // The files that did not import are named in the run's report, as plugins that fail to load.
  const std::string md = kq::test::read_file(dir / "run" / "report.md");
  CHECK(md.find("Did not load:") != std::string::npos);
  CHECK(md.find("bad_syntax.py: cannot import: line 3: SyntaxError") != std::string::npos);
  const std::string log = kq::test::read_file(dir / "run" / "logs" / "qualify-py_raises.log");
  CHECK(log.find("ValueError: out of cheese") != std::string::npos);
  CHECK(log.find("raises.py\", line 6") != std::string::npos);
}

TEST_CASE("--python-arms DIR: its arms are listed beside KQ_PYTHON_ARMS'; a missing DIR is named") {
  const fs::path dir = kq::test::temp_dir("python-arms-option");
  const fs::path arms = dir / "more arms";
  fs::create_directories(arms);
  write(arms / "extra.py",
        "import kq\n\n"
        "class Extra(kq.Arm):\n"
        "    name, family, device, version = 'py_from_option', 'test', 'cpu', '1'\n");
  unsetenv("KQ_PYTHON_ARMS");
  auto r = run_kq("list");
  CHECK(r.out.find("py_from_option") == std::string::npos);
  r = run_kq("list --python-arms '" + arms.string() + "'");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("py_from_option") != std::string::npos);
  CHECK(r.out.find("numpy_residual_relu") != std::string::npos);  // the shipped ones still load
  // The python plugin says what it runs on.
  CHECK(r.out.find("libkq_python.so (") != std::string::npos);
  CHECK(r.out.find("    python: 3.") != std::string::npos);
  CHECK(r.out.find("    torch: ") != std::string::npos);
  CHECK(r.out.find("    triton: ") != std::string::npos);

  r = run_kq("list --python-arms '" + (dir / "absent").string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--python-arms: '" + (dir / "absent").string() + "' is not a folder") !=
        std::string::npos);
  r = run_kq("run specs/residual_relu.yaml --python-arms '" + (dir / "absent").string() + "'");
  CHECK(r.exit_code == 2);
  r = run_kq("selftest --python-arms '" + (dir / "absent").string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--python-arms") != std::string::npos);
}
