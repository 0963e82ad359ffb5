#include "report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "decision/decide.hpp"
#include "record/run_data.hpp"
#include "report/columns.hpp"
#include "report/report_text.hpp"
#include "stats/stats.hpp"
#include "summary/run_summary.hpp"

namespace kq {
namespace {

using Key = SampleKey;  // arm, size, mode
// Format 2: each timed size's point (its number -> "M=32768,N=4096"); empty for format 1.
using PointNames = std::map<std::int64_t, std::string>;
// What two runs meet at: (arm, format 1's size or 0, format 2's point or "", mode).
using MeetKey = std::tuple<std::string, std::int64_t, std::string, std::string>;

RunDescription describe(const RunData& run) {
  const Manifest& m = run.manifest;
  const MachineFacts machine = m.machine.get<MachineFacts>();
  return {run.dir.string(),
          m.op,
          m.started,
          machine.hostname,
          machine.gpus.empty() ? std::string() : machine.gpus[0].name,
          m.spec_sha256,
          machine.environment};
}

// "note: the runs ran under different settings: NVIDIA_TF32_OVERRIDE (A unset, B 1)\n", or "".
std::string settings_note(const RunDescription& a, const RunDescription& b) {
  std::vector<std::string> differ;
  for (const std::string& name : differing_settings({&a.settings, &b.settings}))
    differ.push_back(name + " (A " + setting_of(a.settings, name).value_or("unset") + ", B " +
                     setting_of(b.settings, name).value_or("unset") + ")");
  if (differ.empty()) return "";
  return "note: the runs ran under different settings: " + joined(differ, "; ") + "\n";
}

PointNames point_names(const RunData& run) {
  PointNames out;
  for (const rec::SizeStart& s : run.size_starts)
    if (s.point) out[s.size] = *s.point;
  return out;
}

TimingKey key_of(const Key& k, const PointNames& points) {
  const auto it = points.find(std::get<1>(k));
  return {std::get<0>(k), std::get<1>(k), std::get<2>(k),
          it == points.end() ? std::string() : it->second};
}

// Format-2 runs meet at the point, whatever its number in each; format 1 at the size.
MeetKey meet_key(const TimingKey& k) {
  return {k.arm, k.point.empty() ? k.size : 0, k.point, k.mode};
}

// Every reason a round was left out, summed over the run.
std::map<std::string, int> left_out_counts(const RunData& run) {
  std::map<std::string, int> out;
  for (const auto& [key, kept] : run.samples)
    for (const auto& [why, n] : kept.left_out) out[why] += n;
  return out;
}

// The ratio B / A of one (arm, size, mode), its interval, both runs' noise, and the verdict.
TimingChange compare_timing(const TimingKey& k, std::int64_t size_b, const std::vector<double>& va,
                            const std::vector<double>& vb, double threshold) {
  TimingChange t;
  t.key = k;
  t.size_b = size_b;
  t.n_a = static_cast<int>(va.size());
  t.n_b = static_cast<int>(vb.size());
  t.median_a = summarize(va).median;
  t.median_b = summarize(vb).median;
  t.ratio = t.median_a > 0 ? t.median_b / t.median_a : 0;
  if (t.n_a < kMinCompareSamples || t.n_b < kMinCompareSamples) {
    t.verdict = "too few samples";
    return t;
  }
  // bootstrap_speedup(base, arm) estimates median(base) / median(arm): here B over A.
  const SpeedupEstimate e = bootstrap_speedup(vb, va, 2000, static_cast<std::uint64_t>(t.key.size));
  t.ratio = e.ratio;
  t.lo = e.lo;
  t.hi = e.hi;
  const auto noise_a = block_noise(va), noise_b = block_noise(vb);
  t.noise_a = noise_a.value_or(-1);
  t.noise_b = noise_b.value_or(-1);
  if (noise_a || noise_b)  // a run too short for blocks takes the other's noise
    t.noise = noise_a.value_or(*noise_b) + noise_b.value_or(*noise_a);
  const double moved = std::abs(e.ratio - 1.0);
  const bool resolved = e.lo > 1.0 || e.hi < 1.0;
  const bool beyond_noise = t.noise < 0 || moved > t.noise;
  t.verdict = !(resolved && moved > threshold && beyond_noise) ? "same"
              : e.ratio > 1.0                                  ? "slower"
                                                               : "faster";
  return t;
}

// A change that the copy timed in the same rounds shows as much: the machine moved (a
// launch floor, a memory clock, load beside the run), not the arm. Such a change becomes
// "same", marked: when the arm's change relative to the copy's is within the threshold or the
// noise, or when the copy moved the same way as far or further (load slows a parallel copy and
// a parallel arm by different amounts, but the same way).
void weigh_against_copy(TimingChange& t, double copy_ratio, double threshold) {
  t.copy_ratio = copy_ratio;
  if (copy_ratio <= 0 || (t.verdict != "slower" && t.verdict != "faster")) return;
  const double own = std::abs(t.ratio / copy_ratio - 1.0);
  const bool within = own <= threshold || (t.noise >= 0 && own <= t.noise);
  const bool copy_further = t.verdict == "slower" ? copy_ratio >= t.ratio : copy_ratio <= t.ratio;
  if (!within && !copy_further) return;
  t.verdict = "same";
  t.machine_moved = true;
}

// A CUDA arm's single launches slower or faster by what the launch floor moved: the launch
// path changed (an empty kernel shows it), not the arm. Its shift is subtracted, not divided:
// a floor adds to every call.
void weigh_against_floor(TimingChange& t, std::optional<double> shift, double threshold) {
  t.floor_shift_s = shift;
  if (!shift || t.median_a <= 0 || (t.verdict != "slower" && t.verdict != "faster")) return;
  const double own = std::abs((t.median_b - *shift) / t.median_a - 1.0);
  if (own > threshold && (t.noise < 0 || own > t.noise)) return;
  t.verdict = "same";
  t.floor_moved = t.machine_moved = true;
}

// Whether a control (a copy's GB/s, the floor's seconds) moved between the runs beyond its own
// run-to-run noise: one that did not cannot explain an arm's change (a host copy of 48 KB moves
// 5% by chance). Too few samples for blocks: it cannot either.
bool control_moved(const std::vector<double>& a, const std::vector<double>& b) {
  const auto na = block_noise(a), nb = block_noise(b);
  if (!na || !nb || a.empty() || b.empty()) return false;
  const double ma = summarize(a).median, mb = summarize(b).median;
  return ma > 0 && std::abs(mb / ma - 1.0) > *na + *nb;
}

// The launch floor's B - A at t's size beside a CUDA arm's single launches, or nullopt when
// either run lacks it or it did not move beyond its noise.
std::optional<double> floor_shift(const RunData& a, const RunData& b, const TimingChange& t) {
  const TimingKey& k = t.key;
  const ManifestArm *ma = a.manifest.arm(instance_arm(k.arm)),
                    *mb = b.manifest.arm(instance_arm(k.arm));
  if (!ma || !mb || ma->device != "cuda" || mb->device != "cuda" || k.mode != "single")
    return std::nullopt;
  auto fa = a.floor_samples_s.find(k.size), fb = b.floor_samples_s.find(t.size_b);
  if (fa == a.floor_samples_s.end() || fb == b.floor_samples_s.end()) return std::nullopt;
  if (!control_moved(fa->second, fb->second)) return 0.0;
  return summarize(fb->second).median - summarize(fa->second).median;
}

// An arm that takes this many times the copy beside it, or more, is bound by something the
// copy does not time (compute, latency, a wait): the copy, which moves half the arm's bytes,
// times the memory. Its move explains nothing of such an arm's (a 16 KB host copy, about a
// microsecond, moved 13% between two runs beyond its own noise, beside an arm of 200 us).
constexpr double kCopyReach = 10;

// The B / A of the copy timed beside t's arm at its size ("arm#2" is arm's instance): the device
// copy for a CUDA arm, the host copy for a CPU arm; 0 when either run lacks it or the arm is
// beyond its reach (kCopyReach), 1 when it did not move beyond its own noise.
double copy_ratio(const RunData& a, const RunData& b, const TimingChange& t) {
  const std::string& arm = t.key.arm;
  const std::string base = instance_arm(arm);
  const ManifestArm *ma = a.manifest.arm(base), *mb = b.manifest.arm(base);
  if (!ma || !mb || ma->device != mb->device) return 0;
  const bool cpu = ma->device == "cpu";
  if (!cpu && ma->device != "cuda") return 0;
  const auto& light_a = cpu ? a.host_light : a.light;
  const auto& light_b = cpu ? b.host_light : b.light;
  auto la = light_a.find(t.key.size), lb = light_b.find(t.size_b);
  if (la == light_a.end() || lb == light_b.end() || la->second.gbps <= 0 || lb->second.gbps <= 0)
    return 0;
  if (t.median_a > kCopyReach * la->second.seconds || t.median_b > kCopyReach * lb->second.seconds)
    return 0;
  if (!control_moved(la->second.samples, lb->second.samples)) return 1.0;  // it did not move
  return la->second.gbps / lb->second.gbps;                                // time B / time A
}

// Each arm's final qualification verdict (its last verdict record; sanitizer passes ignored).
std::map<std::string, std::string> final_verdicts(const RunData& run) {
  std::map<std::string, std::string> out;
  for (const auto& v : run.verdicts) out[v.arm] = std::string(rec::to_string(v.verdict));
  return out;
}

std::string fmt(const char* f, double x) {
  char b[48];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

// "+120 ns", "-1.5 us"
std::string signed_seconds(double s) { return (s < 0 ? "-" : "+") + format_seconds(std::abs(s)); }

std::string run_line(const char* name, const RunDescription& r) {
  std::string s = std::string("  ") + name + ": " + r.dir;
  std::string what;
  for (const std::string* k : {&r.op, &r.started, &r.host, &r.gpu})
    if (!k->empty()) what += (what.empty() ? "" : ", ") + *k;
  if (!what.empty()) s += "  (" + what + ")";
  return s + "\n";
}

// "left out of run A: 3 throttled, 1 unheld round(s)\n", or "" when none was.
std::string left_out_line(const char* name, const std::map<std::string, int>& left_out) {
  std::string what;
  for (const auto& [why, n] : left_out)
    what += (what.empty() ? "" : ", ") + std::to_string(n) + " " + why;
  return what.empty() ? "" : std::string("left out of run ") + name + ": " + what + " round(s)\n";
}

std::string key_text(const TimingKey& k) {
  return k.arm + " at " + k.where() + " (" + k.mode + ")";
}

// The ratio of one key timed in both runs, weighed against the copy and the launch floor.
TimingChange compare_key(const RunData& a, const RunData& b, const TimingKey& ka,
                         const TimingKey& kb, double threshold) {
  const Key sa{ka.arm, ka.size, ka.mode}, sb{kb.arm, kb.size, kb.mode};
  TimingChange t =
      compare_timing(ka, kb.size, a.samples.at(sa).seconds, b.samples.at(sb).seconds, threshold);
  weigh_against_copy(t, copy_ratio(a, b, t), threshold);
  weigh_against_floor(t, floor_shift(a, b, t), threshold);
  return t;
}

void tally(RunComparison& c, const TimingChange& t) {
  c.machine_moved += t.machine_moved;
  (t.verdict == "too few samples" ? c.too_few
   : t.verdict == "same"          ? c.same
   : t.verdict == "slower"        ? c.slower
                                  : c.faster)++;
  if (t.verdict != "too few samples" && t.noise < 0) c.without_noise++;
}

}  // namespace

std::string TimingKey::where() const { return point.empty() ? std::to_string(size) : point; }

RunComparison compare_runs(const std::filesystem::path& run_a, const std::filesystem::path& run_b,
                           double threshold) {
  RunComparison c;
  c.threshold = threshold;
  const RunData a = read_run(run_a), b = read_run(run_b);
  c.run_a = describe(a);
  c.run_b = describe(b);
  c.left_out_a = left_out_counts(a);
  c.left_out_b = left_out_counts(b);
  const PointNames points_a = point_names(a), points_b = point_names(b);
  std::map<MeetKey, TimingKey> in_b;
  for (const auto& [k, kept] : b.samples) {
    const TimingKey kb = key_of(k, points_b);
    in_b.emplace(meet_key(kb), kb);
  }
  std::set<MeetKey> met;
  for (const auto& [k, kept] : a.samples) {
    const TimingKey ka = key_of(k, points_a);
    const auto it = in_b.find(meet_key(ka));
    if (it == in_b.end()) {
      c.only_a.push_back(ka);
      continue;
    }
    met.insert(it->first);
    c.timing.push_back(compare_key(a, b, ka, it->second, threshold));
    tally(c, c.timing.back());
  }
  for (const auto& [m, kb] : in_b)
    if (!met.count(m)) c.only_b.push_back(kb);

  const auto qa = final_verdicts(a), qb = final_verdicts(b);
  for (const auto& [arm, v] : qa) {
    auto it = qb.find(arm);
    if (it == qb.end())
      c.qualified_only_a.push_back(arm);
    else if (it->second != v)
      c.verdicts_changed.push_back({arm, v, it->second});
  }
  for (const auto& [arm, v] : qb)
    if (!qa.count(arm)) c.qualified_only_b.push_back(arm);
  return c;
}

std::string render_comparison(const RunComparison& c) {
  std::ostringstream o;
  o << "kq compare\n" << run_line("A", c.run_a) << run_line("B", c.run_b);
  const std::string &sha_a = c.run_a.spec_sha256, &sha_b = c.run_b.spec_sha256;
  if (!sha_a.empty() && !sha_b.empty() && sha_a != sha_b)
    o << "note: the runs used different specs (spec sha256 " << sha_a.substr(0, 12) << "... and "
      << sha_b.substr(0, 12) << "...)\n";
  o << settings_note(c.run_a, c.run_b);
  o << "\nB/A: median B over median A (above 1: B is slower), with its 95% bootstrap interval. "
       "noise: both runs'\nrun-to-run noise added, each the range of the medians of "
       "4 to 8 blocks of its rounds\nover its median. A change: the interval excludes 1 and B/A "
       "is further from 1 than both the\nthreshold ("
    << fmt("%.3g", 100 * c.threshold)
    << "%) and the noise. Throttled and unheld rounds are left out, as in the summary.\n";
  o << left_out_line("A", c.left_out_a) << left_out_line("B", c.left_out_b) << "\n";

  if (!c.timing.empty()) {
    const bool points = std::any_of(c.timing.begin(), c.timing.end(),
                                    [](const TimingChange& t) { return !t.key.point.empty(); });
    std::vector<std::vector<std::string>> rows = {
        {"arm", points ? "point" : "size", "mode", "n A", "n B", "median A", "median B", "B/A",
         "95% interval", "noise", "copy B/A", "floor B-A", "verdict"}};
    for (const auto& t : c.timing) {
      const bool est = t.verdict != "too few samples";
      rows.push_back({t.key.arm, t.key.where(), t.key.mode, std::to_string(t.n_a),
                      std::to_string(t.n_b), format_seconds(t.median_a), format_seconds(t.median_b),
                      fmt("%.3f", t.ratio),
                      est ? fmt("%.3f", t.lo) + " - " + fmt("%.3f", t.hi) : std::string("-"),
                      t.noise >= 0 ? fmt("%.1f%%", 100 * t.noise) : std::string("-"),
                      t.copy_ratio > 0 ? fmt("%.3f", t.copy_ratio) : std::string("-"),
                      t.floor_shift_s ? signed_seconds(*t.floor_shift_s) : std::string("-"),
                      t.floor_moved     ? "same (the launch floor moved)"
                      : t.machine_moved ? "same (the copy moved too)"
                                        : t.verdict});
    }
    std::vector<std::size_t> width(rows[0].size(), 0);
    for (const auto& r : rows)
      for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    const std::vector<bool> right = {false, true,  false, true, true, true, true,
                                     true,  false, true,  true, true, false};
    for (const auto& r : rows) {
      std::string line;
      for (std::size_t i = 0; i < r.size(); ++i) {
        const std::string pad(width[i] - r[i].size(), ' ');
        line += (i ? "  " : "") + (right[i] ? pad + r[i] : r[i] + (i + 1 < r.size() ? pad : ""));
      }
      o << line << "\n";
    }
  } else {
    o << "No (arm, size or point, mode) was timed in both runs.\n";
  }
  if (c.machine_moved)
    o << c.machine_moved
      << " change(s) counted as same: the copy timed in the same rounds moved as much "
         "(copy B/A), or the launch floor (an empty kernel timed as a single launch) moved by "
         "what the arm did (floor B-A), so the machine moved, not the arm\n";
  if (c.without_noise)
    o << "\n"
      << c.without_noise << " compared on the threshold alone: under "
      << kMinBlocks * kMinBlockSamples
      << " rounds on both sides, too few for blocks (noise -), so the runs' own noise is unknown\n";
  if (!c.only_a.empty()) {
    o << "\ntimed in run A only:\n";
    for (const auto& k : c.only_a) o << "  " << key_text(k) << "\n";
  }
  if (!c.only_b.empty()) {
    o << "\ntimed in run B only:\n";
    for (const auto& k : c.only_b) o << "  " << key_text(k) << "\n";
  }
  if (!c.verdicts_changed.empty()) {
    o << "\nqualification verdicts changed:\n";
    for (const auto& v : c.verdicts_changed)
      o << "  " << v.arm << ": " << v.a << " -> " << v.b << "\n";
  }
  if (!c.qualified_only_a.empty()) {
    o << "\nqualified in run A only:";
    for (const auto& a : c.qualified_only_a) o << " " << a;
    o << "\n";
  }
  if (!c.qualified_only_b.empty()) {
    o << "\nqualified in run B only:";
    for (const auto& a : c.qualified_only_b) o << " " << a;
    o << "\n";
  }

  o << "\ncompare: " << c.timing.size() << " compared: " << c.slower << " slower, " << c.faster
    << " faster, " << c.same << " same";
  if (c.too_few)
    o << ", " << c.too_few << " with too few samples (under " << kMinCompareSamples << ")";
  o << "; " << c.verdicts_changed.size() << " verdict(s) changed";
  if (!c.only_a.empty() || !c.only_b.empty())
    o << "; " << c.only_a.size() + c.only_b.size() << " timed in one run only";
  o << ": " << (c.changed() ? "CHANGED beyond noise" : "no change beyond noise") << "\n";
  return o.str();
}

}  // namespace kq
