#include <iostream>

#include "campaign/compare_campaigns.hpp"
#include "campaign/plan.hpp"
#include "cli/common.hpp"
#include "report/compare.hpp"

namespace kq::cli {

int cmd_compare(const std::vector<std::string>& args) {
  po::options_description opts("compare options");
  opts.add_options()("run-a", po::value<std::string>()->required(), "the earlier run directory")(
      "run-b", po::value<std::string>()->required(), "the later run directory")(
      "threshold", po::value<double>()->default_value(0.02, "0.02"),
      "a change must move the median by more than this fraction (and by more than the runs' noise, "
      "and its 95% interval exclude 1)");
  po::positional_options_description pos;
  pos.add("run-a", 1).add("run-b", 1);
  po::variables_map vm;
  const std::string usage =
      "kq compare RUN_A RUN_B [--threshold 0.02]\n"
      "kq compare CAMPAIGN_A CAMPAIGN_B [--threshold 0.02]\n\n"
      "For each (arm, size, mode) timed in both runs: median B / median A with a 95% bootstrap\n"
      "interval, both runs' own noise (from blocks of rounds), and faster / slower / same (a\n"
      "change exceeds the interval, the threshold and the noise); then the arms whose\n"
      "qualification verdict changed. Samples are counted as in the summary. Two campaigns\n"
      "(kq sweep): each task of one matched with the other's by spec file and GPU type, and\n"
      "compared so; a task completed in one campaign only counts as a change.\n"
      "Exit code: 0 nothing changed beyond noise, 1 a timing or a verdict changed, 2 bad usage.";
  if (!parse_subcommand(usage, opts, pos, args, vm)) return kOk;
  const double threshold = vm["threshold"].as<double>();
  if (!(threshold >= 0) || threshold >= 1)
    throw UsageError("--threshold must be a fraction in [0, 1), such as 0.02");
  std::filesystem::path dirs[2] = {vm["run-a"].as<std::string>(), vm["run-b"].as<std::string>()};
  const bool campaigns[2] = {std::filesystem::exists(campaign::plan_path(dirs[0])),
                             std::filesystem::exists(campaign::plan_path(dirs[1]))};
  if (campaigns[0] != campaigns[1])
    throw UsageError("a campaign is compared with a campaign, a run with a run");
  if (campaigns[0]) {
    const campaign::CampaignComparison c = campaign::compare_campaigns(dirs[0], dirs[1], threshold);
    std::cout << campaign::render_campaign_comparison(c);
    return c.changed() ? 1 : kOk;
  }
  for (const auto& d : dirs)
    if (!std::filesystem::exists(d / "manifest.json") &&
        !std::filesystem::exists(d / "rounds.jsonl"))
      throw UsageError(d.string() + " is not a run directory (no manifest.json or rounds.jsonl)");
  const RunComparison c = compare_runs(dirs[0], dirs[1], threshold);
  std::cout << render_comparison(c);
  return c.changed() ? 1 : kOk;  // 1: the runs differ beyond noise (documented in kq --help)
}

}  // namespace kq::cli
