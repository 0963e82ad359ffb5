#include "timing/time_arms.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>

#include "device/cuda_check.hpp"
#include "device/device_state.hpp"
#include "device/kernel_profile.hpp"
#include "device/stream_discipline.hpp"
#include "plan/timed_points.hpp"
#include "record/instance_name.hpp"
#include "stats/stats.hpp"
#include "timing/clock_probe.hpp"
#include "timing/compute_light.hpp"
#include "timing/light.hpp"
#include "timing/size_checks.hpp"
#include "timing/slot.hpp"
#include "timing/stopping.hpp"

namespace kq {
namespace {

using clock_type = std::chrono::steady_clock;

// A reference timed again in an isolated worker (timing/timing_workers.hpp): "arm@label".

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

const char* l2_name(TimingPolicy::L2 l2) {
  return l2 == TimingPolicy::L2::flush    ? "flush"
         : l2 == TimingPolicy::L2::rotate ? "rotate"
                                          : "warm";
}

// What one round interleaves: an arm's single call, its graph replay, or a light copy.
enum class StepKind { single, graph, light };
struct Step {
  int slot;  // the arm's slot, or for a light the index of its copy
  StepKind kind;
};

// One timed size: set-up, rounds, and what follows them.
// The vendor GEMM of a timing run (timing/compute_light.hpp): built at the first point that
// needs it, shared by the others.
struct SharedGemm {
  bool tried = false;
  std::shared_ptr<GemmLight> gemm;
  std::string why;
};

class SizeRun {
 public:
  SizeRun(const std::vector<TimedArm>& arms, const Spec& spec, const TimedPoint& point,
          std::uint64_t check_seed, std::map<std::string, std::string>& rejected,
          std::map<std::string, double>& cpu_rate, SharedGemm& gemm, const Emit& emit,
          bool cpu_beside_cuda, const std::map<std::string, double>& last_medians)
      : spec_(spec),
        cpu_beside_cuda_(cpu_beside_cuda),
        point_(point),
        size_(point.size),
        checks_(spec, point.c, check_seed ^ 0x5eedf00dull),
        rejected_(rejected),
        cpu_rate_(cpu_rate),
        gemm_(gemm),
        emit_(emit),
        rng_(spec.qualification.seed + static_cast<std::uint64_t>(point.size)) {
    const auto t0 = clock_type::now();
    set_up(arms, check_seed, last_medians);
    setup_s_ = since(t0);
  }

  void run() {
    if (slots_.empty()) return;
    rounds();
    after_rounds();
  }

  // Each arm's median seconds a call (single mode) at this size, those not rejected.
  std::map<std::string, double> medians() const {
    std::map<std::string, double> m;
    for (const Slot& s : slots_)
      if (s.rejected.empty() && !s.single.empty()) m[s.name()] = summarize(s.single).median;
    return m;
  }

 private:
  // Set-up: every arm prepared and warmed, the reference, the graphs checked, the steps.
  void set_up(const std::vector<TimedArm>& arms, std::uint64_t check_seed,
              const std::map<std::string, double>& last_medians) {
    const TimingPolicy& pol = spec_.timing;
    const bool graph_mode =
        std::find(pol.modes.begin(), pol.modes.end(), "graph") != pol.modes.end();
    if (std::any_of(arms.begin(), arms.end(),
                    [](const TimedArm& a) { return a.identity.device == Device::cuda; }))
      cuda_stream_ = std::make_shared<Stream>(Device::cuda);
    if (cuda_stream_) expected_device_state();  // read before any arm's first call here
    std::vector<std::string> names;
    std::vector<double> arm_setup_s;
    std::vector<std::size_t> place;  // each slot's arm's place in `arms`
    std::vector<std::size_t> order = setup_order(arms, spec_.decision, last_medians);
    bool baseline_set_up = false;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::size_t i = order[k];
      const TimedArm& a = arms[i];
      const auto t0 = clock_type::now();
      const bool baseline = baseline_rank(a, spec_.decision) < spec_.decision.baselines.size();
      if (!set_up_arm(a, graph_mode, check_seed)) {
        // The decision weighs every size against one baseline: the next comes before the
        // candidates while none is set up here.
        if (baseline && !baseline_set_up) next_baseline_first(order, k + 1, arms, spec_.decision);
        continue;
      }
      baseline_set_up = baseline_set_up || baseline;
      names.push_back(a.identity.name);
      arm_setup_s.push_back(since(t0));
      place.push_back(i);
    }
    back_in_place(place, names, arm_setup_s);
    // An isolated worker (its references named "arm@label") times a size only for its own arms.
    if (std::none_of(slots_.begin(), slots_.end(),
                     [](const Slot& s) { return !is_worker_reference(s.name()); })) {
      slots_.clear();
      names.clear();
      arm_setup_s.clear();
    }
    rec::SizeStart start{size_, names, l2_name(pol.l2), check_seed, {}, {}, {}, arm_setup_s};
    if (!point_.point.empty()) {
      start.point = point_.point;
      start.bytes = point_.bytes;
      start.flops = point_.flops;
    }
    emit_(start);
    if (slots_.empty()) return;

