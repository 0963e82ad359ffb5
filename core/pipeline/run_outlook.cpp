#include "pipeline/run_outlook.hpp"

#include <sys/stat.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "plan/shape_points.hpp"
#include "plan/timed_points.hpp"
#include "report/report_text.hpp"

namespace kq {
namespace {

namespace fs = std::filesystem;

bool has_quick(const nlohmann::json& command) {
  for (const auto& a : command)
    if (a.is_string() && a.get<std::string>() == "--quick") return true;
  return false;
}

// Seconds from the manifest's start to the summary's last write: an earlier run's length.
std::optional<double> length_of(const fs::path& dir, const nlohmann::json& manifest) {
  struct stat st {};
  if (stat((dir / "summary.json").c_str(), &st) != 0) return std::nullopt;
  std::tm tm{};
  const std::string started = manifest.value("started", "");
  if (strptime(started.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return std::nullopt;
  const double seconds = static_cast<double>(st.st_mtime - timegm(&tm));
  return seconds >= 0 ? std::optional<double>(seconds) : std::nullopt;
}

// The last finished run beside o.dir of the same spec, arms and plan: its start and length.
std::optional<std::pair<std::string, double>> last_like(const RunPipelineOptions& o) {
  std::set<std::string> arms;
  for (const StageArm& a : o.arms) arms.insert(a.identity.name);
  std::optional<std::pair<std::string, double>> best;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(o.dir.parent_path(), ec)) {
    if (!e.is_directory() || e.path() == o.dir) continue;
    std::ifstream in(e.path() / "manifest.json");
    if (!in) continue;
    const nlohmann::json m = nlohmann::json::parse(in, nullptr, false);
    if (m.is_discarded() || m.value("spec_sha256", "") != o.spec.sha256 ||
        has_quick(m.value("command", nlohmann::json::array())) != o.quick)
      continue;
    std::set<std::string> theirs;
    for (const auto& a : m.value("arms", nlohmann::json::array()))
      theirs.insert(a.value("name", ""));
    if (theirs != arms) continue;
    const auto length = length_of(e.path(), m);
    const std::string started = m.value("started", "");
    if (length && (!best || started > best->first)) best = {{started, *length}};
  }
  return best;
}

}  // namespace

std::string run_outlook(const RunPipelineOptions& o) {
  int cuda = 0;
  for (const StageArm& a : o.arms) cuda += a.identity.device == Device::cuda;
  const int cpu = static_cast<int>(o.arms.size()) - cuda;
  std::string s = "  qualify " + std::to_string(o.arms.size()) + " arm(s) (" +
                  std::to_string(cuda) + " CUDA, " + std::to_string(cpu) + " CPU) on the " +
                  (o.quick ? "quick" : "full") + " plan, " + std::to_string(o.jobs) + " at a time";
  if (o.timing && !o.no_timing) {
    const auto points = timed_points(o.spec, o.timed.keys);
    s += "; then time them at " + std::to_string(points.size()) + " size(s), at most " +
         std::to_string(static_cast<int>(o.spec.timing.max_seconds)) + " s a size";
    if (cuda > 0 && cpu > 0 && o.cpu_call_budget_s > 0)
      s += " (CPU arms up to " + std::to_string(static_cast<int>(o.cpu_call_budget_s * 1e3)) +
           " ms a call)";
  }
  s += "\n";
  if (o.quick && o.spec.shaped) {
    if (const auto left = quick_left_out(*o.spec.shaped); !left.empty())
      s += "  --quick leaves out the spec's qualification point(s) " + joined(left, ", ") +
           " (a dim above " + std::to_string(kQuickMaxDim) +
           " or a tensor above 2^31 elements): the full plan qualifies them\n";
  }
  if (!o.left_out_cpu.empty())
    s += "  --quick leaves out the CPU arms (" + joined(o.left_out_cpu, ", ") +
         "): never candidates beside CUDA arms; --include-cpu runs them\n";
  if (const auto last = last_like(o))
    s += "  about " + std::to_string(static_cast<int>(last->second + 0.5)) +
         " s: the run of the same spec, arms and plan started " + last->first + " took that\n";
  else
    s += "  no earlier run of this spec, these arms and this plan in " +
         o.dir.parent_path().string() + " to say how long it takes\n";
  return s;
}

}  // namespace kq
