#include "timing/output_checks.hpp"

#include <cstring>

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

// The one output checked where it lies: its guard zones, then its elements.
OutputFinding device_finding(const CaseTensors& t, const OutputRule& rule, const HostBytes& want,
                             const ReferenceCopy& reference, void* stream) {
#if KQ_HAVE_CUDA
  if (auto s = device_guard_finding(t); !s.check.empty()) return {false, s.message, -1, {}, {}};
  const void* got = t.output_view().data;
  const devcheck::BoundRule bound{rule.bound_scale, rule.bound_ulps};
  const devcheck::Scan s = reference.compare(got, t.output_view().numel(), rule.rule,
                                             rule.by_bound() ? &bound : nullptr, stream);
  if (s.count > 0) return mismatch_finding(t, scan_mismatch(t, s, got, want.data(), stream));
#else
  (void)t, (void)rule, (void)want, (void)reference, (void)stream;
#endif
  return {};
}

}  // namespace

OutputFinding mismatch_finding(const CaseTensors& t, const CaseTensors::Mismatch& m) {
  OutputFinding f;
  const DType dt = t.dtype(m.output);
  f.ok = false;
  f.index = m.index;
  f.expected = describe_bits(dt, m.want_bits);
  f.got = describe_bits(dt, m.got_bits);
  f.message = mismatch_text(t, m) + ": " + describe_mismatch(dt, m.want_bits, m.got_bits);
  return f;
}

OutputFinding check_timed_output(const CaseTensors& t, const std::vector<OutputRule>& rules,
                                 const std::vector<HostBytes>& want,
                                 const std::vector<std::vector<double>>& bounds, HostBytes& scratch,
                                 const ReferenceCopy* on_device, void* stream,
                                 const std::vector<std::vector<std::size_t>>& unknown) {
  // Device checks take the one output, never sampled.
  if (on_device) return device_finding(t, rules[0], want[0], *on_device, stream);
  HostBytes accepted;  // want[o] with the output's own bits at its unknown elements
  for (std::size_t o = 0; o < t.outputs(); ++o) {
    t.download_output(scratch, o);
    // Timed outputs are contiguous: the surroundings are the guard zones alone.
    if (auto s = t.check_output_surroundings(scratch.data(), 0, o); !s.check.empty())
      return {false, s.message, -1, {}, {}};
    const double* bound = o < bounds.size() && !bounds[o].empty() ? bounds[o].data() : nullptr;
    const unsigned char* w = want[o].data();
    if (o < unknown.size() && !unknown[o].empty()) {
      accepted.assign(want[o].begin(), want[o].end());
      const std::size_t es = dtype_size(t.dtype(o));
      for (std::size_t at : unknown[o]) {
        const auto i = rules[o].sampled() ? (*rules[o].samples)[at] : static_cast<std::int64_t>(at);
        std::memcpy(accepted.data() + at * es, scratch.data() + t.output_byte(i, o), es);
      }
      w = accepted.data();  // equal bits match under every rule
    }
    const CaseTensors::Mismatch m = host_mismatch(t, scratch.data(), w, rules[o], bound, o);
    if (m.count > 0) return mismatch_finding(t, m);
  }
  return {};
}

}  // namespace kq
