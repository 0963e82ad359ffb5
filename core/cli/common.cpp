#include "cli/common.hpp"

#include "rundir/run_dir.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "worker/supervise.hpp"

namespace kq::cli {

void add_plugin_options(po::options_description& d) {
  d.add_options()("plugin-dir", po::value<std::vector<std::string>>()->composing(),
                  "load every plugin in DIR (repeatable; replaces the default plugins/ beside kq)")(
      "plugin", po::value<std::vector<std::string>>()->composing(),
      "load the plugin FILE (repeatable)")(
      "python-arms", po::value<std::vector<std::string>>()->composing(),
      "load the Python arms (*.py) in DIR too (repeatable): the python plugin reads its shipped "
      "arms/, then each folder of KQ_PYTHON_ARMS, then these (appended to KQ_PYTHON_ARMS)");
}

namespace {

// --python-arms DIR...: appended to KQ_PYTHON_ARMS (':'-separated) before any plugin loads. core
// knows nothing of the python plugin: the variable is its interface, and workers inherit it.
void add_python_arms(const po::variables_map& vm) {
  if (!vm.count("python-arms")) return;
  const char* before = std::getenv("KQ_PYTHON_ARMS");
  std::string list = before ? before : "";
  for (const auto& d : vm["python-arms"].as<std::vector<std::string>>()) {
    std::error_code ec;
    if (d.empty() || !std::filesystem::is_directory(d, ec))
      throw UsageError("--python-arms: '" + d + "' is not a folder");
    if (d.find(':') != std::string::npos)
      throw UsageError("--python-arms: '" + d + "' holds a ':', which KQ_PYTHON_ARMS separates");
    // Absolute: a worker may run elsewhere, and the arm's identity names its file by its path.
    const std::string dir = std::filesystem::absolute(d).lexically_normal().string();
    list += (list.empty() ? "" : ":") + dir;
  }
  setenv("KQ_PYTHON_ARMS", list.c_str(), 1);
}

}  // namespace

PluginSet load_plugins_from(const po::variables_map& vm, bool print_errors) {
  std::vector<std::filesystem::path> dirs, files;
  if (vm.count("plugin-dir"))
    for (const auto& d : vm["plugin-dir"].as<std::vector<std::string>>()) dirs.emplace_back(d);
  if (vm.count("plugin"))
    for (const auto& f : vm["plugin"].as<std::vector<std::string>>()) files.emplace_back(f);
  add_python_arms(vm);
  PluginSet set = load_plugins(default_plugin_search(self_executable().parent_path(), dirs, files));
  if (print_errors)
    for (const auto& e : set.errors)
      std::cerr << "kq: plugin " << e.file.string() << ": " << e.message << "\n";
  return set;
}

bool parse_subcommand(const std::string& usage, const po::options_description& options,
                      const po::positional_options_description& positional,
                      const std::vector<std::string>& args, po::variables_map& vm) {
  po::options_description all(options);
  all.add_options()("help,h", "show this help");
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n" << all << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::ostringstream s;
    s << e.what() << "\nusage: " << usage;
    throw UsageError(s.str());
  }
  return true;
}

std::filesystem::path make_run_dir(const po::variables_map& vm, const std::string& op,
                                   const std::string& machine) {
  const std::string out = vm["out"].as<std::string>();
  try {
    return create_run_dir(vm["runs-dir"].as<std::string>(), out, op, machine);
  } catch (const std::exception& e) {
    throw UsageError((out.empty() ? "--runs-dir: " : "--out: ") + std::string(e.what()) +
                     (out.empty() ? "" : "; give a new or empty folder"));
  }
}

void check_qualify_options(const po::variables_map& vm) {
  if (vm["jobs"].as<int>() < 1) throw UsageError("--jobs: give at least 1");
  if (vm.count("hang-timeout") && !(vm["hang-timeout"].as<double>() > 0))
    throw UsageError("--hang-timeout: give a number of seconds above 0");
}

std::vector<std::string> split_csv(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, ','))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<GpuSlot> devices_option(const po::variables_map& vm) {
  try {
    return choose_gpus(vm.count("devices") ? vm["devices"].as<std::string>() : "all",
                       visible_gpus());
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

std::vector<std::int64_t> parse_sizes(const std::string& s) {
  std::vector<std::int64_t> out;
  for (const auto& item : split_csv(s)) {
    std::size_t used = 0;
    std::int64_t v = 0;
    try {
      if (auto caret = item.find('^'); caret != std::string::npos) {
        std::int64_t base = std::stoll(item.substr(0, caret), &used);
        if (used != caret) throw std::invalid_argument(item);
        int e = std::stoi(item.substr(caret + 1), &used);
        if (used != item.size() - caret - 1 || e < 0 || e > 62) throw std::invalid_argument(item);
        v = 1;
        for (int i = 0; i < e; ++i) v *= base;
      } else {
        v = std::stoll(item, &used);
        if (used != item.size()) throw std::invalid_argument(item);
      }
    } catch (const std::logic_error&) {
      throw UsageError("--sizes: '" + item + "' is not an element count (write 4096 or 2^12)");
    }
    if (v <= 0) throw UsageError("--sizes: '" + item + "' must be positive");
    out.push_back(v);
  }
  if (out.empty()) throw UsageError("--sizes: no sizes given");
  return out;
}

std::vector<std::string> parse_sanitize_tools(const std::string& s) {
  static const std::vector<std::string> known = {"memcheck", "initcheck", "racecheck", "synccheck"};
  if (s == "all") return known;
  auto tools = split_csv(s);
  for (const auto& t : tools)
    if (std::find(known.begin(), known.end(), t) == known.end())
      throw UsageError("--sanitize: unknown tool '" + t +
                       "' (memcheck, initcheck, racecheck, synccheck or all)");
  return tools;
}

}  // namespace kq::cli
