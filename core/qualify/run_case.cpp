#include "qualify/run_case.hpp"

#include <chrono>
#include <memory>
#include <optional>

#include "device/cuda_check.hpp"
#include "device/device_state.hpp"
#include "device/graph_replay.hpp"
#include "device/kernel_profile.hpp"
#include "device/stream.hpp"
#include "device/stream_discipline.hpp"
#include "plugins/guarded_call.hpp"
#include "qualify/case_checks.hpp"
#include "qualify/case_data.hpp"
#include "qualify/case_tensors.hpp"
#include "qualify/compare.hpp"
#include "util/host_memory.hpp"

namespace kq {

const char* to_string(CaseOutcome::Result r) {
  switch (r) {
    case CaseOutcome::Result::passed:
      return "passed";
    case CaseOutcome::Result::refused:
      return "refused";
    case CaseOutcome::Result::failed:
      return "failed";
    case CaseOutcome::Result::skipped:
      return "skipped";
  }
  return "?";
}

namespace {

// Adds the seconds from its construction to its destruction to a stage's total.
class StageTimer {
 public:
  explicit StageTimer(double& total) : total_(total), t0_(std::chrono::steady_clock::now()) {}
  ~StageTimer() {
    total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

 private:
  double& total_;
  std::chrono::steady_clock::time_point t0_;
};

CaseOutcome fail(std::string check, std::string message) {
  CaseOutcome o;
  o.result = CaseOutcome::Result::failed;
  o.check = std::move(check);
  o.message = std::move(message);
  return o;
}

class CaseRunner {
 public:
  CaseRunner(IKernelArm& arm, Device device, const Spec& spec, const Case& c,
             const std::function<void(double)>& prepared, const unsigned char* shared)
      : arm_(arm),
        prepared_(prepared),
        device_(device),
        spec_(spec),
        case_(c),
        shared_(shared),
        layout_(spec, c),
        stream_(device),
        rules_(output_rules(spec, c)),
        tensors_(spec, c, device),
        checks_(case_checks(spec, c, tensors_, device, rules_, stream_.handle(),
                            device_check_min_elements())) {}

  // The checks, with the seconds each stage took.
  CaseOutcome run() {
    CaseOutcome o = run_checks();
    if (!device_changed_.empty()) {
      const std::string what = "changed the device for the arms after it: " + device_changed_;
      if (o.result == CaseOutcome::Result::failed)
        o.message += "; it also " + what;
      else
        o = fail("device_state", what + " (kq put it back)");
    }
    o.stages = stages_;
    o.checked_on = checks_->where();
    for (const OutputRule& r : rules_)  // a case outside the contract is never compared
      if (r.sampled() && case_.in_contract)
        o.sampled_elements += static_cast<std::int64_t>(r.samples->size());
    return o;
  }

 private:
  CaseOutcome run_checks() {
    if (device_ == Device::cuda) expected_device_state();  // read before the arm's first call
    load_inputs(0);
    poison(0);
    Status st = prepare();
    if (st.is_ok()) st = call_run();
    if (!case_.in_contract) return out_of_contract(st);
    if (st.is_unsupported())
      return fail("refused_in_contract", "refused a case inside the contract: " + st.message());
    if (st.is_error()) return fail("arm_error", "returned an error: " + st.message());

    // First run, poison 0.
    take(true);
    if (auto o = check_memory(0)) return *o;
    std::vector<HostBytes> want_storage;  // where a reference not shared is computed
    const Want want = reference(want_storage);
    if (auto o = check_values(want, "values")) return *o;

    // Second run, poison 1: the same bits again (no dependence on the output's old contents,
    // no nondeterminism). want_storage is reused for the third run's reference: a large case
    // then touches no fresh host pages after the first run.
    poison(1);
    if (auto o = run_again("second run")) return *o;
    take(false);
    if (auto o = check_memory(1)) return *o;
    if (const CaseTensors::Difference d = differs_from_first(); d.index >= 0) {
      CaseOutcome o = fail("repeat_differs", "a second run (another poison) gave different bits" +
                                                 in_output(d.output) + why_repeat_differs());
      o.index = d.index;
      return o;
    }

    // New values under the same pointers: defeats result caches keyed on the pointers.
    load_inputs(1);
    poison(0);
    if (auto o = run_again("run on new values")) return *o;
    take(false);
    if (auto o = check_memory(0)) return *o;
    const Want want3 = reference(want_storage);
    if (auto o = check_values(want3, "values")) {
      // Wrong, and bit for bit what the first inputs gave: a replayed (cached) result.
      if (differs_from_first().index < 0) {
        o->check = "new_values";
        o->message =
            "new inputs under the same pointers gave the old result again (a result cache?); " +
            o->message;
      } else {
        o->message = "on new inputs: " + o->message;
      }
      return *o;
    }
    // The conduct case of a CUDA arm: what kq's timing relies on, checked on the new values.
    if (case_.conduct && device_ == Device::cuda) {
      if (auto o = check_stream(want3)) return *o;
      if (auto o = check_graph(want3)) return *o;
    }
    return {};
  }

