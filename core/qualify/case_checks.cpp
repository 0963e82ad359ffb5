#include "qualify/case_checks.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "plan/case_shapes.hpp"
#include "qualify/compare.hpp"
#include "qualify/reference_samples.hpp"
#include "util/env_number.hpp"
#if KQ_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "device/check_kernels.hpp"
#include "device/cuda_check.hpp"
#endif

namespace kq {
namespace {

// The output is copied (downloaded, for a CUDA arm) the moment run() has returned, and checked
// in the copy: an arm that is still writing then (work left on a thread or another stream)
// is judged on what it had written. The first run's copy is kept; later runs reuse one buffer,
// so that a large case touches no fresh host pages after its first run. Both are kq's host
// allocations (huge pages, not zero-filled), filled on every core.
class HostChecks final : public CaseChecks {
 public:
  HostChecks(const CaseTensors& t, const std::vector<OutputRule>& rules)
      : t_(t), rules_(rules), first_(t.outputs()), later_(t.outputs()), latest_(t.outputs()) {}

  void take(bool first) override {
    for (std::size_t o = 0; o < t_.outputs(); ++o) {
      DeviceMemory& into = first ? first_[o] : later_[o];
      const DeviceMemory& out = t_.output_owner(o).memory;
      if (into.size() != out.size()) into = DeviceMemory(Device::cpu, out.size());
      out.download(into.data(), 0, out.size());
      latest_[o] = bytes(into);
    }
  }
  std::string inputs_unchanged() override { return t_.check_inputs_unchanged(); }
  CaseTensors::Finding surroundings(int poison) override {
    for (std::size_t o = 0; o < t_.outputs(); ++o)
      if (auto f = t_.check_output_surroundings(latest_[o], poison, o); !f.check.empty()) return f;
    return {};
  }
  CaseTensors::Mismatch values(std::span<const unsigned char* const> want,
                               std::span<const double* const> bounds, int /*generation*/) override {
    for (std::size_t o = 0; o < t_.outputs(); ++o) {
      const double* bound = o < bounds.size() ? bounds[o] : nullptr;
      if (auto m = host_mismatch(t_, latest_[o], want[o], rules_[o], bound, o); m.count > 0)
        return m;
    }
    return {};
  }
  CaseTensors::Difference differs_from_first() override {
    for (std::size_t o = 0; o < t_.outputs(); ++o)
      if (std::int64_t i = t_.first_difference(bytes(first_[o]), latest_[o], o); i >= 0)
        return {o, i};
    return {};
  }
  const char* where() const override { return "host"; }

 private:
  static const unsigned char* bytes(const DeviceMemory& m) {
    return static_cast<const unsigned char*>(m.data());
  }

  const CaseTensors& t_;
  std::vector<OutputRule> rules_;
  std::vector<DeviceMemory> first_, later_;  // by output
  std::vector<const unsigned char*> latest_;
};

#if KQ_HAVE_CUDA

// The same checks on the device. The output is copied where it lies, at the moment the host's
// checks would download it (so that work the arm left running on another stream is caught
// alike), the first run's copy kept; the inputs' allocations are compared with copies of
// themselves made right after each upload; the reference is uploaded once per generation. The
// copies live in kq's own allocations, which the arm is never shown.
class DeviceChecks final : public CaseChecks {
 public:
  DeviceChecks(const CaseTensors& t, const OutputRule& rule, void* stream)
      : t_(t), rule_(rule), stream_(stream) {
    if (t.outputs() != 1) throw std::logic_error("the device's checks take one output");
    const Device d = Device::cuda;
    for (const CaseTensor& in : t.inputs()) pristine_.emplace_back(d, in.memory.size());
    const std::size_t bytes = data_bytes();
    first_ = DeviceMemory(d, bytes);
    later_ = DeviceMemory(d, bytes);
    want_ = DeviceMemory(d, bytes);
    if (rule.by_bound())
      bounds_ = DeviceMemory(d, static_cast<std::size_t>(t.output_view().numel()) * sizeof(double));
  }

