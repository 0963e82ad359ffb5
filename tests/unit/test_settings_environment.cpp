// The environment variables a run keeps (device/settings_environment.hpp), and the campaign
// flag for tasks that ran under different ones (campaign/merge.hpp).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "campaign/merge.hpp"
#include "device/settings_environment.hpp"

TEST_CASE("a run keeps the settings that change its arms, not the rest of its environment") {
  const char* envp[] = {"TORCHINDUCTOR_COMPILE_THREADS=4",
                        "NVIDIA_TF32_OVERRIDE=1",
                        "LD_PRELOAD=/x/libfast.so",
                        "CUBLASLT_WORKSPACE_SIZE=1024",
                        "KQ_CACHE_DIR=/c",
                        "TRITON_CACHE_DIR=",
                        "HOME=/root",
                        "HF_TOKEN=secret",
                        "CUDA_VISIBLE_DEVICES=1",
                        "KQ_ARM_FILES=a.py",
                        "KQ_BIG_CASE_LOCK=/r/big-case.lock",
                        "KQ_PYTHON_ARMS=all",
                        "=odd",
                        "NOEQUALS",
                        nullptr};
  const std::map<std::string, std::string> want = {
      {"CUBLASLT_WORKSPACE_SIZE", "1024"},    {"KQ_CACHE_DIR", "/c"},
      {"LD_PRELOAD", "/x/libfast.so"},        {"NVIDIA_TF32_OVERRIDE", "1"},
      {"TORCHINDUCTOR_COMPILE_THREADS", "4"}, {"TRITON_CACHE_DIR", ""}};
  CHECK(kq::settings_environment(envp) == want);
  CHECK(kq::settings_environment(nullptr).empty());
}

namespace {

kq::campaign::TaskRow ran(int index, std::map<std::string, std::string> settings) {
  kq::campaign::TaskRow r;
  r.task.index = index;
  r.task.id = "00" + std::to_string(index) + "-op-local";
  r.kq_commit = "abc";
  r.settings = std::move(settings);
  return r;
}

}  // namespace

TEST_CASE("a campaign flags a setting that differs between its tasks, not where caches are") {
  kq::campaign::CampaignSummary s;
  s.tasks = {ran(0, {{"KQ_CACHE_DIR", "/c"}, {"TRITON_CACHE_DIR", "/home/a/triton"}}),
             ran(1, {{"KQ_CACHE_DIR", "/c"}, {"TORCHINDUCTOR_COMPILE_THREADS", "4"}}),
             ran(2, {{"KQ_CACHE_DIR", "/d"}})};
  kq::campaign::TaskRow never;  // never started: no run to compare
  never.task.id = "003-op-local";
  s.tasks.push_back(never);
  kq::campaign::flag_settings(s);
  REQUIRE(s.flags.size() == 1);
  CHECK(s.flags[0] ==
        "the tasks ran under different TORCHINDUCTOR_COMPILE_THREADS: unset in 000-op-local, "
        "002-op-local; 4 in 001-op-local");
}
