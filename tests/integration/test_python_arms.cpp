// Arms written in Python (plugins/python): the shipped numpy arm qualifies through kq like any
// other, with its file's SHA-256 in its identity; files from KQ_PYTHON_ARMS load beside it; a
// file that cannot be imported is named with its line and exception while the others load; an
// exception in run() is that call's error, its traceback in the worker's log. The generated torch
// arms qualify every shipped spec on the CPU (torch_compile declines where torch has none), the
// broken torch candidates are rejected by their declared check, and kq.Tensor's protocols carry
// kq's views intact. Disabled where the plugin was not built (tests/CMakeLists.txt says why).
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "util/json_lines.hpp"
#include "util/sha256.hpp"

namespace {

namespace fs = std::filesystem;
using kq::test::run_kq;

nlohmann::json read_json(const fs::path& f) {
  std::ifstream in(f);
  return nlohmann::json::parse(in);
}

void write(const fs::path& f, const std::string& text) { std::ofstream(f) << text; }

// The version of torch the plugin's Python has ("" when none), as `python3 -c` tells.
std::string torch_version() {
  const fs::path out = kq::test::temp_dir("python-torch") / "version.txt";
  const std::string cmd = std::string(KQ_TEST_PYTHON) +
                          " -c 'import torch; print(torch.__version__)' > '" + out.string() +
                          "' 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) return "";
  std::string v = kq::test::read_file(out);
  while (!v.empty() && v.back() == '\n') v.pop_back();
  return v;
}

// One arm on one spec, qualification only; returns the run's summary.
nlohmann::json qualify(const std::string& spec, const std::string& arm, const fs::path& dir,
                       const std::string& extra = "") {
  auto r = run_kq("run " + spec + " --arms " + arm + " --quick --no-timing " + extra + " --out '" +
                  dir.string() + "'");
  INFO(r.out);
  return read_json(dir / "summary.json");
}

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

TEST_CASE("the numpy arm qualifies on f16 and declines bf16, which numpy lacks") {
  // residual_relu_f16 is an ieee spec: sums of two NaNs, whose payload and sign numpy's vector
  // loops pick by the alignment of their float32 temporary, so they differ from one run to the
  // next. kq compares NaN as a mask, in the repeat check too: the arm qualifies.
  const fs::path dir = kq::test::temp_dir("python-numpy-half");
  auto summary = qualify("specs/residual_relu_f16.yaml", "numpy_residual_relu", dir / "f16");
  INFO(summary.dump());
  CHECK(summary["arms"][0]["verdict"] == "qualified");
  summary = qualify("specs/residual_relu_bf16.yaml", "numpy_residual_relu", dir / "bf16");
  CHECK(summary["arms"][0]["verdict"] == "unsupported");
  CHECK(summary["arms"][0]["detail"] == "numpy has no bfloat16");
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

TEST_CASE("a file that changes a shared module at import is rejected, and its change put back") {
  // numpy.add replaced by a wrapper that computes x - y: the shipped numpy arm, whose worker
  // imports this file too, computes relu(x + residual) with numpy.add and qualifies only if the
  // original is back before it runs.
  const fs::path dir = kq::test::temp_dir("python-tamper");
  const fs::path arms = dir / "arms";
  fs::create_directories(arms);
  write(
      arms / "saboteur.py",
      "import numpy\n"
      "import kq\n\n"
      "_add = numpy.add\n\n"
      "def add(x, y, *args, **kwargs):\n"
      "    return numpy.subtract(x, y, *args, **kwargs)\n\n"
      "numpy.add = add\n\n"
      "@kq.arm(name='py_saboteur', device='cpu', tensors='numpy', computes='relu(x + residual)')\n"
      "def saboteur(inputs, outputs):\n"
      "    x, r = inputs\n"
      "    _add(x, r, out=outputs[0])\n"
      "    numpy.maximum(outputs[0], 0, out=outputs[0])\n");
  setenv("KQ_PYTHON_ARMS", arms.c_str(), 1);
  auto r = run_kq("list");
  INFO(r.out);
  CHECK(r.out.find("py_saboteur") != std::string::npos);
  CHECK(r.out.find("(rejected: importing saboteur.py changed what every arm shares: numpy.add "
                   "replaced by add (" +
                   (arms / "saboteur.py").string() + ":6) (put back for the other arms))") !=
        std::string::npos);

  r = run_kq(
      "run specs/residual_relu.yaml --arms py_saboteur,numpy_residual_relu --quick "
      "--no-timing --out '" +
      (dir / "run").string() + "'");
  unsetenv("KQ_PYTHON_ARMS");
  INFO(r.out);
  const auto summary = read_json(dir / "run" / "summary.json");
  for (const auto& a : summary["arms"]) {
    INFO(a.dump());
    if (a["name"] == "py_saboteur") {
      CHECK(a["verdict"] == "rejected");
      CHECK(a["check"] == "tampering");
    } else {
      CHECK(a["verdict"] == "qualified");
    }
  }
  CHECK(summary["arms"].size() == 2);
}

TEST_CASE("a shipped file that starts a thread at import is named, its arm rejected") {
  const auto r = run_kq("list");
  INFO(r.out);
  CHECK(r.out.find("(rejected: importing broken_thread_at_import.py started thread 'loiter', "
                   "running _loiter (") != std::string::npos);
  CHECK(r.out.find("numpy_residual_relu") != std::string::npos);
  // Only the file that started it is named: the files imported after it are not.
  std::size_t named = 0;
  for (auto at = r.out.find("started thread"); at != std::string::npos;
       at = r.out.find("started thread", at + 1))
    ++named;
  CHECK(named == 1);
}

namespace {

// A numpy arm `name` computing relu(x + residual) whose file, when imported, adds the importing
// process's id to `pids_file` beside it: which processes imported it.
std::string pid_noting_arm(const std::string& name, const std::string& pids_file) {
  return "import os\n"
         "import kq\n\n"
         "with open(os.path.join(os.path.dirname(__file__), '" +
         pids_file +
         "'), 'a') as f:\n"
         "    f.write('%d\\n' % os.getpid())\n\n"
         "@kq.arm(name='" +
         name +
         "', device='cpu', tensors='numpy', computes='relu(x + residual)')\n"
         "def arm(inputs, outputs):\n"
         "    import numpy\n"
         "    numpy.add(inputs[0], inputs[1], out=outputs[0])\n"
         "    numpy.maximum(outputs[0], 0, out=outputs[0])\n"
         "    numpy.add(outputs[0], 0, out=outputs[0])\n";
}

// The distinct lines of a file.
std::set<std::string> lines_of(const fs::path& file) {
  std::set<std::string> s;
  std::istringstream in(kq::test::read_file(file));
  for (std::string line; std::getline(in, line);) s.insert(line);
  return s;
}

// How many case records `arm` has in a run's qualification.jsonl.
int case_records(const fs::path& run, const std::string& arm) {
  int n = 0;
  for (const auto& j : kq::read_json_lines(run / "qualification.jsonl"))
    n += j["type"] == "case" && j["arm"] == arm;
  return n;
}

}  // namespace

TEST_CASE("a worker imports only the files of the arms it holds") {
  // Each file notes the process that imports it. The parent kq imports both to list the arms;
  // py_first's qualification and timing workers import first.py alone.
  const fs::path dir = kq::test::temp_dir("python-origins");
  const fs::path arms = dir / "arms";
  fs::create_directories(arms);
  for (const char* stem : {"first", "second"})
    write(arms / (std::string(stem) + ".py"),
          pid_noting_arm("py_" + std::string(stem), std::string(stem) + ".pids"));
  setenv("KQ_PYTHON_ARMS", arms.c_str(), 1);
  // One worker an arm (with four at once an arm from a file gets two: qualify_stage.hpp).
  auto r = run_kq(
      "run specs/residual_relu.yaml --arms py_first --quick --sizes 4096 --jobs 1 "
      "--out '" +
      (dir / "run").string() + "'");
  unsetenv("KQ_PYTHON_ARMS");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  const std::set<std::string> first = lines_of(arms / "first.pids"),
                              second = lines_of(arms / "second.pids");
  CHECK(first.size() == 3);  // the parent, the qualification worker, the timing worker
  CHECK(second.size() == 1);
  for (const auto& p : second) CHECK(first.count(p) == 1);
  const auto summary = read_json(dir / "run" / "summary.json");
  CHECK(summary["arms"][0]["verdict"] == "qualified");
}

TEST_CASE("KQ_QUALIFY_SHARDS: an arm's cases shared by that many workers, one verdict") {
  const fs::path dir = kq::test::temp_dir("python-shards");
  const fs::path arms = dir / "arms";
  fs::create_directories(arms);
  write(arms / "sharded.py", pid_noting_arm("py_sharded", "pids"));
  setenv("KQ_PYTHON_ARMS", arms.c_str(), 1);
  auto r = run_kq(
      "run specs/residual_relu.yaml --arms py_sharded --quick --no-timing --jobs 1 "
      "--out '" +
          (dir / "run").string() + "'",
      "KQ_QUALIFY_SHARDS=3");
  unsetenv("KQ_PYTHON_ARMS");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(lines_of(arms / "pids").size() == 4);  // the parent and three qualification workers
  for (const char* log :
       {"qualify-py_sharded.log", "qualify-py_sharded.shard2.log", "qualify-py_sharded.shard3.log"})
    CHECK(fs::exists(dir / "run" / "logs" / log));
  CHECK_FALSE(fs::exists(dir / "run" / "logs" / "claims-py_sharded"));  // the workers' counter
  const auto summary = read_json(dir / "run" / "summary.json");
  CHECK(summary["arms"][0]["verdict"] == "qualified");
  const int cases = case_records(dir / "run", "py_sharded");
  CHECK(cases == summary["arms"][0]["counts"]["total"].get<int>());  // each case once
  CHECK(cases > 3);
}

// An arm whose cases outlast a new worker's first case takes more workers while the machine has
// room: here each call sleeps, the first in a process longer (a compile from nothing).
TEST_CASE("a slow arm from a file takes more workers while its cases last") {
  const fs::path dir = kq::test::temp_dir("python-shards-join");
  const fs::path arms = dir / "arms";
  fs::create_directories(arms);
  write(arms / "slow.py",
        "import os, time\n"
        "import kq\n\n"
        "with open(os.path.join(os.path.dirname(__file__), 'pids'), 'a') as f:\n"
        "    f.write('%d\\n' % os.getpid())\n"
        "first = [True]\n\n"
        "@kq.arm(name='py_slow', device='cpu', tensors='numpy', computes='relu(x + residual)')\n"
        "def arm(inputs, outputs):\n"
        "    import numpy\n"
        "    time.sleep(0.2 if first[0] else 0.08)\n"
        "    first[0] = False\n"
        "    numpy.add(inputs[0], inputs[1], out=outputs[0])\n"
        "    numpy.maximum(outputs[0], 0, out=outputs[0])\n");
  auto qualify_slow = [&](const std::string& out, const std::string& env) {
    auto r = run_kq(
        "qualify specs/residual_relu.yaml --arms py_slow --quick --jobs 4 "
        "--python-arms '" +
            arms.string() + "' --out '" + (dir / out).string() + "'",
        "KQ_QUALIFY_SHARDS=2 " + env);
    INFO(r.out);
    CHECK(r.exit_code == 0);
  };
  qualify_slow("run", "");
  CHECK(lines_of(arms / "pids").size() > 3);  // the parent, two workers and one that joined
  CHECK(fs::exists(dir / "run" / "logs" / "qualify-py_slow.shard3.log"));
  const auto summary = read_json(dir / "run" / "summary.json");
  CHECK(summary["arms"][0]["verdict"] == "qualified");
  CHECK(case_records(dir / "run", "py_slow") ==
        summary["arms"][0]["counts"]["total"].get<int>());  // each case once

  // KQ_QUALIFY_ROOM=0: none joins (what joining buys, measured against it).
  qualify_slow("alone", "KQ_QUALIFY_ROOM=0");
  CHECK(fs::exists(dir / "alone" / "logs" / "qualify-py_slow.shard2.log"));
  CHECK_FALSE(fs::exists(dir / "alone" / "logs" / "qualify-py_slow.shard3.log"));
}

TEST_CASE("torch_eager_cpu qualifies every shipped spec; torch_compile_cpu declines without it") {
  const std::string version = torch_version();
  if (version.empty()) {
    MESSAGE("skipped: the plugin's Python has no torch (Debian: python3-torch)");
    return;
  }
  const fs::path dir = kq::test::temp_dir("python-torch-eager");
  int specs = 0;
  for (const auto& e : fs::directory_iterator(kq::test::source_dir() / "specs")) {
    if (e.path().extension() != ".yaml") continue;
    // Format-2 specs are timed (so qualified) at transformer shapes, too large for a CPU test:
    // unit/test_torch_shaped holds the torch arms of format 2 to a float64 reference.
    if (kq::test::read_file(e.path()).find("kq_spec: 2") != std::string::npos) continue;
    ++specs;
    const auto summary = qualify(e.path().string(), "torch_eager_cpu", dir / e.path().stem());
    INFO(e.path().filename().string());
    REQUIRE(summary["arms"].size() == 1);
    CHECK(summary["arms"][0]["verdict"] == "qualified");
    CHECK(summary["arms"][0]["counts"]["failed"] == 0);
  }
  CHECK(specs >= 11);
  {
    // torch's float32 silu is x / (1 + exp(-x)): below x = -88.7 exp overflows and it gives -0
    // where silu(x) * y is still a bf16 number; {ulp: 1} sees it. silu_mul_bf16 bounds its
    // inputs at 64 for that reason (argued in the spec); without the bound, torch is rejected.
    std::string text = kq::test::read_file(kq::test::source_dir() / "specs" / "silu_mul_bf16.yaml");
    const auto at = text.find("  max_abs_input: 64\n");
    REQUIRE(at != std::string::npos);
    text.erase(at, std::string("  max_abs_input: 64\n").size());
    const fs::path unbounded = dir / "silu_mul_bf16_unbounded.yaml";
    write(unbounded, text);
    const auto summary = qualify(unbounded.string(), "torch_eager_cpu", dir / "unbounded");
    REQUIRE(summary["arms"].size() == 1);
    CHECK(summary["arms"][0]["verdict"] == "rejected");
    CHECK(summary["arms"][0]["check"] == "values");
  }
  // Half specs computed in f32: the inputs widened, the result rounded once into out.
  const std::string half = kq::test::read_file(dir / "residual_relu_bf16" / "artifacts" /
                                               "torch_eager_cpu" / "torch_eager.py");
  CHECK(half.find("x = x.to(DT)") != std::string::npos);
  CHECK(half.find("out.copy_(F.threshold(t2, 0.0, 0.0))") != std::string::npos);
  // The generated eager function is the arm's artifact.
  const std::string eager = kq::test::read_file(dir / "residual_relu" / "artifacts" /
                                                "torch_eager_cpu" / "torch_eager.py");
  CHECK(eager.find("torch.add(x, residual, out=out)") != std::string::npos);
  CHECK(eager.find("F.threshold_(out, 0.0, 0.0)") != std::string::npos);

  const auto summary = qualify("specs/residual_relu.yaml", "torch_compile_cpu", dir / "compile");
  if (version.rfind("1.", 0) == 0) {
    CHECK(summary["arms"][0]["verdict"] == "unsupported");
    CHECK(summary["arms"][0]["detail"].get<std::string>().find("has no torch.compile") !=
          std::string::npos);
  } else {
    CHECK(summary["arms"][0]["verdict"] == "qualified");
  }
}

TEST_CASE("the broken torch candidates on the CPU are rejected by their declared check") {
  if (torch_version().empty()) {
    MESSAGE("skipped: the plugin's Python has no torch (Debian: python3-torch)");
    return;
  }
  const fs::path dir = kq::test::temp_dir("python-broken");
  const std::pair<const char*, const char*> cases[] = {
      {"broken_torch_result_cache_cpu", "new_values"},
      {"broken_torch_mutates_input_cpu", "input_modified"},
  };
  for (const auto& [arm, check] : cases) {
    const auto summary = qualify("specs/residual_relu.yaml", arm, dir / arm);
    INFO(arm);
    CHECK(summary["arms"][0]["verdict"] == "rejected");
    CHECK(summary["arms"][0]["check"] == check);
  }
  // NaN dropped: only where NaN is in the domain; declined, with the reason, elsewhere.
  auto summary =
      qualify("specs/residual_relu_ieee.yaml", "broken_torch_nan_where_cpu", dir / "nan");
  CHECK(summary["arms"][0]["verdict"] == "rejected");
  CHECK(summary["arms"][0]["check"] == "values");
  summary = qualify("specs/residual_relu.yaml", "broken_torch_nan_where_cpu", dir / "finite");
  CHECK(summary["arms"][0]["verdict"] == "unsupported");
}

TEST_CASE("the torch cache on sampled contents qualifies, and is caught while timed") {
  if (torch_version().empty()) {
    MESSAGE("skipped: the plugin's Python has no torch (Debian: python3-torch)");
    return;
  }
  const fs::path dir = kq::test::temp_dir("python-content-cache") / "run";
  auto r = run_kq(
      "run specs/residual_relu.yaml --quick --include-broken --arms "
      "cpu_tbb,broken_torch_content_cache_cpu --sizes 65536 --out '" +
      dir.string() + "'");
  INFO(r.out);
  const auto summary = read_json(dir / "summary.json");
  for (const auto& a : summary["arms"]) {
    if (a["name"] != "broken_torch_content_cache_cpu") continue;
    CHECK(a["verdict"] == "rejected");
    CHECK(a["check"] == "timing_output");
    CHECK(a["case"] == "timing/65536");  // it passed every qualification case
  }
}

TEST_CASE("kq.Tensor's protocols give kq's views intact: pointer, offset, shape and strides") {
  const fs::path arms = kq::test::source_dir() / "tests/data/python_arms";
  setenv("KQ_PYTHON_ARMS", arms.c_str(), 1);
  const fs::path dir = kq::test::temp_dir("python-protocols");
  // f16 arrives as '<f2' and DLPack kDLFloat/16, bf16 as kDLBfloat/16 with no array interface
  // (the arms assert it on every call: a wrong dtype is an arm_error).
  for (const char* spec : {"residual_relu", "residual_relu_f16", "residual_relu_bf16"}) {
    for (const char* arm : {"py_array_interface", "py_dlpack_numpy", "py_dlpack_torch"}) {
      const std::string where = std::string(spec) + "-" + arm;
      const auto summary = qualify("specs/" + std::string(spec) + ".yaml", arm, dir / where);
      INFO(where);
      const std::string verdict = summary["arms"][0]["verdict"];
      if (verdict == "unsupported" && std::string(arm) == "py_dlpack_torch") continue;  // no torch
      if (std::string(spec) == "residual_relu_bf16" && std::string(arm) != "py_dlpack_torch") {
        CHECK(verdict == "unsupported");  // numpy has no bfloat16
        continue;
      }
      CHECK(verdict == "qualified");
      CHECK(summary["headline"]["out_of_contract_refused"] ==
            summary["headline"]["out_of_contract_cases"]);
    }
  }
  unsetenv("KQ_PYTHON_ARMS");
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

TEST_CASE("a folder's _*.py files are helper modules: imported by its arms, hashed in them") {
  const fs::path dir = kq::test::temp_dir("python-helpers");
  const fs::path arms = dir / "arms";
  fs::create_directories(arms);
  write(arms / "_shared.py", "import kq\n\nclass Base(kq.Arm):\n    family = 'test'\n");
  write(arms / "uses_helper.py",
        "from _shared import Base\n\nclass UsesHelper(Base):\n    name = 'py_uses_helper'\n");
  auto r = run_kq("list --python-arms '" + arms.string() + "'");
  INFO(r.out);
  CHECK(r.out.find("py_uses_helper") != std::string::npos);
  CHECK(r.out.find("_shared.py") == std::string::npos);  // neither an arm file nor a problem
  r = run_kq(
      "run specs/residual_relu.yaml --arms py_uses_helper --quick --no-timing "
      "--python-arms '" +
      arms.string() + "' --out '" + (dir / "run").string() + "'");
  const auto manifest = read_json(dir / "run" / "manifest.json");
  bool hashed = false;
  for (const auto& s : manifest["arms"][0]["sources"])
    hashed |= s["path"] == (arms / "_shared.py").string() &&
              s["sha256"] == kq::sha256_file(arms / "_shared.py");
  CHECK(hashed);
}

TEST_CASE("checks_contract = False: an arm that computes what it should refuse is rejected") {
  const fs::path dir = kq::test::temp_dir("python-no-contract");
  const fs::path arms = dir / "arms";
  fs::create_directories(arms);
  // Computes every view it is given, strided, broadcast and aliased ones too (numpy honours
  // the strides, so its values are right), instead of refusing those the spec does not admit.
  write(arms / "lax.py",
        "import numpy as np\nimport kq\n\n"
        "class Lax(kq.Arm):\n"
        "    name, tensors, checks_contract = 'py_lax', 'numpy', False\n"
        "    expected_rejection = 'accepted_out_of_contract'\n"
        "    def run(self, inputs, outputs):\n"
        "        assert kq.stream() == 0  # a CPU arm has no stream\n"
        "        np.add(inputs[0], inputs[1], out=outputs[0])\n"
        "        np.maximum(outputs[0], 0, out=outputs[0])\n"
        "        outputs[0][outputs[0] == 0] = 0.0\n");
  const auto summary = qualify("specs/residual_relu.yaml", "py_lax", dir / "run",
                               "--include-broken --python-arms '" + arms.string() + "'");
  CHECK(summary["arms"][0]["verdict"] == "rejected");
  CHECK(summary["arms"][0]["check"] == "accepted_out_of_contract");
}

TEST_CASE("an arm cannot change the shared inputs and references the other workers check against") {
  // The stage computes every case's data once, in sealed memory the workers inherit. An arm
  // that goes looking for it (its worker's descriptors) and tries every way to write finds
  // each refused; the arm beside it qualifies on the same data.
  const fs::path dir = kq::test::temp_dir("python-tamper");
  const fs::path arms = dir / "arms";
  fs::create_directories(arms);
  const fs::path report = dir / "tamper.txt";
  write(arms / "tamper.py",
        "import mmap, os\nimport numpy as np\nimport kq\n\n"
        "def tamper(report):\n"
        "    found = written = 0\n"
        "    fds = ['/proc/self/fd/' + fd for fd in os.listdir('/proc/self/fd')]\n"
        "    parent = '/proc/%d/fd/' % os.getppid()  # kq, filling cases meanwhile\n"
        "    try:\n"
        "        fds += [parent + fd for fd in os.listdir(parent)]\n"
        "    except OSError:\n"
        "        pass\n"
        "    for path in fds:\n"
        "        try:\n"
        "            if not os.readlink(path).startswith('/memfd:kq-'):\n"
        "                continue\n"
        "        except OSError:\n"
        "            continue\n"
        "        found += 1\n"
        "        for attempt in ('pwrite', 'mmap', 'truncate'):\n"
        "            try:\n"
        "                w = os.open(path, os.O_RDWR)\n"
        "                if attempt == 'pwrite':\n"
        "                    os.pwrite(w, b'\\0' * 64, 0)\n"
        "                elif attempt == 'mmap':\n"
        "                    m = mmap.mmap(w, 64, mmap.MAP_SHARED, mmap.PROT_WRITE)\n"
        "                    m[0:4] = b'\\0\\0\\0\\0'\n"
        "                else:\n"
        "                    os.ftruncate(w, 0)\n"
        "                written += 1\n"
        "            except (OSError, ValueError):  # refused, or nothing to map\n"
        "                pass\n"
        "    with open(report, 'a') as f:\n"
        "        f.write('%d %d\\n' % (found, written))\n\n"
        "class Tamper(kq.Arm):\n"
        "    name, tensors = 'py_tamper', 'numpy'\n"
        "    def supports(self, spec):\n"
        "        return None if spec.dtype == 'f32' else 'f32 only'\n"
        "    def run(self, inputs, outputs):\n"
        "        if not getattr(self, 'tried', False):\n"
        "            tamper(" +
            ("'" + report.string() + "'") +
            ")\n"
            "            self.tried = True\n"
            "        np.add(inputs[0], inputs[1], out=outputs[0])\n"
            "        np.copyto(outputs[0], 0, where=~(outputs[0] > 0) & ~np.isnan(outputs[0]))\n");
  // Then with every case computed beside the workers (KQ_LATE_CASE_BYTES=1), so that the arm
  // also finds the cases kq is still filling, and those handed over to its worker.
  for (const char* late : {"", "1"}) {
    CAPTURE(late);
    fs::remove(report);
    if (*late) ::setenv("KQ_LATE_CASE_BYTES", late, 1);
    const auto summary =
        qualify("specs/residual_relu.yaml", "py_tamper,cpu_tbb", dir / (*late ? "run-late" : "run"),
                "-j 2 --python-arms '" + arms.string() + "'");
    ::unsetenv("KQ_LATE_CASE_BYTES");
    INFO(summary.dump());
    for (const auto& a : summary["arms"]) CHECK(a["verdict"] == "qualified");
    const std::string tried = kq::test::read_file(report);
    INFO(tried);
    int found = 0, written = -1;
    REQUIRE(std::sscanf(tried.c_str(), "%d %d", &found, &written) == 2);
    CHECK(found > (*late ? 0 : 10));  // every shared case ready then was within its reach
    CHECK(written == 0);
    if (*late) {  // the cases did come beside the workers, and were used
      const std::string log = kq::test::read_file(dir / "run-late" / "logs" / "shared-cases.log");
      CHECK(log.find(", beside the workers") != std::string::npos);
      CHECK(log.find("not shared") == std::string::npos);
    }
  }
}

TEST_CASE("@kq.arm: a decorated function is an arm, matched by its formula's tree") {
  const fs::path dir = kq::test::temp_dir("python-decorated");
  const fs::path arms = dir / "arms";
  fs::create_directories(arms);
  const fs::path prepared = dir / "prepared.txt";
  // Its inputs named a and b, not x and residual: the match is structural. The function is still
  // a function: the file calls it when it loads.
  write(arms / "decorated.py",
        "import numpy as np\nimport kq\n\n"
        "def prepare(problem):\n"
        "    with open('" +
            prepared.string() +
            "', 'a') as f:\n"
            "        f.write(problem.spec.op + '\\n')\n\n"
            "@kq.arm(name='py_decorated', family='test', computes='relu( a+b )', dtypes='f32',\n"
            "        tensors='numpy', prepare=prepare)\n"
            "def decorated(inputs, outputs):\n"
            "    np.add(inputs[0], inputs[1], out=outputs[0])\n"
            "    np.maximum(outputs[0], 0, out=outputs[0])\n"
            "    np.add(outputs[0], 0, out=outputs[0])  # -0 -> +0\n\n"
            "@kq.arm(name='py_other_formula', computes='silu(x) * y', tensors='numpy')\n"
            "def other(inputs, outputs):\n"
            "    raise AssertionError('never run: it computes another formula')\n\n"
            "@kq.arm(name='py_swapped', computes='relu(residual + x)', inputs=('x', 'residual'),\n"
            "        tensors='numpy')\n"
            "def swapped(inputs, outputs):\n"
            "    raise AssertionError('never run: its operands are the other way round')\n\n"
            "out = np.zeros(3, np.float32)\n"
            "decorated([np.float32([1, -2, -0.0]), np.float32([0.5, 0.5, 0])], [out])\n"
            "assert out.tolist() == [1.5, 0, 0] and decorated.kq_arm.name == 'py_decorated'\n");
  const std::string option = "--python-arms '" + arms.string() + "'";
  auto r = run_kq("list " + option);
  INFO(r.out);
  CHECK(r.out.find("load errors") == std::string::npos);
  for (const char* arm : {"py_decorated", "py_other_formula", "py_swapped"})
    CHECK(r.out.find(arm) != std::string::npos);

  auto summary = qualify("specs/residual_relu.yaml", "py_decorated", dir / "run", option);
  INFO(summary.dump());
  CHECK(summary["arms"][0]["verdict"] == "qualified");
  CHECK(kq::test::read_file(prepared).find("residual_relu\n") != std::string::npos);

  // Another op name, the same expression tree: the name is not what is matched.
  std::string text = kq::test::read_file(kq::test::source_dir() / "specs/residual_relu.yaml");
  const auto at = text.find("op: residual_relu");
  REQUIRE(at != std::string::npos);
  text.replace(at, std::string("op: residual_relu").size(), "op: renamed_op");
  write(dir / "renamed.yaml", text);
  summary = qualify((dir / "renamed.yaml").string(), "py_decorated", dir / "renamed", option);
  CHECK(summary["arms"][0]["verdict"] == "qualified");

  // residual_relu_bf16: the same tree, a dtype it does not list.
  summary = qualify("specs/residual_relu_bf16.yaml", "py_decorated", dir / "bf16", option);
  CHECK(summary["arms"][0]["verdict"] == "unsupported");
  CHECK(summary["arms"][0]["detail"] == "numpy has no bfloat16");

  summary =
      qualify("specs/residual_relu.yaml", "py_other_formula,py_swapped", dir / "other", option);
  REQUIRE(summary["arms"].size() == 2);
  for (const auto& a : summary["arms"]) {
    INFO(a.dump());
    CHECK(a["verdict"] == "unsupported");
    const std::string formula = a["name"] == "py_swapped" ? "relu(residual + x)" : "silu(x) * y";
    CHECK(a["detail"] ==
          "computes " + formula + ", and the spec's semantics are relu(x + residual)");
  }
}

TEST_CASE("@kq.arm: a malformed decorator is a load error naming its file and line") {
  const fs::path dir = kq::test::temp_dir("python-decorated-bad");
  const fs::path arms = dir / "arms";
  fs::create_directories(arms);
  const std::string head = "import kq\n\n\n";  // the decorator on line 4
  write(arms / "unknown_keyword.py", head +
                                         "@kq.arm(name='py_bad_keyword', devcie='cuda')\n"
                                         "def f(inputs, outputs):\n    pass\n");
  write(arms / "bad_device.py", head +
                                    "@kq.arm(name='py_bad_device',\n"
                                    "        device='gpu')\n"
                                    "def f(inputs, outputs):\n    pass\n");
  write(arms / "bad_computes.py", head +
                                      "@kq.arm(name='py_bad_computes', computes='relu(x +')\n"
                                      "def f(inputs, outputs):\n    pass\n");
  write(arms / "good.py", head +
                              "@kq.arm(name='py_good_neighbour')\n"
                              "def f(inputs, outputs):\n    pass\n");
  auto r = run_kq("list --python-arms '" + arms.string() + "'");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  const std::string error = ": cannot import: line 4: ArmDefinitionError: ";
  CHECK(r.out.find((arms / "unknown_keyword.py").string() + error +
                   "kq.arm(name='py_bad_keyword'): unknown keyword 'devcie' (did you mean "
                   "'device'?)") != std::string::npos);
  CHECK(r.out.find((arms / "bad_device.py").string() + error +
                   "kq.arm(name='py_bad_device'): device='gpu': the device is \"cpu\" or "
                   "\"cuda\"") != std::string::npos);
  CHECK(r.out.find((arms / "bad_computes.py").string() + error +
                   "kq.arm(name='py_bad_computes'): computes='relu(x +': column 9: expected a "
                   "number, a name or '(' but found the end of the expression") !=
        std::string::npos);
  CHECK(r.out.find("py_good_neighbour") != std::string::npos);
  for (const char* arm : {"py_bad_keyword  ", "py_bad_device  ", "py_bad_computes  "})
    CHECK(r.out.find(arm) == std::string::npos);
}

TEST_CASE("kq.parse gives the host's tree: every shipped spec, and expressions with every rule") {
  // The arm parses the spec's own text with its input names and compares with semantics_ast;
  // it declines every spec, saying whether the two agreed, so that nothing is run.
  const fs::path dir = kq::test::temp_dir("python-parse");
  const fs::path arms = dir / "arms";
  fs::create_directories(arms);
  write(arms / "parse.py",
        "import kq\n\n"
        "class Parse(kq.Arm):\n"
        "    name = 'py_parse'\n"
        "    def supports(self, spec):\n"
        "        mine = [(n.op, n.value, n.input, list(n.args))\n"
        "                for n in kq.parse(spec.semantics, spec.inputs)]\n"
        "        host = [(n.op, n.value, n.input, list(n.args)) for n in spec.semantics_ast]\n"
        "        same = repr(mine) == repr(host)  # repr: nan compares equal to itself\n"
        "        return 'alike' if same else 'differ: %r, host %r' % (mine, host)\n");
  std::vector<fs::path> specs;
  for (const auto& e : fs::directory_iterator(kq::test::source_dir() / "specs"))
    if (e.path().extension() == ".yaml" &&  // format 1: one expression to parse
        kq::test::read_file(e.path()).find("kq_spec: 2") == std::string::npos)
      specs.push_back(e.path());
  // residual_relu.yaml with other semantics over its inputs x and residual.
  const std::string base = kq::test::read_file(kq::test::source_dir() / "specs/residual_relu.yaml");
  const std::string line = "semantics: relu(x + residual)";
  REQUIRE(base.find(line) != std::string::npos);
  const char* const variants[] = {
      "-x * residual + 2.5e-3 / (x - -residual)",
      "select(x >= residual, max(x, residual), min(-x, 1e10))",
      "(clamp(x, -inf, nan) != x) * residual - .5 * exp(log(abs(x)))",
      "sqrt(tanh(sigmoid(erf(gelu(silu(x)))))) < residual",
      "x - residual - 1 - 2 * 3 / 4 == ((x <= residual) > 0)",
  };
  int k = 0;
  for (const char* v : variants) {
    std::string text = base;
    text.replace(text.find(line), line.size(), std::string("semantics: ") + v);
    specs.push_back(dir / ("variant" + std::to_string(k++) + ".yaml"));
    write(specs.back(), text);
  }
  for (const fs::path& spec : specs) {
    const auto summary = qualify(spec.string(), "py_parse", dir / spec.stem(),
                                 "--python-arms '" + arms.string() + "'");
    INFO(spec.string());
    REQUIRE(summary["arms"].size() == 1);
    CHECK(summary["arms"][0]["verdict"] == "unsupported");
    CHECK(summary["arms"][0]["detail"] == "alike");
  }
}

TEST_CASE("an arm file from outside is timed in a worker of its own, beside the references") {
  const fs::path dir = kq::test::temp_dir("python-isolated");
  const fs::path arms = dir / "arms";
  fs::create_directories(arms);
  write(arms / "fast.py",
        "import numpy as np\n"
        "import kq\n\n"
        "@kq.arm(name='py_outside', device='cpu', tensors='numpy', computes='relu(x + residual)',\n"
        "        dtypes=('f32',))\n"
        "def outside(inputs, outputs):\n"
        "    x, r = inputs\n"
        "    np.add(x, r, out=outputs[0])\n"
        "    np.maximum(outputs[0], 0, out=outputs[0])\n"
        "    np.add(outputs[0], 0, out=outputs[0])\n");
  const auto r = run_kq(
      "run specs/residual_relu.yaml --arms cpu_tbb,numpy_residual_relu,py_outside "
      "--quick --sizes 4096 --python-arms '" +
      arms.string() + "' --out '" + (dir / "run").string() + "'");
  INFO(r.out);
  CHECK(r.out.find("isolated worker fast (an arm file from outside kq's install: " +
                   (arms / "fast.py").string() + "): py_outside, beside 1 reference(s)") !=
        std::string::npos);

  // The clean worker's records, then the isolated one's after its worker_start.
  std::vector<nlohmann::json> starts;
  std::set<std::string> timed;
  std::ifstream in(dir / "run" / "rounds.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j["type"] == "worker_start") starts.push_back(j);
    if (j["type"] == "round") timed.insert(j["arm"].get<std::string>());
  }
  REQUIRE(starts.size() == 2);
  CHECK(starts[0]["label"] == "");
  CHECK(starts[1]["label"] == "fast");
  CHECK(starts[1]["arms"] == nlohmann::json::array({"py_outside"}));
  CHECK(starts[1]["references"] == nlohmann::json::array({"cpu_tbb@fast"}));
  CHECK(timed ==
        std::set<std::string>{"cpu_tbb", "numpy_residual_relu", "py_outside", "cpu_tbb@fast"});

  const auto summary = read_json(dir / "run" / "summary.json");
  REQUIRE(summary["workers"].size() == 1);
  CHECK(summary["workers"][0]["label"] == "fast");
  CHECK(!summary["workers"][0]["slowdowns"].empty());  // cpu_tbb, clean and isolated
  bool weighed = false;
  for (const auto& cell : summary["timing"][0]["arms"])
    if (cell["arm"] == "py_outside") weighed = cell.contains("speedup");
  CHECK(weighed);  // against cpu_tbb@fast
  CHECK(kq::test::read_file(dir / "run" / "report.md").find("- worker fast (") !=
        std::string::npos);
}

// kq run --early-timing on: the clean timing worker starts beside qualification, makes its arms'
// first calls, and then times only the arms that qualified (the roster); an arm that did not
// (numpy_residual_relu computes relu(x + residual), not copy.yaml's y = x) is dropped unseen.
TEST_CASE("the timing worker started beside qualification times only the arms that qualified") {
  const auto dir = kq::test::temp_dir("early-timing") / "run";
  const std::string spec = (kq::test::source_dir() / "tests/data/specs/copy.yaml").string();
  auto r = run_kq("run '" + spec +
                  "' --arms cpu_tbb,numpy_residual_relu --quick --sizes 4096,65536 "
                  "--early-timing on --out " +
                  dir.string());
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("the timing worker starts now") != std::string::npos);
  CHECK(r.out.find("numpy_residual_relu: unsupported") != std::string::npos);
  const auto records = kq::read_json_lines(dir / "rounds.jsonl");
  REQUIRE(records.size() >= 3);
  CHECK(records[0]["type"] == "worker_start");
  CHECK(records[0]["arms"] == nlohmann::json::array({"cpu_tbb"}));
  CHECK(records[1]["type"] == "warmed");
  CHECK(records[1]["calls"].get<int>() >= 4);  // cpu_tbb twice at each size: none for numpy
  int rounds = 0;
  for (const auto& j : records) {
    CHECK(j.value("arm", "cpu_tbb") == "cpu_tbb");
    CHECK(j["type"] != "alive");  // the worker's sign of life stays with kq
    rounds += j["type"] == "round";
  }
  CHECK(rounds >= 20);
  CHECK(kq::test::read_file(dir / "logs/time.log").find("first call(s) beside qualification") !=
        std::string::npos);

  // Off: the worker starts after qualification, with no warmed record.
  const auto off = kq::test::temp_dir("early-timing-off") / "run";
  r = run_kq("run '" + spec + "' --arms cpu_tbb --quick --sizes 4096 --early-timing off --out " +
             off.string());
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("the timing worker starts now") == std::string::npos);
  for (const auto& j : kq::read_json_lines(off / "rounds.jsonl")) CHECK(j["type"] != "warmed");
}

// Where four workers or more run at once, an arm from a file has its cases shared by as many
// workers (at most eight); the verdict recorded is one, the same as one worker's: its counts
// summed, a rejection by the case that comes first in the plan. An arm that declines the spec
// costs one worker.
TEST_CASE("an arm from a file qualified by several workers gets one worker's verdict") {
  std::string arms = "numpy_residual_relu,broken_numpy_tamper";
  if (!torch_version().empty()) arms += ",broken_torch_mutates_input_cpu";
  auto verdicts = [&](int jobs) {
    const auto dir = kq::test::temp_dir("python-shards-" + std::to_string(jobs)) / "run";
    auto r = run_kq("qualify specs/residual_relu.yaml --include-broken --quick --arms " + arms +
                    " --jobs " + std::to_string(jobs) + " --out " + dir.string());
    INFO(r.out);
    CHECK(r.exit_code == 1);  // candidates rejected
    std::map<std::string, nlohmann::json> by_arm;
    std::map<std::string, int> cases;
    for (auto j : kq::read_json_lines(dir / "qualification.jsonl")) {
      if (j["type"] == "case") ++cases[j["arm"]];
      if (j["type"] != "verdict") continue;
      CHECK(by_arm.count(j["arm"]) == 0);  // one verdict an arm
      j.erase("at_s");
      j.erase("stages");
      by_arm[j["arm"]] = j;
    }
    CHECK(cases["numpy_residual_relu"] == by_arm["numpy_residual_relu"]["counts"]["total"]);
    CHECK(fs::exists(dir / "logs/qualify-numpy_residual_relu.shard2.log") == (jobs >= 4));
    CHECK(fs::exists(dir / "logs/qualify-numpy_residual_relu.shard4.log") == (jobs >= 4));
    CHECK(fs::exists(dir / "logs/qualify-numpy_residual_relu.shard8.log") == (jobs >= 8));
    return by_arm;
  };
  const auto one = verdicts(1), shared = verdicts(4), four = verdicts(8);
  CHECK(one.size() == shared.size());
  CHECK(one.size() == four.size());
  for (const auto& [arm, v] : one) {
    CHECK(shared.at(arm) == v);
    CHECK(four.at(arm) == v);
  }

  const auto declined = kq::test::temp_dir("python-shards-declined") / "run";
  auto r = run_kq(
      "qualify specs/clamp.yaml --quick --arms numpy_residual_relu,cpu_tbb --jobs 8 "
      "--out " +
      declined.string());
  INFO(r.out);
  CHECK(fs::exists(declined / "logs/qualify-numpy_residual_relu.log"));
  CHECK_FALSE(fs::exists(declined / "logs/qualify-numpy_residual_relu.shard2.log"));
  for (const auto& j : kq::read_json_lines(declined / "qualification.jsonl"))
    if (j["type"] == "verdict" && j["arm"] == "numpy_residual_relu")
      CHECK(j["verdict"] == "unsupported");
  CHECK(one.at("numpy_residual_relu")["verdict"] == "qualified");
  CHECK(one.at("broken_numpy_tamper")["check"] == "tampering");
}
