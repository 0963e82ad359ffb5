#include "timing/time_arms.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>

#include "device/cuda_check.hpp"
#include "device/stream.hpp"
#include "expr/reference.hpp"
#include "qualify/case_tensors.hpp"
#include "qualify/compare.hpp"
#include "timing/stats.hpp"
#include "timing/timer.hpp"

namespace kq {
namespace {

using clock_type = std::chrono::steady_clock;

// One arm set up for one size: its stream, tensors and timer.
struct Slot {
  const TimedArm* arm;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<CaseTensors> tensors;
  std::unique_ptr<SampleTimer> timer;
  std::vector<double> samples;

  void call() {
    Status st = arm->arm->run(tensors->input_views(), tensors->output_views(), stream->handle());
    if (!st.is_ok())
      throw std::runtime_error("run() returned " + std::string(to_string(st.code())) + ": " +
                               st.message());
  }
};

Case timing_case(const Spec& spec, std::int64_t size) {
  Case c;
  c.group = "timing";
  c.name = "timing/" + std::to_string(size);
  c.shape = {size};
  c.inputs.resize(spec.op.inputs.size());
  c.seed = spec.qualification.seed ^ static_cast<std::uint64_t>(size) * 0x9e3779b97f4a7c15ull;
  return c;
}

bool ci_narrow(const std::vector<Slot>& slots, double threshold) {
  for (const auto& s : slots) {
    auto [lo, hi] = median_ci95(s.samples);
    double med = summarize(s.samples).median;
    if (med <= 0 || (hi - lo) / med > threshold) return false;
  }
  return true;
}

void recheck(Slot& s, const Spec& spec, const std::vector<unsigned char>& want, const Emit& emit,
             std::int64_t size) {
  nlohmann::json r = {{"type", "recheck"}, {"arm", s.arm->identity.name}, {"size", size}};
  auto got = s.tensors->download_output();
  auto m = s.tensors->compare_output(got, want.data(), [&](std::uint64_t w, std::uint64_t g) {
    return element_matches(spec.compare, spec.op.dtype, w, g);
  });
  r["ok"] = m.count == 0;
  if (m.count) {
    r["message"] = std::to_string(m.count) + " elements wrong after the timing loop; first at " +
                   std::to_string(m.index) + ": expected " +
                   describe_bits(spec.op.dtype, m.want_bits) + ", got " +
                   describe_bits(spec.op.dtype, m.got_bits);
  }
  emit(r);
}

}  // namespace

void time_arms(const std::vector<TimedArm>& arms, const Spec& spec, const Emit& emit) {
  const TimingPolicy& pol = spec.timing;
  for (std::int64_t size : pol.sizes) {
    Case c = timing_case(spec, size);
    std::vector<Slot> slots;
    nlohmann::json names = nlohmann::json::array();
    for (const TimedArm& a : arms) {
      Slot s{&a, nullptr, nullptr, nullptr, {}};
      try {
        s.stream = std::make_unique<Stream>(a.identity.device);
        s.tensors = std::make_unique<CaseTensors>(c, spec.op.inputs, spec.op.outputs[0].name,
                                                  spec.op.dtype, a.identity.device);
        s.tensors->load_inputs(c, 0);
        s.tensors->poison_output(0);
        Problem p{&spec.op, s.tensors->input_views(), s.tensors->output_views()};
        Status st = a.arm->prepare(p);
        if (!st.is_ok())
          throw std::runtime_error("prepare() returned " + std::string(to_string(st.code())) +
                                   ": " + st.message());
        s.timer = std::make_unique<SampleTimer>(a.identity.device, s.stream->handle());
        // Warm up by time, not by count: compiles, caches and clocks settle.
        auto t0 = clock_type::now();
        do {
          s.call();
          s.stream->synchronize("warm-up");
        } while (std::chrono::duration<double, std::milli>(clock_type::now() - t0).count() <
                 pol.warmup_ms);
        names.push_back(a.identity.name);
        slots.push_back(std::move(s));
      } catch (const CudaError& e) {
        emit(
            {{"type", "arm_skip"}, {"arm", a.identity.name}, {"size", size}, {"reason", e.what()}});
        if (e.sticky()) throw;
      } catch (const std::exception& e) {
        emit(
            {{"type", "arm_skip"}, {"arm", a.identity.name}, {"size", size}, {"reason", e.what()}});
      }
    }
    emit({{"type", "size_start"}, {"size", size}, {"arms", names}});
    if (slots.empty()) continue;

    std::unique_ptr<L2Flusher> flusher;
    bool any_cuda = std::any_of(slots.begin(), slots.end(), [](const Slot& s) {
      return s.arm->identity.device == Device::cuda;
    });
    if (any_cuda && pol.l2 == TimingPolicy::L2::flush)
      flusher = std::make_unique<L2Flusher>(Device::cuda);

    std::mt19937_64 rng(spec.qualification.seed + static_cast<std::uint64_t>(size));
    std::vector<std::size_t> order(slots.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto t0 = clock_type::now();
    int round = 0;
    std::string stopped_by;
    for (;;) {
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t i : order) {
        Slot& s = slots[i];
        if (flusher && s.arm->identity.device == Device::cuda) flusher->flush(s.stream->handle());
        double secs = s.timer->time([&] { s.call(); });
        s.samples.push_back(secs);
        emit({{"type", "round"},
              {"arm", s.arm->identity.name},
              {"size", size},
              {"mode", "single"},
              {"round", round},
              {"seconds", secs}});
      }
      ++round;
      double elapsed = std::chrono::duration<double>(clock_type::now() - t0).count();
      if (round < pol.min_rounds) continue;
      if (ci_narrow(slots, spec.decision.min_speedup - 1.0))
        stopped_by = "confidence";
      else if (round >= pol.max_rounds)
        stopped_by = "max_rounds";
      else if (elapsed >= pol.max_seconds)
        stopped_by = "max_seconds";
      if (!stopped_by.empty()) break;
    }
    emit({{"type", "size_end"},
          {"size", size},
          {"rounds", round},
          {"stopped_by", stopped_by},
          {"elapsed_s", std::chrono::duration<double>(clock_type::now() - t0).count()}});

    // What the timing loop produced must still be right.
    const std::int64_t n = c.numel();
    std::vector<unsigned char> want(static_cast<std::size_t>(n) * dtype_size(spec.op.dtype));
    TensorView out = TensorView::contiguous_1d(want.data(), n, spec.op.dtype, Device::cpu);
    eval_reference(spec.op.semantics, slots.front().tensors->pristine_input_views(), out);
    for (Slot& s : slots) recheck(s, spec, want, emit, size);
  }
}

}  // namespace kq
