#include "summary/summarize.hpp"

#include <algorithm>

#include "summary/summarize_parts.hpp"

namespace kq {
namespace {

std::optional<std::string> spec_word(const nlohmann::json& spec, const char* key) {
  auto it = spec.find(key);
  if (it == spec.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace

namespace {

// How qualification's cases were spread over the GPUs, where their records name them.
std::vector<GpuLoad> gpu_loads(const std::vector<rec::CaseResult>& cases) {
  std::vector<GpuLoad> out;
  for (const rec::CaseResult& c : cases) {
    if (!c.gpu) continue;
    auto it =
        std::find_if(out.begin(), out.end(), [&](const GpuLoad& g) { return g.gpu == *c.gpu; });
    if (it == out.end()) it = out.insert(out.end(), GpuLoad{*c.gpu, 0, 0});
    ++it->cases;
    it->seconds += c.seconds;
  }
  std::sort(out.begin(), out.end(),
            [](const GpuLoad& a, const GpuLoad& b) { return a.gpu < b.gpu; });
  return out;
}

}  // namespace

RunSummary summarize(const RunData& run) {
  const Manifest& m = run.manifest;
  RunSummary s;
  s.run_dir = run.dir.string();
  s.op = m.op;
  // The element type and the precision the contract computes in (runs before issue 13 name
  // only the dtype; older ones neither).
  if (auto spec = m.raw.find("spec"); spec != m.raw.end() && spec->is_object()) {
    s.dtype = spec_word(*spec, "dtype");
    s.compute = spec_word(*spec, "compute");
  }
  s.spec_sha256 = m.spec_sha256;
  s.machine = m.machine.get<MachineFacts>();
  s.kq = m.kq.get<KqBuild>();
  s.started = m.started;
  s.problems = run.problems;
  // Plugins, and files of arms, that did not load: named in the reports below the verdicts.
  s.load_errors = m.load_errors.get<std::vector<LoadErrorRow>>();
  // What the plugins said of their environment (Python, torch, Triton), by plugin file name.
  s.plugin_environment = m.plugin_environment;
  s.gpu_loads = gpu_loads(run.cases);
  summarize_timing(run, summarize_arms(run, s), s);
  return s;
}

RunSummary summarize_run(const std::filesystem::path& run_dir) {
  return summarize(read_run(run_dir));
}

std::string skipped_note(const Headline& headline) {
  const int n = headline.in_contract_cases_skipped;
  if (n == 0) return {};
  return " (" + std::to_string(n) + " more skipped: see the arms' rows)";
}

}  // namespace kq