  void load_inputs(int generation) {
    generation_ = generation;
    {
      StageTimer t(stages_.generate);
      if (shared_)
        tensors_.use_inputs(layout_, shared_, generation);
      else
        tensors_.generate_inputs(case_, static_cast<std::uint64_t>(generation));
    }
    StageTimer t(stages_.upload);
    tensors_.upload_inputs();
    checks_->inputs_loaded();
  }
  void poison(int k) {
    StageTimer t(stages_.upload);
    tensors_.poison_output(k);
  }
  // The output as the last run left it, for the checks (downloaded, or copied on the device).
  void take(bool first) {
    StageTimer t(stages_.download);
    checks_->take(first);
  }
  Status prepare() {
    StageTimer t(stages_.run);
    Problem problem{&spec_.op, tensors_.input_views(), tensors_.output_views(), stream_.handle()};
    const auto t0 = std::chrono::steady_clock::now();
    Status st = arm_.prepare(problem);
    watch_device();
    if (prepared_)
      prepared_(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return st;
  }

  // One call under CUPTI: every kernel, copy and set must run on the stream kq gave (or on a
  // stream forked from it and joined back), and the call must still be right.
  // Each output's reference, dense in logical order, and its bounds where it is compared by the
  // accumulation bound (else null).
  struct Want {
    std::vector<const unsigned char*> values;
    std::vector<const double*> bounds;
  };

  // " in output mean" where the spec has several outputs.
  std::string in_output(std::size_t o) const {
    return tensors_.outputs() > 1 ? " in output " + tensors_.output_name(o) : "";
  }

  std::optional<CaseOutcome> check_stream(const Want& want) {
    poison(1);
    StreamCheck sc = check_stream_discipline(stream_.handle(), [&] { checked_call(); });
    detach_profiler();  // the later cases run without CUPTI
    // The worker holds this one arm: another thread's GPU work can only be the arm's own.
    if (!sc.other_threads.empty())
      return fail("outside_work",
                  "GPU work that its call did not launch: " + sc.other_threads +
                      " (a thread of the arm's that launches work between or beside its calls "
                      "disturbs the timing of every arm beside it)");
    if (!sc.problem.empty()) return fail("wrong_stream", sc.problem);
    take(false);
    if (auto o = check_memory(1)) return *o;
    if (auto o = check_values(want, "values")) {
      o->message = "the call profiled under CUPTI: " + o->message;
      return *o;
    }
    return std::nullopt;
  }

  // One call captured into a CUDA graph and replayed on a poisoned output must give the
  // reference: a graph that holds less than the call (nothing enqueued under capture) would
  // otherwise time as a fast, empty replay. An arm that cannot be captured is not at fault here.
  std::optional<CaseOutcome> check_graph(const Want& want) {
    poison(0);
    std::unique_ptr<GraphReplay> g;
    try {
      g = std::make_unique<GraphReplay>(
          stream_.handle(), [&] { checked_call(); }, 1);
    } catch (const std::exception& e) {
      rethrow_if_sticky(e);
      device_synchronize(device_, "work left by a failed capture");
      return std::nullopt;
    }
    {
      StageTimer t(stages_.run);
      g->launch();
      stream_.synchronize("the graph's replay");
    }
    take(false);
    if (auto o = check_memory(0)) return *o;
    if (auto o = check_values(want, "graph_output")) {
      o->message = "one call captured in a CUDA graph (" + std::to_string(g->work_nodes()) +
                   " work nodes) and replayed: " + o->message;
      return *o;
    }
    return std::nullopt;
  }

  void checked_call() {
    StageTimer t(stages_.run);
    throw_unless_ok(arm_.run(tensors_.input_views(), tensors_.output_views(), stream_.handle()),
                    "run()");
    watch_device();
  }

  Status call_run() {
    StageTimer t(stages_.run);
    Status st = arm_.run(tensors_.input_views(), tensors_.output_views(), stream_.handle());
    stream_.synchronize("the arm's work on its stream");
    watch_device();
    return st;
  }

  // After each of the arm's calls: the device settings and the stream's attributes must be as
  // kq left them (device/device_state.hpp). The first change is kept for the outcome.
  void watch_device() {
    if (device_ != Device::cuda) return;
    std::string changed = check_device_state(stream_.handle());
    if (device_changed_.empty()) device_changed_ = std::move(changed);
  }

  // Why a second run differed from the first: a third on the second's poison repeats the
  // second's bits where the output depends on its old contents (an accumulator never cleared),
  // and differs again where the arm is nondeterministic (atomics, races). The user fixes one in
  // the kernel and may accept the other's cause only by knowing which it is.
  std::string why_repeat_differs() {
    take(true);  // the second run's output becomes the one compared with
    poison(1);
    if (!call_run().is_ok()) return "";
    take(false);
    if (differs_from_first().index >= 0)
      return "; a third on the second's poison differed again: the arm is nondeterministic";
    return "; a third on the second's poison gave the second's bits again: the output depends on "
           "its old contents (unless a race came out the same twice)";
  }

  std::optional<CaseOutcome> run_again(const char* what) {
    Status st = call_run();
    if (st.is_ok()) return std::nullopt;
    return fail(st.is_error() ? "arm_error" : "refused_in_contract", returned(what, st));
  }

  CaseOutcome out_of_contract(const Status& st) {
    if (!st.is_ok()) {
      CaseOutcome o;
      o.result = CaseOutcome::Result::refused;
      o.message = std::string(st.is_error() ? "error: " : "") + st.message();
      return o;
    }
    take(false);
    std::string extra;
    if (auto o = check_memory(0)) extra = "; it also " + o->message;
    return fail("accepted_out_of_contract", "computed a case outside the contract (" +
                                                case_.outside_because + ") instead of refusing it" +
                                                extra);
  }

  std::optional<CaseOutcome> check_memory(int poison) {
    StageTimer t(stages_.compare);
    // Finish anything the arm left running elsewhere before reading inputs back, so a late
    // write is still caught here rather than in the next case.
    if (device_ == Device::cuda) device_synchronize(device_, "work left running by the arm");
    if (auto m = checks_->inputs_unchanged(); !m.empty()) return fail("input_modified", m);
    if (auto f = checks_->surroundings(poison); !f.check.empty()) return fail(f.check, f.message);
    return std::nullopt;
  }

  CaseTensors::Difference differs_from_first() {
    StageTimer t(stages_.compare);
    return checks_->differs_from_first();
  }

  // The references for the inputs loaded last, one per output, dense in logical order, with
  // their bounds: in the shared data, or computed into `local` (resized, its memory reused: the
  // outputs' references, then their bounds).
  Want reference(std::vector<HostBytes>& local) {
    StageTimer t(stages_.reference);
    const std::size_t outputs = layout_.outputs();
    Want want;
    if (shared_) {
      for (std::size_t o = 0; o < outputs; ++o) {
        want.values.push_back(shared_ + layout_.reference_offset(generation_, o));
        want.bounds.push_back(
            layout_.bound_bytes(o) == 0
                ? nullptr
                : reinterpret_cast<const double*>(shared_ + layout_.bound_offset(generation_, o)));
      }
      return want;
    }
    local.resize(2 * outputs);
    std::vector<unsigned char*> dst;
    std::vector<double*> bounds;
    for (std::size_t o = 0; o < outputs; ++o) {
      local[o].resize(layout_.reference_bytes(o));
      dst.push_back(local[o].data());
      want.values.push_back(local[o].data());
      HostBytes& b = local[outputs + o];
      b.resize(layout_.bound_bytes(o));
      bounds.push_back(b.empty() ? nullptr : reinterpret_cast<double*>(b.data()));
      want.bounds.push_back(bounds.back());
    }
    case_reference(spec_, case_, tensors_.pristine_input_views(), dst, bounds);
    return want;
  }

  std::optional<CaseOutcome> check_values(const Want& want, const char* check) {
    StageTimer t(stages_.compare);
    const CaseTensors::Mismatch m = checks_->values(want.values, want.bounds, generation_);
    if (m.count == 0) return std::nullopt;
    const DType dt = tensors_.dtype(m.output);
    CaseOutcome o = fail(check, mismatch_text(tensors_, m));
    o.index = m.index;
    o.bad_count = m.count;
    o.expected = describe_bits(dt, m.want_bits);
    o.got = describe_bits(dt, m.got_bits);
    o.message += ": " + describe_mismatch(dt, m.want_bits, m.got_bits);
    return o;
  }

  IKernelArm& arm_;
  const std::function<void(double)>& prepared_;
  Device device_;
  const Spec& spec_;
  const Case& case_;
  const unsigned char* shared_;  // the case's data computed already, or nullptr
  CaseDataLayout layout_;
  int generation_ = 0;  // of the inputs loaded last
  Stream stream_;
  std::vector<OutputRule> rules_;  // by output
  CaseTensors tensors_;
  std::unique_ptr<CaseChecks> checks_;
  rec::CaseStages stages_;
  std::string device_changed_;  // what the arm's first call that changed the device changed
};

}  // namespace

std::uint64_t case_host_bytes(const Spec& spec, const Case& c, std::size_t elem_size, Device device,
                              bool shared_data) {
  const std::uint64_t inputs = c.inputs.size();
  std::uint64_t units = 0;
  if (!shared_data) units += inputs + 1;           // inputs generated here, the reference
  if (device == Device::cpu) units += inputs + 1;  // the arm's tensors
  if (!checked_on_device(spec, c, device, device_check_min_elements()))
    units += device == Device::cpu ? 2 : 3;  // the output's copies (+ an input's)
  return units * static_cast<std::uint64_t>(c.numel()) * elem_size;
}

CaseOutcome run_case(IKernelArm& arm, Device device, const Spec& spec, const Case& c,
                     const std::function<void(double)>& prepared, const unsigned char* shared) {
  auto t0 = std::chrono::steady_clock::now();
  std::uint64_t need =
      case_host_bytes(spec, c, dtype_size(spec.op.dtype), device, shared != nullptr);
  // The accumulation bounds of the outputs compared by them, computed here unless shared.
  if (!shared && spec.shaped) {
    const CaseDataLayout layout(spec, c);
    for (std::size_t o = 0; o < layout.outputs(); ++o) need += layout.bound_bytes(o);
  }
  if (const std::uint64_t have = available_host_bytes(); have != 0 && need > have) {
    CaseOutcome o;
    o.result = CaseOutcome::Result::skipped;
    o.message = "needs " + std::to_string(need >> 20) + " MiB of host memory, " +
                std::to_string(have >> 20) + " MiB available";
    return o;
  }
  CaseOutcome o = CaseRunner(arm, device, spec, c, prepared, shared).run();
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return o;
}

}  // namespace kq
