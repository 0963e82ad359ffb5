// default_plugin_search: where the command line looks for plugins (see loader.hpp).
#include <cstdlib>
#include <string_view>

#include "plugins/loader.hpp"

namespace kq {
namespace {

// KQ_PLUGIN_PATH is ':'-separated like PATH; empty entries ("a::b", a trailing ':') mean nothing
// here, unlike PATH where they mean the current directory, which would load plugins by accident.
std::vector<std::filesystem::path> plugin_path_from_env() {
  std::vector<std::filesystem::path> out;
  const char* value = std::getenv("KQ_PLUGIN_PATH");
  if (value == nullptr) return out;
  std::string_view rest = value;
  while (true) {
    const auto colon = rest.find(':');
    const std::string_view entry = rest.substr(0, colon);
    if (!entry.empty()) out.emplace_back(entry);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return out;
}

}  // namespace

PluginSearch default_plugin_search(const std::filesystem::path& exe_dir,
                                   const std::vector<std::filesystem::path>& cli_dirs,
                                   const std::vector<std::filesystem::path>& cli_files) {
  PluginSearch search;
  if (cli_dirs.empty()) {
    // The folder beside the binary is where the build and `install` put plugins; it is only a
    // default, so its absence is not an error.
    search.dirs.push_back(exe_dir / "plugins");
    search.may_be_absent.push_back(search.dirs.back());
  } else {
    search.dirs = cli_dirs;
  }
  for (auto& dir : plugin_path_from_env()) search.dirs.push_back(std::move(dir));
  search.files = cli_files;
  return search;
}

}  // namespace kq
