// The GPUs kq may spread work over, and the `--devices` list that picks among them. A child
// process (a campaign's task) is given its GPU through CUDA_VISIBLE_DEVICES, so that it sees that
// one alone, as its device 0.
#pragma once
#include <string>
#include <vector>

namespace kq {

struct GpuSlot {
  int index = 0;           // as this process numbers them: 0 .. count - 1
  std::string visible_id;  // its CUDA_VISIBLE_DEVICES entry for a child (this one's entry, if set)
  std::string name;        // "NVIDIA H200"
  bool operator==(const GpuSlot&) const = default;
};

// Every GPU this process sees (CUDA_VISIBLE_DEVICES applied); none without CUDA. KQ_FAKE_GPUS
// (names, comma-separated) stands in for them: tests of the placement on a machine without one.
std::vector<GpuSlot> visible_gpus();

// `--devices`: "all" (every one of `visible`) or their numbers, "0,2". Throws
// std::invalid_argument naming the entry and what this machine sees.
std::vector<GpuSlot> choose_gpus(const std::string& devices, const std::vector<GpuSlot>& visible);

// "GPU 1 (NVIDIA H200)"
std::string describe(const GpuSlot& g);

}  // namespace kq
