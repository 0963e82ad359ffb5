// The isolated timing workers against the clean one (summary/summarize_parts.hpp).
//
// An isolated worker times one file's arms beside the references and the controls. Its arms'
// speed-ups are against its own references, so code that slows the references down in its own
// process (a patched framework, a busy thread) would make its arms look fast. The references and
// the controls were also timed in the clean worker: where any of them ran slower in the isolated
// worker, beyond noise, by as much as a win would count (the spec's min_speedup), the worker is
// disturbed and none of its arms is adopted.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

#include "decision/decide.hpp"
#include "stats/stats.hpp"
#include "summary/summarize_parts.hpp"

namespace kq {
namespace {

const std::vector<double>* seconds_of(const RunData& run, const std::string& arm,
                                      std::int64_t size) {
  auto it = run.samples.find({arm, size, "single"});
  return it == run.samples.end() || it->second.seconds.empty() ? nullptr : &it->second.seconds;
}

// The isolated worker's median time over the clean worker's, from samples of times (or, with
// `speeds`, of speeds: the clean median over the isolated one).
WorkerSlowdown slowdown(std::int64_t size, const std::string& what,
                        const std::vector<double>& clean, const std::vector<double>& isolated,
                        bool speeds) {
  const SpeedupEstimate e =
      speeds ? bootstrap_speedup(clean, isolated, 2000, static_cast<std::uint64_t>(size))
             : bootstrap_speedup(isolated, clean, 2000, static_cast<std::uint64_t>(size));
  return {size, what, e.ratio, e.lo, e.hi};
}

std::vector<WorkerSlowdown> slowdowns(const RunData& run, const WorkerTiming& w,
                                      const std::vector<std::string>& references) {
  std::vector<WorkerSlowdown> out;
  std::set<std::int64_t> sizes;
  for (const auto& e : w.size_ends) sizes.insert(e.size);
  for (std::int64_t size : sizes) {
    for (const std::string& r : references) {
      const auto* clean = seconds_of(run, r, size);
      const auto* mine = seconds_of(run, reference_in_worker(r, w.start.label), size);
      if (clean && mine) out.push_back(slowdown(size, r, *clean, *mine, false));
    }
    auto cl = run.light.find(size), wl = w.light.find(size);
    if (cl != run.light.end() && wl != w.light.end())
      out.push_back(
          slowdown(size, "the device copy", cl->second.samples, wl->second.samples, true));
    auto cf = run.floor_samples_s.find(size), wf = w.floor_samples_s.find(size);
    if (cf != run.floor_samples_s.end() && wf != w.floor_samples_s.end())
      out.push_back(slowdown(size, "the launch floor", cf->second, wf->second, false));
  }
  return out;
}

std::string format_slowdown(const WorkerSlowdown& s, const RunData& run) {
  std::string where = std::to_string(s.size) + " elements";
  for (const auto& st : run.size_starts)
    if (st.size == s.size && st.point) where = *st.point;
  char text[200];
  std::snprintf(text, sizeof text, "%s ran %.2fx slower (%.2f-%.2f) at %s than in the clean worker",
                s.what.c_str(), s.ratio, s.lo, s.hi, where.c_str());
  return text;
}

// The first sign that the worker was disturbed, in one sentence; none where it was not.
std::optional<std::string> why_disturbed(const RunData& run, const WorkerTiming& w,
                                         const std::vector<WorkerSlowdown>& slowdowns) {
  const double allowed = std::max(run.manifest.min_speedup, 1.0);
  for (const WorkerSlowdown& s : slowdowns)
    // Beyond noise (the whole interval above 1) and by as much as a win would count.
    if (s.lo > 1.0 && s.ratio >= allowed) return format_slowdown(s, run);
  auto here = [&](const std::string& arm) {
    auto it = run.worker_of.find(arm);
    return it != run.worker_of.end() && it->second == w.start.label;
  };
  // A reference whose output was wrong in this worker only: something here changed it.
  for (const rec::TimingReject& r : run.rejects)
    if (is_worker_reference(r.arm) && here(r.arm))
      return r.arm + " failed " + r.check + " in this worker: " + r.message;
  for (const rec::Disturbed& d : run.disturbed)
    if (here(d.arm)) return d.what + " during " + d.arm + "'s profiled call";
  return std::nullopt;
}

WorkerRow worker_row(const RunData& run, const WorkerTiming& w,
                     const std::vector<std::string>& references) {
  WorkerRow row{w.start.label, w.start.file, w.start.reason, w.start.arms, {}, false, {}};
  row.slowdowns = slowdowns(run, w, references);
  row.why = why_disturbed(run, w, row.slowdowns);
  row.disturbed = row.why.has_value();
  if (w.stopped && !row.disturbed) row.why = "its worker stopped: " + w.stopped->reason;
  return row;
}

}  // namespace

std::vector<WorkerRow> summarize_workers(const RunData& run,
                                         const std::vector<std::string>& references,
                                         std::map<std::string, std::string>& not_adopted) {
  std::vector<WorkerRow> rows;
  for (const WorkerTiming& w : run.isolated) {
    WorkerRow row = worker_row(run, w, references);
    if (row.why)
      for (const std::string& a : row.arms)
        not_adopted.emplace(instance_arm(a),
                            "timed in a " + std::string(row.disturbed ? "disturbed" : "stopped") +
                                " worker (" + row.label + "): " + *row.why);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace kq
