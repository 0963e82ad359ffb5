#include "campaign/compare_campaigns.hpp"

#include <algorithm>

#include "campaign/plan.hpp"
#include "campaign/task_record.hpp"

namespace kq::campaign {
namespace {

namespace fs = std::filesystem;

std::string key_of(const Task& t) { return fs::path(t.spec).stem().string() + " on " + t.gpu_type; }

}  // namespace

bool CampaignComparison::changed() const {
  return std::any_of(tasks.begin(), tasks.end(),
                     [](const TaskComparison& t) { return t.runs ? t.runs->changed() : true; });
}

CampaignComparison compare_campaigns(const fs::path& a, const fs::path& b, double threshold) {
  CampaignComparison c{fs::absolute(a).string(), fs::absolute(b).string(), {}};
  const CampaignPlan pa = read_plan(a), pb = read_plan(b);
  auto find = [](const CampaignPlan& p, const std::string& key) -> const Task* {
    for (const Task& t : p.tasks)
      if (key_of(t) == key) return &t;
    return nullptr;
  };
  for (const Task& ta : pa.tasks) {
    TaskComparison tc;
    tc.key = key_of(ta);
    tc.a_id = ta.id;
    const Task* tb = find(pb, tc.key);
    if (!tb) {
      tc.unmatched = "only in A";
    } else {
      tc.b_id = tb->id;
      const bool done_a = done(read_record(a, ta)), done_b = done(read_record(b, *tb));
      if (done_a && done_b)
        tc.runs = compare_runs(a / ta.run_dir, b / tb->run_dir, threshold);
      else
        tc.unmatched = !done_a && !done_b ? "completed in neither"
                       : done_a           ? "not completed in B"
                                          : "not completed in A";
    }
    c.tasks.push_back(std::move(tc));
  }
  for (const Task& tb : pb.tasks)
    if (!find(pa, key_of(tb)))
      c.tasks.push_back({key_of(tb), "", tb.id, std::nullopt, "only in B"});
  return c;
}

std::string render_campaign_comparison(const CampaignComparison& c) {
  std::string out = "campaign A: " + c.a + "\ncampaign B: " + c.b + "\n";
  int changed = 0, same = 0, unmatched = 0;
  for (const TaskComparison& t : c.tasks) {
    out += "\n== " + t.key + (t.a_id.empty() ? "" : " (A " + t.a_id + ")") +
           (t.b_id.empty() ? "" : " (B " + t.b_id + ")") + "\n";
    if (!t.runs) {
      out += "not compared: " + t.unmatched + "\n";
      ++unmatched;
      continue;
    }
    out += render_comparison(*t.runs);
    ++(t.runs->changed() ? changed : same);
  }
  out += "\n" + std::to_string(c.tasks.size()) + " task(s): " + std::to_string(changed) +
         " changed beyond noise, " + std::to_string(same) + " unchanged, " +
         std::to_string(unmatched) + " not compared\n";
  return out;
}

}  // namespace kq::campaign
