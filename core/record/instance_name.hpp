// The names kq gives the instances it times, beside an arm's own name (which may hold neither
// '#' nor '@', plugins/arm_registry.cpp): "arm#2" is a second instance timed for self-agreement
// (kq run --twice), "arm@label" a reference timed again in the isolated worker `label`
// (timing/timing_workers.hpp). Records carry these names; readers map them back here.
#pragma once
#include <string>

namespace kq {

// "arm@label": the reference `arm` as timed in the isolated worker `label`.
inline std::string reference_in_worker(const std::string& arm, const std::string& label) {
  return arm + "@" + label;
}

// Whether `name` is a reference timed again in an isolated worker.
inline bool is_worker_reference(const std::string& name) {
  return name.find('@') != std::string::npos;
}

// The arm a timed instance belongs to: "arm#2" -> "arm", "arm@label" -> "arm".
inline std::string instance_arm(const std::string& name) {
  return name.substr(0, name.find_first_of("#@"));
}

}  // namespace kq
