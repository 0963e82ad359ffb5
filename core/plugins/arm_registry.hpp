// Taking a plugin's arms into the set: each arm's identity is read once, its name checked, and a
// name already taken by an earlier arm is refused. Each refused arm is one LoadError; the others
// of the same plugin are kept.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "kq/arm.hpp"
#include "plugins/loader.hpp"

namespace kq {

class ArmRegistry {
 public:
  explicit ArmRegistry(PluginSet& set) : set_(set) {}

  // Moves the acceptable arms of `arms` (made by the plugin `file`, whose code `library` keeps
  // loaded) into the set. Refused arms are destroyed here, while `library` is still loaded.
  void take(const std::filesystem::path& file, const std::shared_ptr<void>& library, ArmList& arms);

 private:
  void refuse(const std::filesystem::path& file, std::string message);

  PluginSet& set_;
  std::map<std::string, std::filesystem::path> owner_;  // arm name -> the plugin file that has it
};

// Why `name` cannot name an arm, or "" when it can. Names become folder names (artifacts/<arm>/)
// and report keys, so they must be non-empty and free of path separators and control characters.
std::string arm_name_problem(const std::string& name);

}  // namespace kq
