#include "timing/time_arms.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <random>

#include "device/cuda_check.hpp"
#include "device/stream.hpp"
#include "expr/reference.hpp"
#include "qualify/case_tensors.hpp"
#include "qualify/compare.hpp"
#include "timing/clock_probe.hpp"
#include "timing/graph_replay.hpp"
#include "timing/kernel_profile.hpp"
#include "timing/stopping.hpp"
#include "timing/timer.hpp"

namespace kq {
namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// One arm set up for one size: its stream (one for all CUDA arms and the light copy of a
// size), buffer sets (several when the L2 policy rotates), timer and, for CUDA arms in graph
// mode, the captured replay.
struct Slot {
  const TimedArm* arm = nullptr;
  std::shared_ptr<Stream> stream;
  std::vector<std::unique_ptr<CaseTensors>> sets;
  std::size_t next_set = 0;
  std::unique_ptr<SampleTimer> timer;
  std::unique_ptr<GraphReplay> graph;
  std::vector<double> single, graphed;

  bool cuda() const { return arm->identity.device == Device::cuda; }
  CaseTensors& current() { return *sets[next_set % sets.size()]; }

  void call(CaseTensors& t) {
    Status st = arm->arm->run(t.input_views(), t.output_views(), stream->handle());
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

// The cache that "rotate" must defeat: the device's L2, or the host's last-level cache.
std::size_t cache_bytes(Device d) {
#if KQ_HAVE_CUDA
  if (d == Device::cuda) {
    int dev = 0, l2 = 0;
    cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
    cuda_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "L2 size");
    return static_cast<std::size_t>(l2);
  }
#endif
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? static_cast<std::size_t>(l3) : std::size_t{32} << 20;
}

// Buffer sets for one arm: one, or enough to exceed three times the cache when rotating.
std::size_t set_count(const Spec& spec, std::int64_t size, Device d) {
  if (spec.timing.l2 != TimingPolicy::L2::rotate) return 1;
  const double per_set =
      static_cast<double>((spec.op.inputs.size() + 1) * dtype_size(spec.op.dtype)) *
      static_cast<double>(size);
  const double want = 3.0 * static_cast<double>(cache_bytes(d)) / per_set;
  return std::clamp<std::size_t>(static_cast<std::size_t>(want) + 1, 1, 4096);
}

void recheck(Slot& s, const Spec& spec, const std::vector<unsigned char>& want, const Emit& emit,
             std::int64_t size) {
  nlohmann::json r = {{"type", "recheck"}, {"arm", s.arm->identity.name}, {"size", size}};
  std::int64_t bad = 0;
  std::string first;
  for (auto& t : s.sets) {
    auto got = t->download_output();
    auto m = t->compare_output(got, want.data(), [&](std::uint64_t w, std::uint64_t g) {
      return element_matches(spec.compare, spec.op.dtype, w, g);
    });
    if (m.count && first.empty())
      first = "first at " + std::to_string(m.index) + ": expected " +
              describe_bits(spec.op.dtype, m.want_bits) + ", got " +
              describe_bits(spec.op.dtype, m.got_bits);
    bad += m.count;
  }
  r["ok"] = bad == 0;
  if (bad) r["message"] = std::to_string(bad) + " elements wrong after the timing loop; " + first;
  emit(r);
}

// Sets up one arm for one size: buffers, prepare() on each set, warm-up by time, the graph.
Slot make_slot(const TimedArm& a, const Spec& spec, const Case& c, bool graph_mode,
               const std::shared_ptr<Stream>& cuda_stream, const Emit& emit) {
  Slot s;
  s.arm = &a;
  s.stream =
      a.identity.device == Device::cuda ? cuda_stream : std::make_shared<Stream>(Device::cpu);
  const std::size_t n_sets = set_count(spec, c.numel(), a.identity.device);
  for (std::size_t k = 0; k < n_sets; ++k) {
    auto t = std::make_unique<CaseTensors>(c, spec.op.inputs, spec.op.outputs[0].name,
                                           spec.op.dtype, a.identity.device);
    t->load_inputs(c, 0);
    t->poison_output(0);
    Problem p{&spec.op, t->input_views(), t->output_views()};
    Status st = a.arm->prepare(p);
    if (!st.is_ok())
      throw std::runtime_error("prepare() returned " + std::string(to_string(st.code())) + ": " +
                               st.message());
    s.sets.push_back(std::move(t));
  }
  s.timer = std::make_unique<SampleTimer>(a.identity.device, s.stream->handle(),
                                          spec.timing.blocking_kernel);
  // Warm up by time, not by count: compiles, caches and clocks settle.
  auto t0 = clock_type::now();
  int calls = 0;
  do {
    s.call(s.current());
    ++s.next_set;
    ++calls;
    s.stream->synchronize("warm-up");
  } while (since(t0) * 1e3 < spec.timing.warmup_ms);
  if (s.timer->holding()) {
    // A call that waits for the GPU before returning cannot be enqueued behind a held stream:
    // it would wait out every hold. One held call tells.
    s.timer->time([&] { s.call(s.current()); });
    ++s.next_set;
    if (!s.timer->last_held()) {
      s.timer->stop_holding();
      emit({{"type", "arm_note"},
            {"arm", a.identity.name},
            {"size", c.numel()},
            {"note",
             "its call waits for the GPU before returning (a held stream timed out), so it is "
             "timed without the blocking kernel: its samples include the host's enqueue"}});
    }
  }
  if (graph_mode && s.cuda()) {
    // Enough launches for the replay to run well past its own launch: about 20 ms, 10 to 200.
    const double per_call = since(t0) / calls;
    const int launches = std::clamp(static_cast<int>(0.02 / std::max(per_call, 1e-7)), 10, 200);
    try {
      s.graph = std::make_unique<GraphReplay>(
          s.stream->handle(), [&] { s.call(*s.sets[0]); }, launches);
    } catch (const CudaError& e) {
      if (e.sticky()) throw;
      emit({{"type", "arm_skip"},
            {"arm", a.identity.name},
            {"size", c.numel()},
            {"mode", "graph"},
            {"reason", e.what()}});
    } catch (const std::exception& e) {
      emit({{"type", "arm_skip"},
            {"arm", a.identity.name},
            {"size", c.numel()},
            {"mode", "graph"},
            {"reason", e.what()}});
    }
  }
  return s;
}

// The speed of light: a device-to-device copy moving as many bytes as one call of the op.
struct Light {
  DeviceMemory src, dst;
  std::shared_ptr<Stream> stream;
  std::unique_ptr<SampleTimer> timer;
  std::size_t bytes = 0;  // copied; read + written = 2 * bytes
};

std::unique_ptr<Light> make_light(const Spec& spec, std::int64_t size,
                                  const std::shared_ptr<Stream>& stream) {
  auto l = std::make_unique<Light>();
  const std::size_t moved =
      (spec.op.inputs.size() + 1) * dtype_size(spec.op.dtype) * static_cast<std::size_t>(size);
  l->bytes = std::max<std::size_t>(moved / 2, 256);
  l->src = DeviceMemory(Device::cuda, l->bytes);
  l->dst = DeviceMemory(Device::cuda, l->bytes);
  l->src.fill_byte(0x3c);
  l->stream = stream;
  l->timer =
      std::make_unique<SampleTimer>(Device::cuda, l->stream->handle(), spec.timing.blocking_kernel);
  return l;
}

double time_light(Light& l) {
#if KQ_HAVE_CUDA
  return l.timer->time([&] {
    cuda_check(cudaMemcpyAsync(l.dst.data(), l.src.data(), l.bytes, cudaMemcpyDeviceToDevice,
                               static_cast<cudaStream_t>(l.stream->handle())),
               "the device copy");
  });
#else
  (void)l;
  return 0;
#endif
}

}  // namespace

void time_arms(const std::vector<TimedArm>& arms, const Spec& spec, const Emit& emit) {
  const TimingPolicy& pol = spec.timing;
  const bool graph_mode = std::find(pol.modes.begin(), pol.modes.end(), "graph") != pol.modes.end();
  for (std::int64_t size : pol.sizes) {
    Case c = timing_case(spec, size);
    // Every CUDA arm and the light copy on one stream, one sample at a time.
    std::shared_ptr<Stream> cuda_stream;
    if (std::any_of(arms.begin(), arms.end(),
                    [](const TimedArm& a) { return a.identity.device == Device::cuda; }))
      cuda_stream = std::make_shared<Stream>(Device::cuda);
    std::vector<Slot> slots;
    nlohmann::json names = nlohmann::json::array();
    for (const TimedArm& a : arms) {
      try {
        slots.push_back(make_slot(a, spec, c, graph_mode, cuda_stream, emit));
        names.push_back(a.identity.name);
      } catch (const CudaError& e) {
        emit(
            {{"type", "arm_skip"}, {"arm", a.identity.name}, {"size", size}, {"reason", e.what()}});
        if (e.sticky()) throw;
      } catch (const std::exception& e) {
        emit(
            {{"type", "arm_skip"}, {"arm", a.identity.name}, {"size", size}, {"reason", e.what()}});
      }
    }
    emit({{"type", "size_start"},
          {"size", size},
          {"arms", names},
          {"l2", pol.l2 == TimingPolicy::L2::flush    ? "flush"
                 : pol.l2 == TimingPolicy::L2::rotate ? "rotate"
                                                      : "warm"}});
    if (slots.empty()) continue;

    const bool any_cuda =
        std::any_of(slots.begin(), slots.end(), [](const Slot& s) { return s.cuda(); });
    std::unique_ptr<L2Flusher> flusher;
    if (any_cuda && pol.l2 == TimingPolicy::L2::flush)
      flusher = std::make_unique<L2Flusher>(Device::cuda);
    std::unique_ptr<ClockProbe> probe;
    std::unique_ptr<Light> light;
    if (any_cuda) {
      probe = std::make_unique<ClockProbe>();
      light = make_light(spec, size, cuda_stream);
    }

    std::mt19937_64 rng(spec.qualification.seed + static_cast<std::uint64_t>(size));
    // Shuffled every round: the arms and, on CUDA, the light copy, single and graph samples.
    struct Step {
      int slot;
      int kind;
    };  // kind 0 single, 1 graph, 2 light
    std::vector<Step> steps;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      steps.push_back({static_cast<int>(i), 0});
      if (slots[i].graph) steps.push_back({static_cast<int>(i), 1});
    }
    if (light) steps.push_back({-1, 2});
    auto t0 = clock_type::now();
    int round = 0;
    std::string stopped_by;
    while (stopped_by.empty()) {
      std::shuffle(steps.begin(), steps.end(), rng);
      for (const Step& st : steps) {
        const bool on_gpu = st.kind == 2 || slots[static_cast<std::size_t>(st.slot)].cuda();
        void* stream = st.kind == 2 ? light->stream->handle()
                                    : slots[static_cast<std::size_t>(st.slot)].stream->handle();
        if (flusher && on_gpu) flusher->flush(stream);
        nlohmann::json r;
        if (st.kind == 2) {
          r = {{"type", "light"},
               {"size", size},
               {"round", round},
               {"seconds", time_light(*light)},
               {"bytes", 2 * light->bytes}};
          if (light->timer->holding()) r["held"] = light->timer->last_held();
        } else {
          Slot& s = slots[static_cast<std::size_t>(st.slot)];
          double secs = 0, host = 0;
          if (st.kind == 0) {
            CaseTensors& t = s.current();
            ++s.next_set;
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
          r = {{"type", "round"}, {"arm", s.arm->identity.name},
               {"size", size},    {"mode", st.kind == 0 ? "single" : "graph"},
               {"round", round},  {"seconds", secs}};
          if (st.kind == 0 && s.cuda()) r["host_seconds"] = host;  // the enqueue alone
          // A hold that timed out (an enqueue slower than its timeout) let the GPU start early.
          if (s.timer->holding()) r["held"] = s.timer->last_held();
          if (st.kind == 1) r["launches"] = s.graph->launches();
        }
        if (probe && on_gpu) {
          if (double mhz = probe->measure_mhz(stream); mhz > 0) r["sm_clock_mhz"] = mhz;
        }
        emit(r);
      }
      ++round;
      std::map<std::string, std::vector<double>> by_arm;
      for (const Slot& s : slots) by_arm[s.arm->identity.name] = s.single;
      stopped_by = stop_reason(by_arm, spec, round, since(t0));
    }
    emit({{"type", "size_end"},
          {"size", size},
          {"rounds", round},
          {"stopped_by", stopped_by},
          {"elapsed_s", since(t0)}});

    // What the timing loop produced must still be right.
    const std::int64_t n = c.numel();
    std::vector<unsigned char> want(static_cast<std::size_t>(n) * dtype_size(spec.op.dtype));
    TensorView out = TensorView::contiguous_1d(want.data(), n, spec.op.dtype, Device::cpu);
    eval_reference(spec.op.semantics, slots.front().sets.front()->pristine_input_views(), out);
    for (Slot& s : slots) recheck(s, spec, want, emit, size);

    // What one call launches (CUPTI), from an extra call after the timed samples and their
    // recheck; CUPTI is detached again before anything else is timed.
    for (Slot& s : slots) {
      if (!s.cuda()) continue;
      nlohmann::json prof = profile_call(s.stream->handle(), [&] { s.call(*s.sets[0]); });
      prof["type"] = "profile";
      prof["arm"] = s.arm->identity.name;
      prof["size"] = size;
      emit(prof);
    }
    if (std::string why = detach_profiler(); !why.empty())
      emit({{"type", "profiler_attached"}, {"size", size}, {"reason", why}});
  }
}

}  // namespace kq
