#include "report/report_text.hpp"

#include <algorithm>
#include <cstdio>

#include "summary/summarize.hpp"

namespace kq {

std::string joined(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string machine_text(const MachineFacts& m) {
  std::string s = m.hostname + ", " + m.cpu + ", " + std::to_string(m.cores) + " cores";
  if (m.gpus.empty()) s += "; no usable GPU (" + m.cuda_unusable + ")";
  for (const GpuFacts& g : m.gpus) s += "; " + g.name + " (" + std::to_string(g.sms) + " SMs)";
  // Where several GPUs were used: which qualified, which timed (one, for matched timing).
  if (m.devices.size() > 1)
    s += "; qualified on " + joined(m.devices, ", ") + ", timed on " + m.timing_gpu;
  return s;
}

std::string settings_text(const MachineFacts& m) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : m.environment) parts.push_back(name + "=" + value);
  return joined(parts, ", ");
}

std::string gpu_load_text(const RunSummary& s) {
  std::string out;
  for (const GpuLoad& g : s.gpu_loads) {
    char part[96];
    std::snprintf(part, sizeof part, "GPU %d: %d cases, %.1f s", g.gpu, g.cases, g.seconds);
    out += (out.empty() ? "" : "; ") + std::string(part);
  }
  return out;
}

std::vector<std::string> environment_lines(const nlohmann::json& plugin_environment) {
  std::vector<std::string> lines;
  if (!plugin_environment.is_object()) return lines;
  for (const auto& [plugin, facts] : plugin_environment.items()) {
    std::string s = "plugin " + plugin + ":";
    std::string sep = " ";
    for (const auto& [key, value] : facts.items()) {
      s += sep + key + " " + (value.is_string() ? value.get<std::string>() : value.dump());
      sep = ", ";
    }
    lines.push_back(s);
  }
  return lines;
}

std::vector<std::string> worker_lines(const RunSummary& s) {
  std::vector<std::string> lines;
  for (const WorkerRow& w : s.workers) {
    std::string line =
        "worker " + w.label + " (" + w.reason + ": " + w.file + "): " + joined(w.arms);
    if (w.disturbed) {
      line += ". DISTURBED: " + w.why.value_or("") + "; its arms are not adopted";
    } else if (w.why) {
      line += ". " + *w.why + "; its arms are not adopted";
    } else if (!w.slowdowns.empty()) {
      auto [lo, hi] = std::minmax_element(
          w.slowdowns.begin(), w.slowdowns.end(),
          [](const WorkerSlowdown& a, const WorkerSlowdown& b) { return a.ratio < b.ratio; });
      char text[200];
      std::snprintf(text, sizeof text,
                    ". Its references and controls took %.2fx to %.2fx their times in the clean "
                    "worker: not disturbed",
                    lo->ratio, hi->ratio);
      line += text;
    }
    lines.push_back(line);
  }
  return lines;
}

std::string headline_text(const Headline& h, Markup m) {
  const std::string on = m == Markup::html ? "<b>" : "**", off = m == Markup::html ? "</b>" : "**";
  auto of = [&](int a, int b) { return on + std::to_string(a) + " of " + std::to_string(b) + off; };
  return of(h.in_contract_cases_passed, h.in_contract_cases) + " in-contract cases passed" +
         skipped_note(h) + ", " + of(h.out_of_contract_refused, h.out_of_contract_cases) +
         " out-of-contract inputs refused (good arms); " + of(h.good_qualified, h.good_total) +
         " good arms qualified; " + of(h.broken_rejected, h.broken_total) +
         " broken candidates rejected by their declared check.";
}

}  // namespace kq
