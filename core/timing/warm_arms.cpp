#include "timing/warm_arms.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>

#include "device/cuda_check.hpp"
#include "device/device_state.hpp"
#include "device/stream.hpp"
#include "plan/timed_points.hpp"
#include "plugins/guarded_call.hpp"
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

}  // namespace

WarmResult warm_arms(const std::vector<TimedArm>& arms, const Spec& spec, bool cpu_beside_cuda,
                     const std::function<void()>& alive) {
  WarmResult out;
  const bool any_cuda = std::any_of(arms.begin(), arms.end(), [](const TimedArm& a) {
    return a.identity.device == Device::cuda;
  });
  std::shared_ptr<Stream> cuda_stream;
  if (any_cuda) {
    cuda_stream = std::make_shared<Stream>(Device::cuda);
    expected_device_state();  // read before any arm's first call here
  }
  const Stream cpu_stream(Device::cpu);
  std::set<std::string> given_up;
  std::map<std::string, double> cpu_rate;  // CPU arm -> seconds a byte, from its last call
  for (const TimedPoint& p : timed_points(spec, spec.timing.sizes)) {
    PointTensors tensors(spec, p);
    for (const TimedArm& a : arms) {
      const std::string& name = a.identity.name;
      const bool cuda = a.identity.device == Device::cuda;
      if (given_up.count(name)) continue;
      if (!cuda && any_cuda) {
        if (!cpu_beside_cuda) continue;
        const double budget = spec.timing.cpu_call_budget_s;
        if (auto r = cpu_rate.find(name);
            budget > 0 && r != cpu_rate.end() && r->second * p.bytes > budget)
          continue;
      }
      alive();
      try {
        CaseTensors& t = tensors.on(a.identity.device);
        const Stream& stream = cuda ? *cuda_stream : cpu_stream;
        Problem problem{&spec.op, t.input_views(), t.output_views(), stream.handle()};
        throw_unless_ok(a.arm->prepare(problem), "prepare()");
        auto call = [&] {
          const auto t0 = clock_type::now();
          throw_unless_ok(a.arm->run(t.input_views(), t.output_views(), stream.handle()), "run()");
          stream.synchronize("a first call");
          ++out.calls;
          return std::chrono::duration<double>(clock_type::now() - t0).count();
        };
        call();
        // A CPU arm's rate from a second call: the first may have compiled.
        if (!cuda) cpu_rate[name] = call() / std::max(p.bytes, 1.0);
        if (!cuda) continue;
        if (std::string changed = check_device_state(stream.handle()); !changed.empty())
          out.changed_device.emplace(name, changed);
      } catch (const std::exception& e) {
        rethrow_if_sticky(e);
        given_up.insert(name);
      }
    }
  }
  return out;
}

}  // namespace kq
