// kq run --devices on two stand-in GPUs (KQ_FAKE_GPUS) with a CPU arm: the timing worker is given
// the first GPU of the list, the manifest keeps the list and the timing GPU, the report names
// them, and a GPU the machine lacks is refused with what it has. (Where CUDA arms qualify, each
// case record names its GPU: on the GPU host.)
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace fs = std::filesystem;
using kq::test::read_file;
using kq::test::run_kq;

TEST_CASE("kq run --devices: the timing on the first GPU given, the report naming them") {
  const fs::path dir = kq::test::temp_dir("devices");
  ::setenv("KQ_FAKE_GPUS", "Fake A,Fake B", 1);
  auto r = run_kq("run specs/clamp.yaml --arms cpu_tbb --quick --devices 1,0 --out '" +
                  (dir / "run").string() + "'");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  const auto manifest = nlohmann::json::parse(read_file(dir / "run" / "manifest.json"));
  CHECK(manifest["machine"]["devices"] ==
        nlohmann::json::array({"GPU 1 (Fake B)", "GPU 0 (Fake A)"}));
  CHECK(manifest["machine"]["timing_gpu"] == "GPU 1 (Fake B)");
  CHECK(read_file(dir / "run" / "logs" / "time.log").find("CUDA_VISIBLE_DEVICES=1") !=
        std::string::npos);
  CHECK(read_file(dir / "run" / "report.md")
            .find("qualified on GPU 1 (Fake B), GPU 0 (Fake A), timed on GPU 1 (Fake B)") !=
        std::string::npos);
  // A CPU arm's cases ran on no GPU: their records say none.
  CHECK(read_file(dir / "run" / "qualification.jsonl").find("\"gpu\"") == std::string::npos);

  r = run_kq("qualify specs/clamp.yaml --arms cpu_tbb --devices 2 --out '" +
             (dir / "bad").string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("no GPU 2; this machine sees 2: GPU 0 (Fake A), GPU 1 (Fake B)") !=
        std::string::npos);
  ::unsetenv("KQ_FAKE_GPUS");
  fs::remove_all(dir);
}