    // The controls before the reference's optional copy on the device: where the arms' buffers
    // leave little device memory, the copy control is worth more than the faster checks.
    const bool any_cuda =
        std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.cuda(); });
    if (any_cuda && pol.l2 == TimingPolicy::L2::flush)
      flusher_ = std::make_unique<L2Flusher>(Device::cuda);
    if (any_cuda) {
      probe_ = std::make_unique<ClockProbe>();
      device_light();
      lights_.push_back(make_floor(spec_, cuda_stream_));
      compute_light();
    }
    if (std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.cuda(); }))
      lights_.push_back(make_light(point_.bytes, Device::cpu, false, nullptr));

    checks_.reference(*slots_.front().sets.front(),
                      cuda_stream_ ? cuda_stream_->handle() : nullptr);
    for (Slot& s : slots_) {
      check_device(s, "single", -1);  // prepare(), the warm-up, the capture
      if (s.graph) check_graph(s);
    }
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      steps_.push_back({static_cast<int>(i), StepKind::single});
      if (slots_[i].graph) steps_.push_back({static_cast<int>(i), StepKind::graph});
    }
    for (std::size_t i = 0; i < lights_.size(); ++i)
      steps_.push_back({static_cast<int>(i), StepKind::light});
  }

  // Sets up `a` in a slot of its own; false, with a record saying why, where it is not timed at
  // this size (rejected before, over the CPU budget, or its set-up failed: out of memory).
  bool set_up_arm(const TimedArm& a, bool graph_mode, std::uint64_t check_seed) {
    if (auto r = rejected_.find(a.identity.name); r != rejected_.end()) {
      skip(a, "rejected by the timing checks: " + r->second);
      return false;
    }
    if (over_cpu_budget(a, cpu_rate_.count(a.identity.name) == 1
                               ? cpu_rate_[a.identity.name] * point_.bytes
                               : 0.0))
      return false;
    try {
      slots_.push_back(make_slot(a, spec_, point_, graph_mode, cuda_stream_, check_seed, emit_));
      const Slot& s = slots_.back();
      if (!s.cuda()) cpu_rate_[a.identity.name] = s.warmup_call_s / std::max(point_.bytes, 1.0);
      if (over_cpu_budget(a, s.warmup_call_s)) {
        slots_.pop_back();
        return false;
      }
      return true;
    } catch (const std::exception& e) {
      skip(a, e.what());
      rethrow_if_sticky(e);
      return false;
    }
  }

  // The slots (and their names and set-up times) back in the arms' order, which the rounds
  // interleave in, whatever order they were set up in.
  void back_in_place(const std::vector<std::size_t>& place, std::vector<std::string>& names,
                     std::vector<double>& setup_s) {
    std::vector<std::size_t> by(place.size());
    for (std::size_t k = 0; k < by.size(); ++k) by[k] = k;
    std::sort(by.begin(), by.end(),
              [&](std::size_t x, std::size_t y) { return place[x] < place[y]; });
    std::vector<Slot> slots;
    std::vector<std::string> n;
    std::vector<double> t;
    for (std::size_t k : by) {
      slots.push_back(std::move(slots_[k]));
      n.push_back(names[k]);
      t.push_back(setup_s[k]);
    }
    slots_ = std::move(slots);
    names = std::move(n);
    setup_s = std::move(t);
  }

  // The device copy, smaller than the call's bytes (or none) where the arms' buffers of a large
  // size leave no room for a full one: said in the run, never the size lost.
  void device_light() {
    const double mb = 1e6;
    try {
      lights_.push_back(
          make_device_light(point_.bytes, spec_.timing.blocking_kernel, cuda_stream_));
    } catch (const CudaError& e) {
      rethrow_if_sticky(e);
      emit_(rec::ArmNote{"kq", size_,
                         "no device copy (the speed of light) at this size: " +
                             std::string(e.what()) + " beside the arms' buffers"});
      return;
    }
    const double copied = 2.0 * static_cast<double>(lights_.back()->bytes);
    if (copied < point_.bytes - 512)
      emit_(rec::ArmNote{"kq", size_,
                         "the device copy moves " + std::to_string(std::lround(copied / mb)) +
                             " MB, not the call's " +
                             std::to_string(std::lround(point_.bytes / mb)) +
                             " MB: the arms' buffers left no device memory for a full one (its "
                             "GB/s is the memory's either way)"});
  }

  // A matrix product's point: the vendor GEMM beside the copy (timing/compute_light.hpp).
  void compute_light() {
    const std::optional<GemmLightType> type = product_type(spec_);
    if (!type) return;
    if (!gemm_.tried) {
      gemm_.tried = true;
      gemm_.gemm = make_gemm_light(*type, &gemm_.why);
    }
    if (gemm_.gemm)
      lights_.push_back(make_compute_light(gemm_.gemm, spec_.timing.blocking_kernel, cuda_stream_));
    else
      emit_(rec::ArmNote{"kq", size_, "no compute light (the vendor GEMM): " + gemm_.why});
  }

  // A CPU arm beside a CUDA one whose call takes (or, from its earlier sizes, will take) longer
  // than the budget is not timed at this size, with a record saying so: on a GPU host it is
  // never a candidate, and its calls at the largest sizes would take most of the run.
  bool over_cpu_budget(const TimedArm& a, double call_s) {
    const double budget = spec_.timing.cpu_call_budget_s;
    if (a.identity.device != Device::cpu || !cuda_stream_) return false;
    if (!cpu_beside_cuda_) {
      skip(a,
           "kq run --quick times only the CUDA arms where there are any: a CPU arm is never a "
           "candidate beside them (kq run without --quick times it, up to --cpu-budget)");
      return true;
    }
    if (budget <= 0 || call_s <= budget) return false;
    char text[160];
    std::snprintf(text, sizeof text,
                  "a call takes about %.0f ms, above the %.0f ms budget of CPU arms timed beside "
                  "CUDA ones (kq run --cpu-budget 0 times every size)",
                  call_s * 1e3, budget * 1e3);
    skip(a, text);
    return true;
  }

  void skip(const TimedArm& a, const std::string& why) {
    emit_(rec::ArmSkip{a.identity.name, size_, why, {}});
  }

  // The graph, replayed once on a poisoned output, must give the reference.
  void check_graph(Slot& s) {
    s.graph->launch();
    s.stream->synchronize("the graph's first replay");
    check(s, s.graph_set(), "graph", -1, "graph_output");
    s.repoison(s.graph_set());
  }

  // Compares a set's output; a wrong one rejects the arm with `check` (timing_output for
  // samples, graph_output for graph replays).
  void check(Slot& s, CaseTensors& t, const char* mode, int round, const char* check_name) {
    ++s.checked;
    const OutputFinding f = checks_.check(t, s.cuda());
    if (f.ok || !s.rejected.empty()) return;
    const std::string where =
        std::string(mode) + " mode" +
        (round < 0 ? " (the first replay after capture)" : ", round " + std::to_string(round));
    rec::TimingReject r{s.name(), size_, mode, round, check_name, {}, {}, {}, {}};
    if (f.index >= 0) {
      r.index = f.index;
      r.expected = f.expected;
      r.got = f.got;
    }
    reject(s, r, "at " + point_.where() + ", " + where + ": " + f.message);
  }

  // After the arm's calls: the device and the stream as kq left them, else the arm is rejected
  // by device_state (and what it changed put back, before the next sample).
  void check_device(Slot& s, const char* mode, int round) {
    if (!s.cuda()) return;
    const std::string changed = check_device_state(s.stream->handle());
    if (changed.empty() || !s.rejected.empty()) return;
    const std::string where =
        round < 0 ? "in its set-up" : std::string(mode) + " mode, round " + std::to_string(round);
    reject(s, rec::TimingReject{s.name(), size_, mode, round, "device_state", {}, {}, {}, {}},
           "at " + point_.where() + ", " + where +
               ": changed the device for the other arms: " + changed + " (kq put it back)");
  }

  void reject(Slot& s, rec::TimingReject r, const std::string& why) {
    s.rejected = why;
    rejected_[s.name()] = why;
    r.message = why;
    emit_(r);
  }

  // Rounds until the stopping rule says enough, then one closing round whose every sample is
  // checked: the last samples of the size are always compared.
  void rounds() {
    // The set-up's checks (a graph's first replay) are the set-up's.
    checks_.restart_counts();
    auto t0 = clock_type::now();
    int round = 0;
    std::string stopped_by;
    while (stopped_by.empty()) {
      one_round(round, false);
      ++round;
      std::map<std::string, std::vector<double>> by_arm;
      for (const Slot& s : slots_)
        if (s.rejected.empty()) by_arm[s.name()] = s.single;
      stopped_by = by_arm.empty() ? "rejected" : stop_reason(by_arm, spec_, round, since(t0));
    }
    if (stopped_by != "rejected") one_round(round++, true);
    rec::SizeEnd end{size_, round, stopped_by, since(t0), setup_s_};
    end.sample_s = sample_s_;
    end.light_s = light_s_;
    checks_.count_into(end);
    emit_(end);
  }

  void one_round(int round, bool closing) {
    std::shuffle(steps_.begin(), steps_.end(), rng_);
    for (const Step& st : steps_) {
      if (st.kind != StepKind::light && !slots_[static_cast<std::size_t>(st.slot)].rejected.empty())
        continue;
      const auto t0 = clock_type::now();
      if (st.kind == StepKind::light) {
        light_step(*lights_[static_cast<std::size_t>(st.slot)], round);
        light_s_ += since(t0);
      } else {
        emit_(arm_sample(slots_[static_cast<std::size_t>(st.slot)], st.kind, round, closing));
        sample_s_ += since(t0);
      }
    }
  }

  // Outside the timed region: no line left persisting by an earlier call, then the flush.
  void before_sample(void* stream) {
    reset_persisting_l2();
    if (flusher_) flusher_->flush(stream);
  }
  // What every sample records besides its time: whether its hold held, and the SM clock after
  // it on `stream` (none for a CPU arm: nullptr).
  void sample_facts(rec::SampleCommon& r, const SampleTimer& timer, void* stream) {
    r.size = size_;
    if (timer.holding()) r.held = timer.last_held();
    if (!probe_ || !stream) return;
    if (double mhz = probe_->measure_mhz(stream); mhz > 0) r.sm_clock_mhz = mhz;
  }

  // A control's sample: a copy (a light record) or the launch floor (a floor record).
  void light_step(Light& l, int round) {
    void* stream = l.stream ? l.stream->handle() : nullptr;
    if (stream) before_sample(stream);
    const double seconds = time_light(l);
    if (l.floor) {
      rec::FloorSample r;
      r.round = round;
      r.seconds = seconds;
      sample_facts(r, *l.timer, stream);
      emit_(r);
      return;
    }
    rec::LightSample r;
    r.round = round;
    r.seconds = seconds;
    r.bytes = 2 * l.bytes;
    if (l.gemm) {
      r.bytes = 0;
      r.flops = l.flops;
      r.what = l.what;
    }
    if (l.device == Device::cpu) r.device = "cpu";
    sample_facts(r, *l.timer, stream);
    emit_(r);
  }

  rec::RoundSample arm_sample(Slot& s, StepKind kind, int round, bool closing) {
    const bool single = kind == StepKind::single;
    CaseTensors& t = single ? s.take_set() : s.graph_set();
    checks_.change(t, s.stream->handle());
    if (s.cuda()) before_sample(s.stream->handle());
    double secs = 0, host = 0;
    if (single) {
      secs = s.timer->time([&] {
        auto h0 = clock_type::now();
        s.call(t);
        host = since(h0);
      });
      s.single.push_back(secs);
    } else {
      secs = s.timer->time([&] { s.graph->launch(); }) / s.graph->launches();
      s.graphed.push_back(secs);
    }
    rec::RoundSample r;
    r.arm = s.name();
    r.mode = single ? "single" : "graph";
    r.round = round;
    r.seconds = secs;
    if (single && s.cuda()) r.host_seconds = host;  // the enqueue alone
    if (!single) r.launches = s.graph->launches();
    // A hold that timed out (an enqueue slower than its timeout) let the GPU start early.
    sample_facts(r, *s.timer, s.cuda() ? s.stream->handle() : nullptr);
    // Outside the timed region: the device as it was, maybe compare, then poison for the set's
    // next sample.
    check_device(s, r.mode.c_str(), round);
    const bool checked = closing || (single ? s.single_checks.next() : s.graph_checks.next());
    if (checked) {
      check(s, t, single ? "single" : "graph", round, "timing_output");
      r.checked = true;
    }
    s.repoison(t);
    return r;
  }

  // After the rounds: each arm's verdict on its outputs, then what one call launches, on which
  // streams (CUPTI, attached for these extra calls only and detached before the next size).
  void after_rounds() {
    for (Slot& s : slots_) {
      rec::Recheck r{s.name(), size_, s.rejected.empty(), s.checked, {}};
      if (!s.rejected.empty()) r.message = s.rejected;
      emit_(r);
    }
    for (Slot& s : slots_) {
      if (!s.cuda() || !s.rejected.empty()) continue;
      StreamCheck sc = check_stream_discipline(s.stream->handle(), [&] { s.call(*s.sets[0]); });
      emit_(rec::Profile{s.name(), size_, sc.profile});
      // Another thread's work: the worker's, not this arm's (no arm is adopted from it).
      if (!sc.other_threads.empty()) emit_(rec::Disturbed{size_, s.name(), sc.other_threads});
      if (sc.problem.empty()) continue;
      reject(s, rec::TimingReject{s.name(), size_, "single", -1, "wrong_stream", {}, {}, {}, {}},
             "at " + point_.where() + ": " + sc.problem);
    }
    if (std::string why = detach_profiler(); !why.empty()) emit_(rec::ProfilerAttached{size_, why});
  }

  const Spec& spec_;
  bool cpu_beside_cuda_;
  const TimedPoint& point_;
  std::int64_t size_;
  double setup_s_ = 0;
  double sample_s_ = 0;  // the arms' samples, whole (their checks too), and the controls'
  double light_s_ = 0;
  SizeChecks checks_;  // the reference, the fresh inputs, the outputs' comparisons
  std::map<std::string, std::string>& rejected_;
  std::map<std::string, double>& cpu_rate_;  // CPU arm -> seconds a byte, from its last size
  SharedGemm& gemm_;
  const Emit& emit_;
  std::mt19937_64 rng_;
  std::shared_ptr<Stream> cuda_stream_;
  std::vector<Slot> slots_;
  std::vector<Step> steps_;
  std::unique_ptr<L2Flusher> flusher_;
  std::unique_ptr<ClockProbe> probe_;
  std::vector<std::unique_ptr<Light>> lights_;  // the controls: copies, the launch floor
};

}  // namespace

