#include "campaign/run_local.hpp"

#include "campaign/run_task.hpp"

namespace kq::campaign {

std::vector<TaskRecord> run_local(const CampaignPlan& plan, const std::filesystem::path& campaign,
                                  const LocalOptions& options) {
  std::vector<TaskRecord> out;
  for (const Task& t : plan.tasks) {
    if (options.resume) {
      if (TaskRecord r = read_record(campaign, t); done(r)) {
        out.push_back(std::move(r));
        continue;
      }
    }
    if (options.on_start) options.on_start(t);
    out.push_back(run_task(campaign, t));
    if (options.on_end) options.on_end(t, out.back());
  }
  return out;
}

}  // namespace kq::campaign
