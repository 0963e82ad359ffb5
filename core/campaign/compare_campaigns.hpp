// kq compare between two campaigns: their tasks matched by spec file and GPU type, each pair of
// completed runs compared as kq compare compares two runs (report/compare.hpp), and the tasks
// that one campaign completed and the other did not listed.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "report/compare.hpp"

namespace kq::campaign {

struct TaskComparison {
  std::string key;         // "softmax_bf16 on h200": the spec file's stem and the GPU type
  std::string a_id, b_id;  // the tasks' ids ("" where a campaign has none)
  std::optional<RunComparison> runs;  // both completed
  std::string unmatched;              // else why not compared ("not completed in B", "only in A")
};

struct CampaignComparison {
  std::string a, b;
  std::vector<TaskComparison> tasks;  // A's order, then B's own
  bool changed() const;  // a run pair changed beyond noise, or a task is in one campaign only
};

CampaignComparison compare_campaigns(const std::filesystem::path& a, const std::filesystem::path& b,
                                     double threshold);
std::string render_campaign_comparison(const CampaignComparison& c);

}  // namespace kq::campaign