std::size_t baseline_rank(const TimedArm& a, const DecisionRule& rule) {
  const std::string arm = instance_arm(a.identity.name);
  return static_cast<std::size_t>(std::find(rule.baselines.begin(), rule.baselines.end(), arm) -
                                  rule.baselines.begin());
}

std::vector<std::size_t> setup_order(const std::vector<TimedArm>& arms, const DecisionRule& rule,
                                     const std::map<std::string, double>& last_medians) {
  // The first of the rule's baselines among the arms: the one the decision weighs against. The
  // others are candidates here (kept in order when it cannot be set up: next_baseline_first).
  std::size_t first = rule.baselines.size();
  for (const TimedArm& a : arms) first = std::min(first, baseline_rank(a, rule));
  auto is_baseline = [&](const TimedArm& a) {
    return first < rule.baselines.size() && baseline_rank(a, rule) == first;
  };
  auto timed_before = [&](const TimedArm& a) { return last_medians.count(a.identity.name) > 0; };
  auto median = [&](const TimedArm& a) {
    return timed_before(a) ? last_medians.at(a.identity.name) : 0.0;
  };
  // The baseline's median at the size before, where it was timed there.
  double baseline_median = 0;
  for (const TimedArm& a : arms)
    if (is_baseline(a) && timed_before(a)) baseline_median = median(a);
  // The tiers, set up in this order; within the timed ones, the faster first.
  enum Tier { kBaseline, kTimed, kNotTimed, kEager, kSlow };
  auto tier = [&](const TimedArm& a) {
    if (is_baseline(a)) return kBaseline;
    const std::string arm = instance_arm(a.identity.name);
    if (std::find(rule.eager.begin(), rule.eager.end(), arm) != rule.eager.end()) return kEager;
    if (!timed_before(a)) return kNotTimed;
    return baseline_median > 0 && median(a) > kContender * baseline_median ? kSlow : kTimed;
  };
  std::vector<std::size_t> order(arms.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const Tier tx = tier(arms[x]), ty = tier(arms[y]);
    if (tx != ty) return tx < ty;
    return (tx == kTimed || tx == kSlow) && median(arms[x]) < median(arms[y]);
  });
  return order;
}

