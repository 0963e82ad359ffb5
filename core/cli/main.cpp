// kq: qualify and benchmark compute kernels. The command line parses options and calls the
// pipeline's stages; each subcommand lives in its own file.
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "spec/spec.hpp"
#include "worker/protocol.hpp"

namespace {

const char* kUsage = R"(usage: kq <command> [options]

commands:
  list               the arms found, their family and device, and plugins that failed to load
  check-spec FILE    validate a spec; errors name file:line:column and the field
  run SPEC           qualify every arm on the spec, time the qualified ones, report, decide
  qualify SPEC       qualify only (verdicts, report, JUnit XML)
  selftest           qualify every good arm and every known-broken candidate on the shipped
                     specs: passes when each broken one is rejected by the check it declares
  report RUN_DIR     rebuild report.md, report.html, rounds.csv, summary.json and junit.xml
                     from a run directory
  compare RUN_A RUN_B  per (arm, size, mode) timed in both runs: median B / median A with a
                     95% bootstrap interval, faster / slower / same (--threshold 0.02); and
                     the arms whose qualification verdict changed
  sweep SPEC_OR_DIR... --out CAMPAIGN
                     a campaign: one kq run per spec, each with its run directory and
                     completion record; --resume CAMPAIGN runs the unfinished ones again
  merge CAMPAIGN     one report (campaign.md, campaign.json) of a campaign's tasks
  artifacts RUN [ARM]  an arm's compiled artifacts (PTX, SASS, cubin, ptxas report) and hashes
  version            kq's version and the commit it was built from

`kq <command> --help` gives each command's options.

exit codes:
  0  ok
  1  a candidate failed qualification (rejected, crashed or hung), its timing-loop
     output was wrong, or the timing stage stopped early; for compare: a timing or
     a verdict changed between the runs beyond noise
  2  bad usage or a bad spec
  3  internal error
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace kq::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? kBadUsage : kOk;
  }
  if (args[0] == "--version") args[0] = "version";
  const std::map<std::string, int (*)(const std::vector<std::string>&)> commands = {
      {"list", cmd_list},
      {"check-spec", cmd_check_spec},
      {"run", cmd_run},
      {"report", cmd_report},
      {"compare", cmd_compare},
      {"sweep", cmd_sweep},
      {"sweep-task", cmd_sweep_task},
      {"merge", cmd_merge},
      {"qualify", cmd_qualify},
      {"selftest", cmd_selftest},
      {"artifacts", cmd_artifacts},
      {"version", cmd_version},
      {kq::kWorkerQualifyMode, cmd_worker_qualify},
      {kq::kWorkerTimeMode, cmd_worker_time}};
  auto it = commands.find(args[0]);
  if (it == commands.end()) {
    std::cerr << "kq: unknown command '" << args[0] << "'\n\n" << kUsage;
    return kBadUsage;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    return it->second(rest);
  } catch (const UsageError& e) {
    std::cerr << "kq " << args[0] << ": " << e.what() << "\n";
    return kBadUsage;
  } catch (const kq::SpecError& e) {
    std::cerr << e.what() << "\n";
    return kBadUsage;
  } catch (const std::exception& e) {
    std::cerr << "kq " << args[0] << ": internal error: " << e.what() << "\n";
    return kInternal;
  }
}
