#include "timing/slot.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "device/cuda_check.hpp"
#include "plugins/guarded_call.hpp"

namespace kq {
namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
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

// Buffer sets for one arm: enough to exceed three times the cache when rotating; with the L2
// flushed, four where they fit in 256 MiB together, so that a small call's time is the mean of
// four placements in memory rather than one process's draw (the same arm in two processes read
// 0.1 to 0.4 us apart at 4 us a call on the H200, steadily within each); else one.
std::size_t set_count(const Spec& spec, double per_set, Device d) {
  if (spec.timing.l2 == TimingPolicy::L2::flush) return 4 * per_set <= 256.0 * (1 << 20) ? 4 : 1;
  if (spec.timing.l2 != TimingPolicy::L2::rotate) return 1;
  const double want = 3.0 * static_cast<double>(cache_bytes(d)) / per_set;
  return std::clamp<std::size_t>(static_cast<std::size_t>(want) + 1, 1, 4096);
}

std::uint64_t name_hash(const std::string& s) { return std::hash<std::string>{}(s); }

void capture_graph(Slot& s, int launches, const Emit& emit, std::int64_t size) {
  auto skip = [&](const std::string& why) { emit(rec::ArmSkip{s.name(), size, why, "graph"}); };
  try {
    s.graph = std::make_unique<GraphReplay>(
        s.stream->handle(), [&] { s.call(s.graph_set()); }, launches);
  } catch (const std::exception& e) {
    rethrow_if_sticky(e);
    skip(e.what());
    return;
  }
  emit(rec::GraphInfo{s.name(), size, s.graph->launches(), s.graph->kernel_nodes(),
                      s.graph->work_nodes()});
}

}  // namespace

void Slot::call(CaseTensors& t) {
  throw_unless_ok(arm->arm->run(t.input_views(), t.output_views(), stream->handle()), "run()");
}

void Slot::repoison(CaseTensors& t) {
  poison ^= 1;
  t.poison_output_data(poison, stream->handle());
}

Slot make_slot(const TimedArm& a, const Spec& spec, const TimedPoint& p, bool graph_mode,
               const std::shared_ptr<Stream>& cuda_stream, std::uint64_t check_seed,
               const Emit& emit) {
  const Case& c = p.c;
  Slot s;
  s.arm = &a;
  s.stream =
      a.identity.device == Device::cuda ? cuda_stream : std::make_shared<Stream>(Device::cpu);
  s.single_checks = CheckSchedule(check_seed ^ name_hash(a.identity.name + "/single"));
  s.graph_checks = CheckSchedule(check_seed ^ name_hash(a.identity.name + "/graph"));
  const std::size_t n_sets = set_count(spec, p.bytes, a.identity.device);
  for (std::size_t k = 0; k < n_sets; ++k) {
    auto t = std::make_unique<CaseTensors>(spec, c, a.identity.device);
    t->load_inputs(c, 0);
    t->poison_output(0);
    Problem p{&spec.op, t->input_views(), t->output_views(), s.stream->handle()};
    throw_unless_ok(a.arm->prepare(p), "prepare()");
    s.sets.push_back(std::move(t));
  }
  s.timer = std::make_unique<SampleTimer>(a.identity.device, s.stream->handle(),
                                          spec.timing.blocking_kernel);
  // Warm up by time, not by count: compiles, caches and clocks settle.
  auto t0 = clock_type::now();
  int calls = 0;
  do {
    s.call(s.take_set());
    ++calls;
    s.stream->synchronize("warm-up");
  } while (since(t0) * 1e3 < spec.timing.warmup_ms);
  s.warmup_call_s = since(t0) / calls;
  if (s.timer->holding()) {
    // A call that waits for the GPU before returning cannot be enqueued behind a held stream:
    // it would wait out every hold. One held call tells.
    s.timer->time([&] { s.call(s.take_set()); });
    if (!s.timer->last_held()) {
      s.timer->stop_holding();
      emit(rec::ArmNote{a.identity.name, p.size,
                        "its call waits for the GPU before returning (a held stream timed out), "
                        "so it is timed without the blocking kernel: its samples include the "
                        "host's enqueue"});
    }
  }
  if (graph_mode && s.cuda()) {
    // Enough launches for the replay to run well past its own launch: about 20 ms, 10 to 200.
    const double per_call = since(t0) / calls;
    const int launches = std::clamp(static_cast<int>(0.02 / std::max(per_call, 1e-7)), 10, 200);
    capture_graph(s, launches, emit, p.size);
  }
  // Every sample starts on a poisoned output.
  for (auto& t : s.sets) s.repoison(*t);
  s.stream->synchronize("poisoning the outputs");
  s.next_set = 0;
  return s;
}

}  // namespace kq