  void inputs_loaded() override {
    for (std::size_t i = 0; i < pristine_.size(); ++i)
      copy(pristine_[i].data(), t_.inputs()[i].memory.data(), pristine_[i].size());
  }
  void take(bool first) override {
    DeviceMemory& into = first ? first_ : later_;
    copy(into.data(), t_.output_view().data, data_bytes());
    latest_ = into.data();
  }
  std::string inputs_unchanged() override {
    for (std::size_t i = 0; i < pristine_.size(); ++i) {
      const DeviceMemory& m = t_.inputs()[i].memory;
      const devcheck::Scan s =
          devcheck::differing_bytes(m.data(), pristine_[i].data(), m.size(), stream_);
      if (s.first < 0) continue;
      unsigned char now = 0;
      m.download(&now, static_cast<std::size_t>(s.first), 1);
      return t_.input_change(i, static_cast<std::size_t>(s.first), now);
    }
    return {};
  }
  CaseTensors::Finding surroundings(int /*poison*/) override { return device_guard_finding(t_); }
  CaseTensors::Mismatch values(std::span<const unsigned char* const> want,
                               std::span<const double* const> bounds, int generation) override {
    if (generation != want_generation_) {
      want_.upload(want[0], 0, data_bytes());
      if (rule_.by_bound()) {
        if (bounds.empty() || !bounds[0])
          throw std::logic_error("output " + t_.output_name(0) +
                                 " is compared by the accumulation bound, and its bounds are "
                                 "missing");
        bounds_.upload(bounds[0], 0, bounds_.size());
      }
      want_generation_ = generation;
    }
    if (!rule_.by_bound())
      return device_mismatch(t_, latest_, want_.data(), want[0], rule_.rule, stream_);
    const devcheck::Scan s = devcheck::compare_bounded(
        latest_, want_.data(), static_cast<const double*>(bounds_.data()), t_.output_view().numel(),
        t_.dtype(), {rule_.bound_scale, rule_.bound_ulps}, stream_);
    return scan_mismatch(t_, s, latest_, want[0], stream_);
  }
  CaseTensors::Difference differs_from_first() override {
    return {0, devcheck::differing_elements(first_.data(), latest_, t_.output_view().numel(),
                                            t_.dtype(), stream_)
                   .first};
  }
  const char* where() const override { return "device"; }

 private:
  std::size_t data_bytes() const {
    return static_cast<std::size_t>(t_.output_view().numel()) * dtype_size(t_.dtype());
  }
  void copy(void* to, const void* from, std::size_t bytes) {
    auto s = static_cast<cudaStream_t>(stream_);
    cuda_check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, s),
               "a device check's copy");
    cuda_check(cudaStreamSynchronize(s), "a device check's copy");
  }

  const CaseTensors& t_;
  OutputRule rule_;
  void* stream_;
  std::vector<DeviceMemory> pristine_;  // each input's allocation as uploaded
  DeviceMemory first_, later_;          // the first run's output and the last one's, dense
  const void* latest_ = nullptr;        // first_ or later_: the output taken last
  DeviceMemory want_;                   // the reference of want_generation_
  DeviceMemory bounds_;                 // its accumulation bounds, where compared by them
  int want_generation_ = -1;
};

#endif

}  // namespace

CaseTensors::Mismatch host_mismatch(const CaseTensors& t, const unsigned char* got,
                                    const unsigned char* want, const CompareRule& rule,
                                    std::size_t o) {
  const DType dt = t.dtype(o);
  return t.compare_output(
      got, want,
      [&](std::int64_t, std::uint64_t w, std::uint64_t g) {
        return element_matches(rule, dt, w, g);
      },
      o);
}

namespace {

// An output sampled above the reference's budget: want and bound hold one element per sample.
CaseTensors::Mismatch sampled_mismatch(const CaseTensors& t, const unsigned char* got,
                                       const unsigned char* want, const OutputRule& rule,
                                       const double* bound, std::size_t o) {
  const DType dt = t.dtype(o);
  const std::size_t es = dtype_size(dt);
  const std::vector<std::int64_t>& samples = *rule.samples;
  CaseTensors::Mismatch m;
  m.output = o;
  m.sampled = static_cast<std::int64_t>(samples.size());
  for (std::size_t k = 0; k < samples.size(); ++k) {
    std::uint64_t w = 0, g = 0;
    std::memcpy(&w, want + k * es, es);
    std::memcpy(&g, got + t.output_byte(samples[k], o), es);
    if (rule.by_bound() ? element_matches(rule, dt, bound[k], w, g)
                        : element_matches(rule.rule, dt, w, g))
      continue;
    if (m.count++ == 0) m.index = samples[k], m.want_bits = w, m.got_bits = g;
  }
  return m;
}

}  // namespace

CaseTensors::Mismatch host_mismatch(const CaseTensors& t, const unsigned char* got,
                                    const unsigned char* want, const OutputRule& rule,
                                    const double* bound, std::size_t o) {
  if (rule.by_bound() && !bound)
    throw std::logic_error("output " + t.output_name(o) +
                           " is compared by the accumulation bound, and its bounds are missing");
  if (rule.sampled()) return sampled_mismatch(t, got, want, rule, bound, o);
  if (!rule.by_bound()) return host_mismatch(t, got, want, rule.rule, o);
  const DType dt = t.dtype(o);
  return t.compare_output(
      got, want,
      [&](std::int64_t i, std::uint64_t w, std::uint64_t g) {
        return element_matches(rule, dt, bound[i], w, g);
      },
      o);
}

bool device_checkable(const CaseTensors& t) {
  return t.outputs() == 1 && t.output_owner().memory.device() == Device::cuda && !t.aliased() &&
         t.output_contiguous();
}

