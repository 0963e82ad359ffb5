#include "plugins/candidates.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <system_error>

#include "plugins/one_line.hpp"

namespace kq {
namespace {

namespace fs = std::filesystem;

fs::path canonical_or_absolute(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  if (!ec) return c;
  c = fs::absolute(p, ec);
  return ec ? p : c.lexically_normal();
}

// A status error other than "not there" (permissions, a loop of links) is worth its own words
// rather than "does not exist".
bool unreadable(const std::error_code& ec) {
  return ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory;
}

bool is_plugin_name(const fs::path& file) {
  const std::string name = file.filename().string();
  return name.size() > 3 && name.ends_with(".so");
}

class Collector {
 public:
  explicit Collector(const PluginSearch& search) : search_(search) {}

  void scan_dir(const fs::path& dir) {
    const fs::path key = canonical_or_absolute(dir);
    if (!dirs_seen_.insert(key).second) return;
    out_.searched.push_back(dir);

    std::error_code ec;
    const fs::file_status st = fs::status(dir, ec);
    if (unreadable(ec))
      return fail(dir, "cannot read plugin folder (" + one_line(ec.message()) + ")");
    if (!fs::exists(st)) {
      // The default folder beside the binary is often absent (nothing installed yet); a folder
      // the user named is a typo worth a line.
      if (!may_be_absent(dir)) fail(dir, "plugin folder does not exist");
      return;
    }
    if (!fs::is_directory(st)) return fail(dir, "is not a folder (plugin folders hold *.so files)");

    std::vector<fs::path> found;
    fs::directory_iterator it(dir, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      std::error_code type_ec;
      // is_regular_file follows links: a link to a plugin is a plugin; a dangling one is not.
      if (is_plugin_name(it->path()) && it->is_regular_file(type_ec)) found.push_back(it->path());
    }
    if (ec) return fail(dir, "cannot list plugin folder (" + one_line(ec.message()) + ")");

    std::sort(found.begin(), found.end(),
              [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
    for (const fs::path& f : found) add(f);
  }

  void take_file(const fs::path& file) {
    std::error_code ec;
    const fs::file_status st = fs::status(file, ec);
    if (unreadable(ec))
      return fail(file, "cannot read plugin file (" + one_line(ec.message()) + ")");
    if (!fs::exists(st)) return fail(file, "no such plugin file");
    if (fs::is_directory(st))
      return fail(file, "is a folder, not a plugin file (name it as a plugin folder instead)");
    add(file);
  }

  Candidates take() { return std::move(out_); }

 private:
  bool may_be_absent(const fs::path& dir) const {
    return std::find(search_.may_be_absent.begin(), search_.may_be_absent.end(), dir) !=
           search_.may_be_absent.end();
  }
  void fail(const fs::path& where, std::string message) {
    out_.errors.push_back({where, std::move(message)});
  }
  void add(const fs::path& file) {
    fs::path key = canonical_or_absolute(file);
    if (files_seen_.insert(key).second) out_.files.push_back({file, std::move(key)});
  }

  const PluginSearch& search_;
  Candidates out_;
  std::set<fs::path> dirs_seen_;
  std::set<fs::path> files_seen_;
};

}  // namespace

Candidates find_candidates(const PluginSearch& search) {
  Collector c(search);
  for (const fs::path& dir : search.dirs) c.scan_dir(dir);
  for (const fs::path& file : search.files) c.take_file(file);
  return c.take();
}

}  // namespace kq
