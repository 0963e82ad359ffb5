#include "report/summary.hpp"

#include "report/summary_parts.hpp"

namespace kq {

nlohmann::json summarize(const RunData& run) {
  const Manifest& m = run.manifest;
  nlohmann::json s;
  s["schema_version"] = rec::kSchemaVersion;
  s["run_dir"] = run.dir.string();
  s["op"] = m.op;
  // The element type and the precision the contract computes in (runs before issue 13 name
  // only the dtype; older ones neither).
  const nlohmann::json spec = m.raw.value("spec", nlohmann::json::object());
  if (spec.contains("dtype")) s["dtype"] = spec["dtype"];
  if (spec.contains("compute")) s["compute"] = spec["compute"];
  s["spec_sha256"] = m.spec_sha256;
  s["machine"] = m.machine;
  s["kq"] = m.kq;
  s["started"] = m.started;
  if (!run.problems.empty()) s["problems"] = run.problems;
  // Plugins, and files of arms, that did not load: named in the reports below the verdicts.
  if (!m.load_errors.empty()) s["load_errors"] = m.load_errors;
  // What the plugins said of their environment (Python, torch, Triton), by plugin file name.
  if (!m.plugin_environment.empty()) s["plugin_environment"] = m.plugin_environment;
  summarize_timing(run, summarize_arms(run, s), s);
  return s;
}

nlohmann::json summarize_run(const std::filesystem::path& run_dir) {
  return summarize(read_run(run_dir));
}

}  // namespace kq
