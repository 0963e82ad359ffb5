#include <iostream>

#include "cli/common.hpp"
#include "report/printer.hpp"

namespace kq::cli {

int cmd_report(const std::vector<std::string>& args) {
  po::options_description opts("report options");
  opts.add_options()("run-dir", po::value<std::string>()->required(), "a run directory");
  po::positional_options_description pos;
  pos.add("run-dir", 1);
  po::variables_map vm;
  if (!parse_subcommand("kq report RUN_DIR\n\nRebuilds summary.json, report.md, report.html, "
                        "rounds.csv and junit.xml.",
                        opts, pos, args, vm))
    return kOk;
  std::filesystem::path dir = vm["run-dir"].as<std::string>();
  if (!std::filesystem::exists(dir / "manifest.json"))
    throw UsageError(dir.string() + " is not a run directory (no manifest.json)");
  const Report report = write_report(dir);
  std::cout << console_printer()->print(report.summary, report.run);
  return kOk;
}

}  // namespace kq::cli
