#include "plugins/arm_registry.hpp"

#include <utility>

#include "plugins/guarded_call.hpp"
#include "plugins/one_line.hpp"

namespace kq {

std::string arm_name_problem(const std::string& name) {
  if (name.empty()) return "has an empty name";
  bool usable = name != "." && name != "..";
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\' || u < 0x20 || u == 0x7f) usable = false;
  }
  if (!usable) return "has the name '" + one_line(name) + "', which cannot be a folder name";
  // kq names the instances it times: "arm#2" (kq run --twice), "arm@label" (a reference timed
  // in an isolated worker). An arm may not pose as one.
  if (name.find_first_of("#@") != std::string::npos)
    return "has the name '" + one_line(name) +
           "': '#' and '@' are kq's, for the instances it times";
  return {};
}

void ArmRegistry::refuse(const std::filesystem::path& file, std::string message) {
  set_.errors.push_back({file, one_line(message)});
}

void ArmRegistry::take(const std::filesystem::path& file, const std::shared_ptr<void>& library,
                       ArmList& arms) {
  const std::string count = std::to_string(arms.size());
  for (std::size_t i = 0; i < arms.size(); ++i) {
    const std::string which = "arm #" + std::to_string(i + 1) + " of " + count;
    std::unique_ptr<IKernelArm> arm = std::move(arms[i]);
    if (!arm) {
      refuse(file, which + " is null; refused");
      continue;
    }

    ArmIdentity identity;
    if (std::string thrown = guarded_call([&] { identity = arm->identity(); }); !thrown.empty()) {
      refuse(file, which + ": identity() " + thrown + "; refused");
      continue;
    }
    if (std::string problem = arm_name_problem(identity.name); !problem.empty()) {
      refuse(file, which + " " + problem + "; refused");
      continue;
    }
    if (auto [it, inserted] = owner_.emplace(identity.name, file); !inserted) {
      // Names key every result; two arms under one name would mix their rounds, so the first
      // one loaded keeps it (folders are scanned in name order, so this is deterministic).
      refuse(file, "arm '" + identity.name + "' is already provided by " + it->second.string() +
                       "; the one in " + file.string() + " is refused");
      continue;
    }

    LoadedArm loaded;
    loaded.library = library;
    loaded.plugin_file = file;
    loaded.identity = std::move(identity);
    loaded.arm = std::move(arm);
    set_.arms.push_back(std::move(loaded));
  }
}

}  // namespace kq
