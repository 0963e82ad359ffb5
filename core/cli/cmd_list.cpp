#include <iomanip>
#include <iostream>

#include "cli/common.hpp"
#include "device/memory.hpp"

namespace kq::cli {

int cmd_list(const std::vector<std::string>& args) {
  po::options_description opts("list options");
  add_plugin_options(opts);
  po::variables_map vm;
  if (!parse_subcommand("kq list [--plugin-dir DIR] [--plugin FILE] [--python-arms DIR]", opts, {},
                        args, vm))
    return kOk;
  PluginSet set = load_plugins_from(vm, false);
  std::string why;
  const bool cuda = cuda_usable(&why);
  std::cout << "searched: ";
  for (std::size_t i = 0; i < set.searched.size(); ++i)
    std::cout << (i ? ", " : "") << set.searched[i].string();
  std::cout << "\n\n"
            << std::left << std::setw(36) << "arm" << std::setw(18) << "family" << std::setw(7)
            << "device"
            << "plugin\n";
  for (const auto& a : set.arms) {
    std::cout << std::setw(36) << a.identity.name + " " << std::setw(18) << a.identity.family
              << std::setw(7) << to_string(a.identity.device) << a.plugin_file.filename().string();
    if (a.identity.device == Device::cuda && !cuda)
      std::cout << "  (cannot run here: " << why << ")";
    if (!a.identity.tampering.empty()) std::cout << "  (rejected: " << a.identity.tampering << ")";
    if (!a.load_threads.empty())
      std::cout << "  (timed apart: its plugin's load left " << a.load_threads << ")";
    if (!a.identity.expected_rejection.empty())
      std::cout << "  (known broken; must fail " << a.identity.expected_rejection << ")";
    std::cout << "\n";
  }
  // What each plugin reported of its environment (kq_plugin_environment), under its file name.
  if (!set.environments.empty()) {
    std::cout << "\nplugin environment:\n";
    for (const auto& env : set.environments) {
      std::cout << "  " << env.file.filename().string() << " (" << env.file.string() << ")\n";
      for (const auto& f : env.facts) std::cout << "    " << f.key << ": " << f.value << "\n";
    }
  }
  if (!set.errors.empty()) {
    std::cout << "\nload errors:\n";
    for (const auto& e : set.errors)
      std::cout << "  " << e.file.string() << ": " << e.message << "\n";
  }
  return kOk;
}

}  // namespace kq::cli
