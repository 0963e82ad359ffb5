#include "campaign/run_local.hpp"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "campaign/run_task.hpp"

namespace kq::campaign {

std::vector<TaskRecord> run_local(const CampaignPlan& plan, const std::filesystem::path& campaign,
                                  const LocalOptions& options) {
  std::vector<TaskRecord> out(plan.tasks.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < plan.tasks.size(); ++i) {
    if (options.resume) {
      if (TaskRecord r = read_record(campaign, plan.tasks[i]); done(r)) {
        out[i] = std::move(r);
        continue;
      }
    }
    todo.push_back(i);
  }
  std::mutex mu;  // the callbacks, one at a time
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  // One lane per GPU (or one lane without any): each takes the next task when its last ends.
  auto lane = [&](const GpuSlot* gpu) {
    TaskOptions o;
    if (gpu) {
      o.env = {{"CUDA_VISIBLE_DEVICES", gpu->visible_id}};
      o.gpu = options.gpus.size() > 1 ? describe(*gpu) : "";
    }
    for (std::size_t n = next++; n < todo.size() && stop_signal() == 0; n = next++) {
      const Task& t = plan.tasks[todo[n]];
      try {
        if (options.on_start) {
          std::lock_guard lock(mu);
          options.on_start(t, o.gpu);
        }
        out[todo[n]] = run_task(campaign, t, o);
        if (options.on_end) {
          std::lock_guard lock(mu);
          options.on_end(t, out[todo[n]]);
        }
      } catch (...) {
        std::lock_guard lock(mu);
        if (!failure) failure = std::current_exception();
        next = todo.size();
      }
    }
  };
  if (options.gpus.size() <= 1) {
    lane(options.gpus.empty() ? nullptr : &options.gpus.front());
  } else {
    std::vector<std::thread> lanes;
    for (const GpuSlot& g : options.gpus) lanes.emplace_back(lane, &g);
    for (auto& l : lanes) l.join();
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace kq::campaign
