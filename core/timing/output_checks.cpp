#include "timing/output_checks.hpp"

#include "qualify/case_checks.hpp"
#include "qualify/compare.hpp"

namespace kq {

namespace {
constexpr int kBlock = 8;
}

CheckSchedule::CheckSchedule(std::uint64_t seed) : rng_(seed) {
  pick_ = static_cast<int>(rng_() % kBlock);
}

bool CheckSchedule::next() {
  const bool checked = position_ == pick_;
  if (++position_ == kBlock) {
    position_ = 0;
    pick_ = static_cast<int>(rng_() % kBlock);
  }
  return checked;
}

namespace {

CaseTensors::Finding surroundings(const CaseTensors& t, HostBytes& scratch,
                                  const void* want_on_device) {
#if KQ_HAVE_CUDA
  if (want_on_device) return device_guard_finding(t);
#endif
  (void)want_on_device;
  t.download_output(scratch);
  return t.check_output_surroundings(scratch.data(), 0);
}

CaseTensors::Mismatch mismatch(const CaseTensors& t, const Spec& spec, const HostBytes& want,
                               const HostBytes& scratch, const void* want_on_device, void* stream) {
#if KQ_HAVE_CUDA
  if (want_on_device)
    return device_mismatch(t, t.output_view().data, want_on_device, want.data(), spec.op.compare,
                           stream);
#endif
  (void)want_on_device, (void)stream;
  return host_mismatch(t, scratch.data(), want.data(), spec.op.compare);
}

}  // namespace

OutputFinding check_timed_output(const CaseTensors& t, const Spec& spec, const HostBytes& want,
                                 HostBytes& scratch, const void* want_on_device, void* stream) {
  OutputFinding f;
  // Timed outputs are contiguous: the surroundings are the guard zones alone.
  if (auto s = surroundings(t, scratch, want_on_device); !s.check.empty()) {
    f.ok = false;
    f.message = s.message;
    return f;
  }
  const DType dt = spec.op.dtype;
  const CaseTensors::Mismatch m = mismatch(t, spec, want, scratch, want_on_device, stream);
  if (m.count == 0) return f;
  f.ok = false;
  f.index = m.index;
  f.expected = describe_bits(dt, m.want_bits);
  f.got = describe_bits(dt, m.got_bits);
  f.message = std::to_string(m.count) + " of " + std::to_string(want.size() / dtype_size(dt)) +
              " elements wrong; first at index " + std::to_string(m.index) + ": expected " +
              f.expected + ", got " + f.got;
  return f;
}

}  // namespace kq
