// What the host and its accelerators are, for manifests and reports.
#pragma once
#include <nlohmann/json.hpp>

namespace kq {

// {"hostname","os","cpu","cores","memory_bytes","gpus":[{name, cc, sms, l2_bytes, memory_bytes,
//  clock_khz, mem_clock_khz, bus_width}], "cuda_driver","cuda_runtime", "cuda_unusable",
//  "cuda_visible_devices" (where set), "environment" (device/settings_environment.hpp)}
nlohmann::json machine_info();

// A short name for run directories: the first GPU's name ("h200") or the hostname.
std::string machine_short_name(const nlohmann::json& info);

}  // namespace kq