void next_baseline_first(std::vector<std::size_t>& order, std::size_t from,
                         const std::vector<TimedArm>& arms, const DecisionRule& rule) {
  if (from >= order.size()) return;
  auto next = order.end();
  std::size_t best = rule.baselines.size();
  for (auto it = order.begin() + static_cast<std::ptrdiff_t>(from); it != order.end(); ++it)
    if (const std::size_t r = baseline_rank(arms[*it], rule); r < best) {
      best = r;
      next = it;
    }
  if (next != order.end())
    std::rotate(order.begin() + static_cast<std::ptrdiff_t>(from), next, next + 1);
}

void time_arms(const std::vector<TimedArm>& arms, const Spec& spec, const Emit& emit,
               bool cpu_beside_cuda, std::map<std::string, std::string> rejected) {
  // Which samples are checked is drawn afresh for every run: an arm cannot learn it.
  std::random_device rd;
  const std::uint64_t check_seed = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  // `rejected`: arm -> why, kept across sizes
  std::map<std::string, double> cpu_rate;  // CPU arm -> seconds a byte, from its last size
  // Once every arm of its own is rejected, a worker has nothing left to time.
  auto any_own_left = [&] {
    return std::any_of(arms.begin(), arms.end(), [&](const TimedArm& a) {
      return !is_worker_reference(a.identity.name) && !rejected.count(a.identity.name);
    });
  };
  SharedGemm gemm;
  std::map<std::string, double> last_medians;  // at the size before: who is set up first
  for (const TimedPoint& p : timed_points(spec, spec.timing.sizes)) {
    if (!any_own_left()) break;
    SizeRun size(arms, spec, p, check_seed, rejected, cpu_rate, gemm, emit, cpu_beside_cuda,
                 last_medians);
    size.run();
    last_medians = size.medians();
  }
}

}  // namespace kq
