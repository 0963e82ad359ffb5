#include "rundir/manifest.hpp"

#include <algorithm>
#include <ctime>

#include "artifacts/artifacts.hpp"
#include "record/records.hpp"
#include "util/json_lines.hpp"
#include "util/sha256.hpp"
#include "util/version.hpp"

namespace kq {

nlohmann::json plugin_environment_json(const std::vector<PluginEnvironment>& environments,
                                       const std::vector<StageArm>& arms) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& env : environments) {
    const bool used = std::any_of(arms.begin(), arms.end(),
                                  [&](const StageArm& a) { return a.plugin_file == env.file; });
    if (!used) continue;
    std::string key = env.file.filename().string();
    if (out.contains(key)) key = env.file.string();
    nlohmann::json facts = nlohmann::json::object();
    for (const auto& f : env.facts) facts[f.key] = f.value;
    out[key] = facts;
  }
  return out;
}

nlohmann::json build_manifest(const Spec& spec, const std::vector<StageArm>& arms,
                              const std::vector<LoadError>& load_errors,
                              const std::vector<PluginEnvironment>& environments,
                              const nlohmann::json& machine,
                              const std::vector<std::string>& command) {
  using nlohmann::json;
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char iso[32];
  std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &tm);

  json arm_list = json::array();
  for (const auto& a : arms) {
    json j = identity_json(a.identity);
    j["plugin_file"] = a.plugin_file.string();
    j["plugin_sha256"] = sha256_file(a.plugin_file);
    arm_list.push_back(j);
  }
  json errors = json::array();
  for (const auto& e : load_errors)
    errors.push_back({{"file", e.file.string()}, {"message", e.message}});
  json outputs = json::array();
  for (const auto& o : spec.op.outputs) outputs.push_back(o.name);
  const double bytes_per_element = static_cast<double>(
      (spec.op.inputs.size() + spec.op.outputs.size()) * dtype_size(spec.op.dtype));
  return {
      {"schema_version", rec::kSchemaVersion},
      {"kq", {{"version", kq_version()}, {"commit", kq_git_commit()}, {"dirty", kq_git_dirty()}}},
      {"started", iso},
      {"command", command},
      {"op", spec.op.op},
      {"spec_file", spec.path},
      {"spec_sha256", spec.sha256},
      {"spec",
       {{"dtype", std::string(to_string(spec.op.dtype))},
        {"compute", spec.op.tf32 ? std::string("tf32") : std::string(to_string(spec.op.compute))},
        {"inputs", spec.op.inputs},
        {"outputs", outputs},
        {"semantics", spec.op.semantics.text},
        {"baseline", spec.decision.baselines.front()},
        {"baselines", spec.decision.baselines},
        {"eager", spec.decision.eager},
        {"min_speedup", spec.decision.min_speedup},
        {"bytes_per_element", bytes_per_element},
        {"sizes", spec.timing.sizes}}},
      {"machine", machine},
      {"arms", arm_list},
      {"load_errors", errors},
      {"plugin_environment", plugin_environment_json(environments, arms)}};
}

}  // namespace kq

namespace kq {

void start_run_dir(const std::filesystem::path& dir, const Spec& spec,
                   const std::vector<StageArm>& arms, const std::vector<LoadError>& load_errors,
                   const std::vector<PluginEnvironment>& environments,
                   const nlohmann::json& machine, const std::vector<std::string>& command) {
  write_file_atomic(dir / "spec.yaml", spec.text);
  write_file_atomic(
      dir / "manifest.json",
      build_manifest(spec, arms, load_errors, environments, machine, command).dump(2) + "\n");
}

}  // namespace kq
