// The cudnn_pointwise arm's memo of the plan a search chose (plugins/cudnn_graph/plan_memo.hpp):
// where it lives, that it reads back only for its own key, and that a damaged file reads as none.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "../../plugins/cudnn_graph/plan_memo.cpp"
#include "../../plugins/plugin_common/sha256.cpp"

namespace cg = kq::cudnn_graph;

TEST_CASE("the plan memo reads back the choice stored for its key, and nothing else") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kq-plan-memo-" + std::to_string(::getpid()));
  const std::string key = "cudnn_pointwise|residual_relu|1048576|16|9.14.0|NVIDIA H200|sm_90";
  const std::string path = cg::plan_memo_path(dir.string(), key);
  CHECK_FALSE(cg::load_plan_choice(path, key).has_value());  // nothing stored yet
  REQUIRE(cg::store_plan_choice(path, key, {"nhwc{32768,32,1,1}", 7, "TILE=2;SPLIT=1"}));
  const auto c = cg::load_plan_choice(path, key);
  REQUIRE(c.has_value());
  CHECK(c->shaping == "nhwc{32768,32,1,1}");
  CHECK(c->engine == 7);
  CHECK(c->knobs == "TILE=2;SPLIT=1");
  // Another problem's key never reads this entry, even at the same path.
  CHECK_FALSE(cg::load_plan_choice(path, key + "x").has_value());
  CHECK(cg::plan_memo_path(dir.string(), key + "x") != path);
  // A truncated or garbled file reads as none: the search then runs in full.
  std::ofstream(path, std::ios::trunc) << key << "\nnhwc\nseven\n";
  CHECK_FALSE(cg::load_plan_choice(path, key).has_value());
  std::ofstream(path, std::ios::trunc) << key << "\n";
  CHECK_FALSE(cg::load_plan_choice(path, key).has_value());
  std::filesystem::remove_all(dir);
}

TEST_CASE("the plan memo lives in kq's cache folder") {
  const char* old = std::getenv("KQ_CACHE_DIR");
  const std::string saved = old ? old : "";
  setenv("KQ_CACHE_DIR", "/tmp/kq-x", 1);
  CHECK(cg::plan_memo_dir() == "/tmp/kq-x/cudnn");
  unsetenv("KQ_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  CHECK(cg::plan_memo_dir() == "/tmp/xdg/kq/cudnn");
  unsetenv("XDG_CACHE_HOME");
  if (old) setenv("KQ_CACHE_DIR", saved.c_str(), 1);
}