bool checked_on_device(const Spec& spec, const Case& c, Device device, std::int64_t min_elements) {
#if KQ_HAVE_CUDA
  constexpr bool with_cuda = true;
#else
  constexpr bool with_cuda = false;
#endif
  // One output of its own, dense.
  if (!with_cuda || device != Device::cuda || c.alias_input >= 0 || c.outputs.size() != 1)
    return false;
  const std::int64_t least = std::max<std::int64_t>(min_elements, 1);
  if (c.dims.empty()) {  // format 1: the output has the case's shape and the spec's dtype
    const Placement& out = c.outputs[0];
    const bool dense = out.strides.empty() || out.strides == row_major_strides(c.shape);
    return dense && c.numel() >= least;
  }
  // Format 2: a float output compared element by element (by its rule or the accumulation
  // bound), as the device's kernels compare; not at samples (the reference then holds the
  // samples alone), not an integer output (exact on the host).
  if (!spec.shaped || reference_sampled(spec, c)) return false;
  const CaseTensorShape out = case_shapes(spec, c).outputs.at(0);
  const bool dense = out.place.strides.empty() || out.place.strides == row_major_strides(out.shape);
  return !is_integer(out.dtype) && dense && out.numel() >= least;
}

#if KQ_HAVE_CUDA

CaseTensors::Finding device_guard_finding(const CaseTensors& t) {
  // A dense output has no gaps: its guard zones are all there is around it.
  const CaseTensor& o = t.output_owner();
  const std::size_t b = data_begin(o), e = data_end(o);
  std::vector<unsigned char> head(b), tail(o.memory.size() - e);
  if (!head.empty()) o.memory.download(head.data(), 0, head.size());
  if (!tail.empty()) o.memory.download(tail.data(), e, tail.size());
  return t.guard_finding(head.data(), tail.data());
}

CaseTensors::Mismatch device_mismatch(const CaseTensors& t, const void* got,
                                      const void* want_on_device, const unsigned char* want,
                                      const CompareRule& rule, void* stream) {
  const devcheck::Scan s = devcheck::compare_elements(got, want_on_device, t.output_view().numel(),
                                                      t.dtype(), rule, stream);
  return scan_mismatch(t, s, got, want, stream);
}

CaseTensors::Mismatch scan_mismatch(const CaseTensors& t, const devcheck::Scan& s, const void* got,
                                    const unsigned char* want, void* stream) {
  const DType dt = t.dtype();
  CaseTensors::Mismatch m;
  if (s.count == 0) return m;
  m.index = s.first;
  m.count = static_cast<std::int64_t>(s.count);
  const std::size_t es = dtype_size(dt);
  std::memcpy(&m.want_bits, want + static_cast<std::size_t>(s.first) * es, es);
  auto st = static_cast<cudaStream_t>(stream);
  cuda_check(cudaMemcpyAsync(&m.got_bits,
                             static_cast<const char*>(got) + static_cast<std::size_t>(s.first) * es,
                             es, cudaMemcpyDeviceToHost, st),
             "a device check's mismatch");
  cuda_check(cudaStreamSynchronize(st), "a device check's mismatch");
  return m;
}

#endif

std::unique_ptr<CaseChecks> host_case_checks(const CaseTensors& t,
                                             const std::vector<OutputRule>& rules) {
  return std::make_unique<HostChecks>(t, rules);
}

std::unique_ptr<CaseChecks> case_checks(const Spec& spec, const Case& c, const CaseTensors& t,
                                        Device device, const std::vector<OutputRule>& rules,
                                        void* stream, std::int64_t min_elements) {
#if KQ_HAVE_CUDA
  if (checked_on_device(spec, c, device, min_elements)) {
    if (!device_checkable(t))  // the plan's dense output of its own on the device must be so
      throw std::logic_error("case " + c.name +
                             ": planned for the device's checks, but its output tensor is not "
                             "a dense CUDA allocation of its own");
    try {
      return std::make_unique<DeviceChecks>(t, rules.at(0), stream);
    } catch (const CudaError& e) {
      if (e.sticky()) throw;  // else no device memory for the copies: the host's need none
    }
  }
#else
  (void)spec, (void)c, (void)device, (void)stream, (void)min_elements;
#endif
  return host_case_checks(t, rules);
}

std::string mismatch_text(const CaseTensors& t, const CaseTensors::Mismatch& m) {
  const std::string of = t.outputs() > 1 ? "output " + t.output_name(m.output) + ": " : "";
  const std::int64_t numel = t.output_view(m.output).numel();
  const std::string n = std::to_string(numel);
  // An output no larger than the sample count is taken whole: no need to say it was sampled.
  const bool sampled = m.sampled > 0 && m.sampled < numel;
  return of + std::to_string(m.count) + " of " +
         (sampled ? std::to_string(m.sampled) + " sampled elements (of " + n + ")"
                  : n + " elements") +
         " wrong; first at index " + std::to_string(m.index);
}

std::int64_t device_check_min_elements() {
  const std::uint64_t n =
      env_number("KQ_DEVICE_CHECK_MIN_ELEMENTS").value_or(std::uint64_t{1} << 20);
  return static_cast<std::int64_t>(std::min<std::uint64_t>(n, INT64_MAX));
}

}  // namespace kq
