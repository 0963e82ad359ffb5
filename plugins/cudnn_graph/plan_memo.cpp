#include "plan_memo.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../plugin_common/cache_root.hpp"
#include "../plugin_common/sha256.hpp"

namespace kq::cudnn_graph {

std::string plan_memo_dir() {
  const std::string root = plugin::cache_root();
  return root.empty() ? root : root + "/cudnn";
}

std::string plan_memo_path(const std::string& dir, const std::string& key) {
  return dir + "/" + plugin::sha256_hex(key) + ".plan";
}

// The file: the key on its first line, then the shaping, the engine and the knobs, one a line.
std::optional<PlanChoice> load_plan_choice(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::string stored, engine;
  PlanChoice c;
  if (!std::getline(f, stored) || stored != key || !std::getline(f, c.shaping) ||
      !std::getline(f, engine) || !std::getline(f, c.knobs) || c.shaping.empty())
    return std::nullopt;
  try {
    c.engine = std::stoll(engine);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return c;
}

bool store_plan_choice(const std::string& path, const std::string& key, const PlanChoice& c) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << key << '\n' << c.shaping << '\n' << c.engine << '\n' << c.knobs << '\n';
    if (!f.flush()) return false;
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

}  // namespace kq::cudnn_graph
