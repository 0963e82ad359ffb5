#include "timing/output_checks.hpp"

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

OutputFinding check_timed_output(const CaseTensors& t, const Spec& spec,
                                 const std::vector<unsigned char>& want,
                                 std::vector<unsigned char>& scratch) {
  OutputFinding f;
  t.download_output(scratch);
  // Timed outputs are contiguous: the surroundings are the guard zones alone.
  if (auto s = t.check_output_surroundings(scratch.data(), 0); !s.check.empty()) {
    f.ok = false;
    f.message = s.message;
    return f;
  }
  const DType dt = spec.op.dtype;
  auto m = t.compare_output(scratch.data(), want.data(), [&](std::uint64_t w, std::uint64_t g) {
    return element_matches(spec.op.compare, dt, w, g);
  });
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
