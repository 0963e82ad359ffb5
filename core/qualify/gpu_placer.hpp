// Where the qualification stage's CUDA workers run on a host with several GPUs (kq run
// --devices): each on the GPU with the fewest of the stage's workers when it starts, the lowest
// number on a tie. Qualification needs no matched conditions, so an arm's cases may run on any
// of them; the timing stays on one (the first of the list). A worker's big cases take turns
// with those of the other workers on its GPU alone (qualify/big_case_lock.hpp).
#pragma once
#include <mutex>
#include <optional>
#include <vector>

#include "device/gpu_list.hpp"

namespace kq {

class GpuPlacer {
 public:
  explicit GpuPlacer(std::vector<GpuSlot> gpus)
      : gpus_(std::move(gpus)), workers_(gpus_.size(), 0) {}

  // The GPU for a worker starting now; none where the stage has no GPU list.
  std::optional<GpuSlot> take() {
    std::lock_guard lock(mu_);
    if (gpus_.empty()) return std::nullopt;
    std::size_t best = 0;
    for (std::size_t i = 1; i < gpus_.size(); ++i)
      if (workers_[i] < workers_[best]) best = i;
    ++workers_[best];
    return gpus_[best];
  }

  // The worker on `g` has ended.
  void give_back(const GpuSlot& g) {
    std::lock_guard lock(mu_);
    for (std::size_t i = 0; i < gpus_.size(); ++i)
      if (gpus_[i].index == g.index && workers_[i] > 0) --workers_[i];
  }

  // Workers on each GPU now, in the list's order (for tests).
  std::vector<int> load() {
    std::lock_guard lock(mu_);
    return workers_;
  }

 private:
  std::mutex mu_;
  std::vector<GpuSlot> gpus_;
  std::vector<int> workers_;
};

}  // namespace kq
