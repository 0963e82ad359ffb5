// The speed of light: the bandwidth of a device-to-device copy measured in the same run as the
// arms, recorded in rounds.jsonl as {"type":"light","size":N,"seconds":S,"bytes":B} (one or more
// per size; B counts the bytes the copy moved, read and written, as an arm's GB/s does).
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace kq {

struct Light {
  int n = 0;             // copies measured at this size
  double gbps = 0;       // median bandwidth of the copies, GB/s (1e9 bytes per second)
  double best_gbps = 0;  // the fastest copy
};

// Light per size from the records of rounds.jsonl (records of other types are ignored); sizes
// with no usable light record are absent.
std::map<std::int64_t, Light> light_by_size(const std::vector<nlohmann::json>& rounds);

}  // namespace kq
