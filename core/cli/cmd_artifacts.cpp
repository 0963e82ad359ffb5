#include <algorithm>
#include <iomanip>
#include <iostream>

#include "artifacts/artifacts.hpp"
#include "cli/common.hpp"

namespace kq::cli {

int cmd_artifacts(const std::vector<std::string>& args) {
  po::options_description opts("artifacts options");
  opts.add_options()("run-dir", po::value<std::string>()->required(), "a run directory")(
      "arm", po::value<std::string>(), "the arm (default: list the arms that have artifacts)");
  po::positional_options_description pos;
  pos.add("run-dir", 1).add("arm", 1);
  po::variables_map vm;
  if (!parse_subcommand("kq artifacts RUN_DIR [ARM]", opts, pos, args, vm)) return kOk;
  const std::filesystem::path root =
      std::filesystem::path(vm["run-dir"].as<std::string>()) / "artifacts";
  if (!std::filesystem::is_directory(root))
    throw UsageError(root.string() + " does not exist (not a run directory?)");
  if (!vm.count("arm")) {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(root))
      if (e.is_directory()) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    for (const auto& n : names) std::cout << n << "\n";
    return kOk;
  }
  const auto dir = root / vm["arm"].as<std::string>();
  if (!std::filesystem::is_directory(dir))
    throw UsageError("no artifacts for arm '" + vm["arm"].as<std::string>() + "' in " +
                     root.string());
  auto index = finish_artifacts(dir);  // refreshes SASS and hashes
  for (const auto& f : index["files"])
    std::cout << f["sha256"].get<std::string>() << "  " << std::setw(10)
              << f["bytes"].get<std::uint64_t>() << "  "
              << (dir / f["name"].get<std::string>()).string() << "\n";
  if (index.contains("sass")) std::cout << "SASS: " << index["sass"].get<std::string>() << "\n";
  return kOk;
}

}  // namespace kq::cli
