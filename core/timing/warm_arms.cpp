#include "timing/warm_arms.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <set>
#include <thread>

#include "device/cuda_check.hpp"
#include "device/device_state.hpp"
#include "device/stream.hpp"
#include "plan/timed_points.hpp"
#include "plugins/guarded_call.hpp"
#include "qualify/big_case_lock.hpp"
#include "qualify/case_tensors.hpp"

namespace kq {
namespace {

using clock_type = std::chrono::steady_clock;

// One point's tensors on one device, made on first use and shared by that device's arms.
class PointTensors {
 public:
  PointTensors(const Spec& spec, const TimedPoint& p) : spec_(spec), p_(p) {}
  CaseTensors& on(Device d) {
    auto& t = d == Device::cuda ? cuda_ : cpu_;
    if (!t) {
      t = std::make_unique<CaseTensors>(spec_, p_.c, d);
      t->load_inputs(p_.c, 0);
      t->poison_output(0);
    }
    return *t;
  }

 private:
  const Spec& spec_;
  const TimedPoint& p_;
  std::unique_ptr<CaseTensors> cuda_, cpu_;
};

struct LaneOptions {
  bool any_cuda = false;        // in the worker: CPU arms are then held to the call budget
  bool cpu_beside_cuda = true;  // false: no CPU arm where there are CUDA ones (--quick)
  bool check_device = true;     // after every CUDA call, the device as kq left it
};

// Every arm of `arms` called at every point, one after another, on a stream of the lane's own.
// Returns the calls made; adds to `changed` the arms whose call changed the device.
int warm_lane(const std::vector<const TimedArm*>& arms, const Spec& spec, const LaneOptions& o,
              const std::function<void()>& alive, std::map<std::string, std::string>& changed) {
  if (arms.empty()) return 0;
  const bool lane_cuda = std::any_of(arms.begin(), arms.end(), [](const TimedArm* a) {
    return a->identity.device == Device::cuda;
  });
  std::unique_ptr<Stream> cuda_stream;
  if (lane_cuda) cuda_stream = std::make_unique<Stream>(Device::cuda);
  const Stream cpu_stream(Device::cpu);
  std::set<std::string> given_up;
  std::map<std::string, double> cpu_rate;  // CPU arm -> seconds a byte, from its last call
  int calls = 0;
  for (const TimedPoint& p : timed_points(spec, spec.timing.sizes)) {
    // A big point's tensors take the device's turn with qualification's big cases: side by side
    // on an 80 GB GPU they ran out of memory, and an arm was rejected for what its neighbours
    // held. The tensors go before the turn does.
    std::unique_ptr<BigCaseLock> turn;
    if (lane_cuda && p.c.numel() > kBigCaseElements)
      turn = std::make_unique<BigCaseLock>(Device::cuda, alive);
    PointTensors tensors(spec, p);
    for (const TimedArm* a : arms) {
      const std::string& name = a->identity.name;
      const bool cuda = a->identity.device == Device::cuda;
      if (given_up.count(name)) continue;
      if (!cuda && o.any_cuda) {
        if (!o.cpu_beside_cuda) continue;
        const double budget = spec.timing.cpu_call_budget_s;
        if (auto r = cpu_rate.find(name);
            budget > 0 && r != cpu_rate.end() && r->second * p.bytes > budget)
          continue;
      }
      alive();
      try {
        CaseTensors& t = tensors.on(a->identity.device);
        const Stream& stream = cuda ? *cuda_stream : cpu_stream;
        Problem problem{&spec.op, t.input_views(), t.output_views(), stream.handle()};
        throw_unless_ok(a->arm->prepare(problem), "prepare()");
        auto call = [&] {
          const auto t0 = clock_type::now();
          throw_unless_ok(a->arm->run(t.input_views(), t.output_views(), stream.handle()), "run()");
          stream.synchronize("a first call");
          ++calls;
          return std::chrono::duration<double>(clock_type::now() - t0).count();
        };
        call();
        // A CPU arm's rate from a second call: the first may have compiled.
        if (!cuda) cpu_rate[name] = call() / std::max(p.bytes, 1.0);
        if (!cuda || !o.check_device) continue;
        if (std::string c = check_device_state(stream.handle()); !c.empty())
          changed.emplace(name, c);
      } catch (const std::exception& e) {
        rethrow_if_sticky(e);
        given_up.insert(name);
      }
    }
  }
  // Unchecked calls: whatever they changed is put back now, and said.
  if (!o.check_device && cuda_stream)
    if (std::string c = check_device_state(cuda_stream->handle()); !c.empty())
      changed.emplace("", c);
  return calls;
}

}  // namespace

WarmResult warm_arms(const std::vector<TimedArm>& arms, const Spec& spec, bool cpu_beside_cuda,
                     const std::function<void()>& alive) {
  LaneOptions o;
  o.any_cuda = std::any_of(arms.begin(), arms.end(),
                           [](const TimedArm& a) { return a.identity.device == Device::cuda; });
  o.cpu_beside_cuda = cpu_beside_cuda;
  if (o.any_cuda) expected_device_state();  // read before any arm's first call here

  std::vector<const TimedArm*> all, from_files, plugins;
  for (const TimedArm& a : arms) {
    all.push_back(&a);
    (a.identity.origin.empty() ? plugins : from_files).push_back(&a);
  }
  WarmResult out;
  if (o.any_cuda && !from_files.empty() && !plugins.empty()) {
    // Two lanes side by side: the arms from files (one interpreter, one at a time: they compile
    // in Python) here, the plugins' in a thread (cuDNN's plan searches, NVRTC). A change to the
    // device cannot be told apart there: it is put back after both, and all the calls are made
    // again one after another, each checked, to find whose it was.
    o.check_device = false;
    std::map<std::string, std::string> changed;
    int plugin_calls = 0;
    std::exception_ptr failure;
    std::thread lane([&] {
      try {
        plugin_calls = warm_lane(plugins, spec, o, alive, changed);
      } catch (...) {
        failure = std::current_exception();
      }
    });
    std::map<std::string, std::string> changed_here;
    try {
      out.calls = warm_lane(from_files, spec, o, alive, changed_here);
    } catch (...) {
      lane.join();
      throw;
    }
    lane.join();
    if (failure) std::rethrow_exception(failure);
    out.calls += plugin_calls;
    if (changed.empty() && changed_here.empty()) return out;
    o.check_device = true;
  }
  out.calls += warm_lane(all, spec, o, alive, out.changed_device);
  return out;
}

}  // namespace kq
