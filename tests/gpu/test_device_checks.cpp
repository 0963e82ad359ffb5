// kq's device-side checks (device/check_kernels.hpp, qualify/case_checks.hpp) against the
// host's, which stay the reference implementation: the element rules over every dtype and rule
// on values chosen to sit on each rule's edges, the byte and element scans, and the findings of
// a whole case (values, guards, inputs, repeats) word for word, format 2's included. Without a
// usable CUDA device the test's main skips, saying why.
#include <doctest/doctest.h>

#ifndef KQ_HAVE_CUDA
TEST_CASE("device checks") { MESSAGE("skipped: no CUDA device (kq was built without CUDA)"); }
#else
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "device/check_kernels.hpp"
#include "device/memory.hpp"
#include "device/reference_copy.hpp"
#include "kq/half.hpp"
#include "plan/plan_cases.hpp"
#include "plan/timed_points.hpp"
#include "qualify/case_checks.hpp"
#include "qualify/case_data.hpp"
#include "qualify/case_tensors.hpp"
#include "qualify/compare.hpp"
#include "record/records.hpp"
#include "spec/spec.hpp"
#include "spec_fixture.hpp"
#include "test_support.hpp"
#include "timing/output_checks.hpp"
#include "timing/size_checks.hpp"

namespace {

using kq::CompareRule;
using kq::DType;

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess); }
  ~Stream() { cudaStreamDestroy(s); }
};

// Bit patterns on the rules' edges: signed zeros, subnormals, the largest finite values,
// infinities, NaNs with several payloads and signs, and ordinary values.
std::vector<std::uint64_t> special_bits(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16: {
      const bool f16 = t == DType::f16;
      return {0x0000,
              0x8000,
              0x0001,
              0x8001,
              0x03ff,
              f16 ? 0x0400u : 0x0080u,
              f16 ? 0x7bffu : 0x7f7fu,
              f16 ? 0x7c00u : 0x7f80u,
              f16 ? 0xfc00u : 0xff80u,
              f16 ? 0x7e00u : 0x7fc0u,
              f16 ? 0x7c01u : 0x7f81u,
              f16 ? 0xfe00u : 0xffc0u,
              0x3c00,
              0x3f80,
              0xbc00,
              0x4248};
    }
    case DType::f32:
      return {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000,
              0x7f7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc00000,
              0x3f800000, 0xbf800000, 0x358637bd, 0x3f800001};
    default:
      return {0x0000000000000000ull, 0x8000000000000000ull, 0x0000000000000001ull,
              0x000fffffffffffffull, 0x0010000000000000ull, 0x7fefffffffffffffull,
              0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7ff8000000000000ull,
              0x7ff0000000000001ull, 0xfff8000000000000ull, 0x3ff0000000000000ull,
              0xbff0000000000000ull, 0x3eb0c6f7a0b5ed8dull};
  }
}

std::uint64_t mask_of(DType t) {
  const std::size_t w = kq::dtype_size(t) * 8;
  return w == 64 ? ~0ull : (1ull << w) - 1;
}

// want/got pairs: each special value against each other, then random values against small
// steps (1 to 4 units in the last place either way, so ulp rules sit on their edge), sign
// flips, relative perturbations near a tolerance's edge, and random bits.
void make_pairs(DType t, std::vector<std::uint64_t>& want, std::vector<std::uint64_t>& got) {
  const auto sp = special_bits(t);
  for (auto w : sp)
    for (auto g : sp) want.push_back(w), got.push_back(g);
  std::mt19937_64 rng(17);
  const std::uint64_t mask = mask_of(t);
  const std::size_t es = kq::dtype_size(t);
  for (int k = 0; k < 200000; ++k) {
    std::uint64_t w = rng() & mask;
    if (k % 7 == 0) w = sp[rng() % sp.size()];
    std::uint64_t g = w;
    switch (rng() % 8) {
      case 0:
        break;
      case 1:
      case 2:
        g = (w + 1 + rng() % 4) & mask;
        break;
      case 3:
        g = (w - 1 - rng() % 4) & mask;
        break;
      case 4:
        g = w ^ (1ull << (es * 8 - 1));
        break;
      case 5: {  // |got - want| near 1e-3 |want| and 1e-6: a tolerance's edge
        const double x = kq::bits_to_double(t, w);
        const double y = x * (1 + (static_cast<double>(rng() % 2001) - 1000) * 2e-6) +
                         (static_cast<double>(rng() % 3) - 1) * 1e-6;
        g = 0;
        kq::store_rounded(t, y, &g);
        break;
      }
      default:
        g = rng() & mask;
    }
    want.push_back(w), got.push_back(g);
  }
}

std::vector<unsigned char> pack(DType t, const std::vector<std::uint64_t>& bits) {
  const std::size_t es = kq::dtype_size(t);
  std::vector<unsigned char> out(bits.size() * es);
  for (std::size_t i = 0; i < bits.size(); ++i) std::memcpy(out.data() + i * es, &bits[i], es);
  return out;
}

template <class Bytes>
kq::DeviceMemory on_device(const Bytes& host) {
  kq::DeviceMemory m(kq::Device::cuda, host.size());
  if (!host.empty()) m.upload(host.data(), 0, host.size());
  return m;
}

CompareRule rule(CompareRule::Kind k, std::int64_t ulp = 0, double atol = 0, double rtol = 0) {
  CompareRule r;
  r.kind = k;
  r.max_ulp = ulp;
  r.atol = atol;
  r.rtol = rtol;
  return r;
}

}  // namespace

TEST_CASE("compare_elements gives element_matches' verdict for every dtype and rule") {
  Stream s;
  const std::vector<CompareRule> rules = {rule(CompareRule::Kind::bitwise),
                                          rule(CompareRule::Kind::ulp, 1),
                                          rule(CompareRule::Kind::ulp, 3),
                                          rule(CompareRule::Kind::tolerance, 0, 1e-6, 1e-3),
                                          rule(CompareRule::Kind::tolerance, 0, 0.0, 1e-5),
                                          rule(CompareRule::Kind::tolerance, 0, 1e-30, 0.0)};
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    std::vector<std::uint64_t> want, got;
    make_pairs(t, want, got);
    const auto w = on_device(pack(t, want)), g = on_device(pack(t, got));
    for (const CompareRule& r : rules) {
      std::uint64_t count = 0;
      std::int64_t first = -1;
      for (std::size_t i = 0; i < want.size(); ++i)
        if (!kq::element_matches(r, t, want[i], got[i])) {
          if (first < 0) first = static_cast<std::int64_t>(i);
          ++count;
        }
      const auto n = static_cast<std::int64_t>(want.size());
      const kq::devcheck::Scan d = kq::devcheck::compare_elements(g.data(), w.data(), n, t, r, s.s);
      INFO(kq::to_string(t) << " rule kind " << static_cast<int>(r.kind) << " ulp " << r.max_ulp
                            << " atol " << r.atol << " rtol " << r.rtol);
      CHECK(count > 0);
      CHECK(d.count == count);
      CHECK(d.first == first);
      // Tails of every length below a block, and an empty range.
      for (std::int64_t m : {std::int64_t{0}, std::int64_t{1}, std::int64_t{255}}) {
        std::uint64_t c = 0;
        for (std::int64_t i = 0; i < m; ++i)
          c += !kq::element_matches(r, t, want[static_cast<std::size_t>(i)],
                                    got[static_cast<std::size_t>(i)]);
        CHECK(kq::devcheck::compare_elements(g.data(), w.data(), m, t, r, s.s).count == c);
      }
    }
  }
}

TEST_CASE("compare_bounded gives element_matches' verdict under the accumulation bound") {
  Stream s;
  // Bounds that accept nothing beyond the ulps, a little, a lot, and none (NaN: broke down);
  // every third element's bound puts |got - want| on the rule's edge exactly.
  const std::vector<double> bound_values = {0.0,  1e-300, 1e-6,
                                            0.25, 1e30,   std::numeric_limits<double>::quiet_NaN()};
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    std::vector<std::uint64_t> want, got;
    make_pairs(t, want, got);
    const auto w = on_device(pack(t, want)), g = on_device(pack(t, got));
    for (const kq::devcheck::BoundRule r :
         {kq::devcheck::BoundRule{2.0 * 0x1p-24, 1.0}, kq::devcheck::BoundRule{2.0 * 0x1p-8, 0.5},
          kq::devcheck::BoundRule{3.0, 4.0}}) {
      kq::OutputRule rule;
      rule.bound_scale = r.scale;
      rule.bound_ulps = r.ulps;
      std::vector<double> bound(want.size());
      for (std::size_t i = 0; i < bound.size(); ++i) {
        bound[i] = bound_values[i % bound_values.size()];
        const double x = kq::bits_to_double(t, want[i]), y = kq::bits_to_double(t, got[i]);
        if (i % 3 == 0 && std::isfinite(x) && std::isfinite(y))
          bound[i] = (std::fabs(y - x) - r.ulps * kq::ulp_at(t, want[i])) / r.scale;
      }
      kq::DeviceMemory b(kq::Device::cuda, bound.size() * sizeof(double));
      b.upload(bound.data(), 0, b.size());
      std::uint64_t count = 0;
      std::int64_t first = -1;
      for (std::size_t i = 0; i < want.size(); ++i)
        if (!kq::element_matches(rule, t, bound[i], want[i], got[i])) {
          if (first < 0) first = static_cast<std::int64_t>(i);
          ++count;
        }
      const auto n = static_cast<std::int64_t>(want.size());
      const kq::devcheck::Scan d = kq::devcheck::compare_bounded(
          g.data(), w.data(), static_cast<const double*>(b.data()), n, t, r, s.s);
      INFO(kq::to_string(t) << " scale " << r.scale << " ulps " << r.ulps);
      CHECK(count > 0);
      CHECK(count < want.size());
      CHECK(d.count == count);
      CHECK(d.first == first);
    }
  }
}

TEST_CASE("differing_elements: bits, a NaN matching any NaN; differing_bytes at any alignment") {
  Stream s;
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    std::vector<std::uint64_t> a, b;
    make_pairs(t, a, b);
    std::uint64_t count = 0;
    std::int64_t first = -1;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const bool nan_both =
          std::isnan(kq::bits_to_double(t, a[i])) && std::isnan(kq::bits_to_double(t, b[i]));
      if (a[i] != b[i] && !nan_both) {
        if (first < 0) first = static_cast<std::int64_t>(i);
        ++count;
      }
    }
    const auto da = on_device(pack(t, a)), db = on_device(pack(t, b));
    const auto d = kq::devcheck::differing_elements(da.data(), db.data(),
                                                    static_cast<std::int64_t>(a.size()), t, s.s);
    INFO(kq::to_string(t));
    CHECK(d.count == count);
    CHECK(d.first == first);
  }
  std::vector<unsigned char> x(1 << 20), y;
  std::mt19937 rng(5);
  for (auto& v : x) v = static_cast<unsigned char>(rng());
  y = x;
  for (std::size_t k : {std::size_t{70001}, std::size_t{70002}, std::size_t{1048000}}) y[k] ^= 1;
  const auto dx = on_device(x), dy = on_device(y);
  for (std::size_t off : {std::size_t{0}, std::size_t{3}, std::size_t{16}, std::size_t{70002}}) {
    const auto d = kq::devcheck::differing_bytes(static_cast<const char*>(dx.data()) + off,
                                                 static_cast<const char*>(dy.data()) + off,
                                                 x.size() - off, s.s);
    std::int64_t first = -1;
    std::uint64_t count = 0;
    for (std::size_t k = off; k < x.size(); ++k)
      if (x[k] != y[k]) {
        if (first < 0) first = static_cast<std::int64_t>(k - off);
        ++count;
      }
    INFO("offset " << off);
    CHECK(d.first == first);
    CHECK(d.count == count);
  }
  CHECK(kq::devcheck::differing_bytes(dx.data(), dx.data(), x.size(), s.s).first == -1);
}

TEST_CASE("a scan needs no device memory once the device is full") {
  Stream s;
  std::vector<unsigned char> x(4096, 7), y(x);
  y[100] = 8;
  const auto dx = on_device(x), dy = on_device(y);
  CHECK(kq::devcheck::differing_bytes(dx.data(), dy.data(), x.size(), s.s).first == 100);
  // The rest of the device taken, as a large size's arm buffers and caching allocators take it.
  std::vector<void*> taken;
  for (std::size_t block = std::size_t{1} << 30; block >= (std::size_t{1} << 12);) {
    void* p = nullptr;
    if (cudaMalloc(&p, block) == cudaSuccess)
      taken.push_back(p);
    else
      block /= 2;
  }
  (void)cudaGetLastError();
  std::int64_t first = -2;
  std::string error;
  try {
    first = kq::devcheck::differing_bytes(dx.data(), dy.data(), x.size(), s.s).first;
  } catch (const std::exception& e) {
    error = e.what();
  }
  for (void* p : taken) cudaFree(p);
  INFO(error);
  CHECK(taken.size() > 0);
  CHECK(first == 100);
}

namespace {

// One case's tensors on the device with the host's and the device's checks side by side; the
// "arm" is this test, writing the output region by hand.
struct CaseOnDevice {
  kq::Spec spec;
  kq::Case c;
  kq::CaseTensors t;
  Stream s;
  std::unique_ptr<kq::CaseChecks> host, device;
  kq::HostBytes want;
  std::vector<double> bounds;  // where the output is compared by the accumulation bound

  CaseOnDevice(kq::Spec sp, const std::string& name)
      : spec(std::move(sp)), c(find(spec, name)), t(spec, c, kq::Device::cuda) {
    const std::vector<kq::OutputRule> rules = kq::output_rules(spec, c);
    host = kq::host_case_checks(t, rules);
    device = kq::case_checks(spec, c, t, kq::Device::cuda, rules, s.s, 0);
    REQUIRE(std::string(device->where()) == "device");
    t.load_inputs(c, 0);
    host->inputs_loaded();
    device->inputs_loaded();
    want.resize(static_cast<std::size_t>(t.output_view().numel()) * kq::dtype_size(t.dtype()));
    unsigned char* const dst[] = {want.data()};
    if (rules[0].by_bound()) bounds.resize(static_cast<std::size_t>(t.output_view().numel()));
    double* const dst_bounds[] = {bounds.data()};
    kq::case_reference(spec, c, t.pristine_input_views(), dst,
                       bounds.empty() ? std::span<double* const>{} : dst_bounds);
    t.poison_output(0);
    write_output(want);
  }
  static kq::Case find(const kq::Spec& spec, const std::string& name) {
    kq::PlanOptions full;  // not quick: a spec's own points beyond 4097 are cases
    full.include_huge = false;
    for (const auto& k : kq::plan_cases(spec, full))
      if (k.name == name) return k;
    FAIL("no case " << name);
    return {};
  }
  void write_output(const kq::HostBytes& bytes) {
    const kq::CaseTensor& o = t.output_owner();
    const_cast<kq::DeviceMemory&>(o.memory).upload(bytes.data(), t.output_byte(0), bytes.size());
  }
  void write_byte(const kq::CaseTensor& m, std::size_t k, unsigned char v) {
    const_cast<kq::DeviceMemory&>(m.memory).upload(&v, k, 1);
  }
  // Both take the output and must agree on every finding.
  void agree(bool first, int poison, const char* what) {
    INFO(what);
    host->take(first);
    device->take(first);
    CHECK(host->inputs_unchanged() == device->inputs_unchanged());
    const auto hf = host->surroundings(poison), df = device->surroundings(poison);
    CHECK(hf.check == df.check);
    CHECK(hf.message == df.message);
    const unsigned char* const w[] = {want.data()};
    const double* const b[] = {bounds.data()};
    const auto hm = host->values(w, b, 0), dm = device->values(w, b, 0);
    CHECK(hm.count == dm.count);
    CHECK(hm.index == dm.index);
    CHECK(hm.want_bits == dm.want_bits);
    CHECK(hm.got_bits == dm.got_bits);
    if (!first) CHECK(host->differs_from_first().index == device->differs_from_first().index);
  }
};

}  // namespace

TEST_CASE("a whole case: the device's findings are the host's, word for word") {
  const auto root = kq::test::source_dir();
  const std::vector<const char*> format1 = {"size/1025", "offset/x+4", "values/denormal"};
  const std::vector<std::pair<const char*, std::vector<const char*> > > files = {
      {"specs/residual_relu.yaml", format1},
      {"specs/residual_relu_bf16.yaml", format1},
      {"specs/silu_mul_bf16.yaml", format1},
      {"specs/kernelbench/22_tanh.yaml", {"point/M=7,N=4099"}},    // format 2: one float output
      {"specs/kernelbench/89_cumsum.yaml", {"point/M=7,N=4099"}},  // by the accumulation bound
  };
  for (const auto& [file, names] : files) {
    for (const char* name : names) {
      kq::Spec spec = kq::load_spec(root / file);
      CaseOnDevice k(spec, name);
      INFO(file << " " << name);
      k.agree(true, 0, "a right output");
      const std::size_t es = kq::dtype_size(k.t.dtype());
      auto wrong = k.want;
      wrong[3 * es] ^= 0x01;        // one ulp
      wrong[700 * es + 1] ^= 0x40;  // far off
      k.write_output(wrong);
      k.agree(false, 0, "two wrong elements");
      const kq::CaseTensor& o = k.t.output_owner();
      k.write_byte(o, kq::data_begin(o) - 1, 0x00);
      k.agree(false, 0, "a write before the output");
      k.write_byte(o, kq::data_begin(o) - 1, kq::kGuardByte);
      k.write_byte(o, kq::data_end(o) + 5, 0x11);
      k.agree(false, 0, "a write past the output");
      k.write_byte(o, kq::data_end(o) + 5, kq::kGuardByte);
      const kq::CaseTensor& x = k.t.inputs()[0];
      k.write_byte(x, kq::data_begin(x) + 2 * es, 0x77);
      k.agree(false, 0, "an input changed");
      k.write_byte(x, kq::data_begin(x) + 2 * es, x.pristine[2 * es]);
      k.write_byte(x, kq::data_end(x) + 200, 0x00);
      k.agree(false, 0, "an input's guard changed");
    }
  }
}

namespace {

// The timing loop's check of t's output on the host, and on the device against each copy: the
// same finding, word for word. Returns the host's verdict.
bool host_and_copies_agree(const kq::CaseTensors& t, const std::vector<kq::OutputRule>& rules,
                           const std::vector<kq::HostBytes>& wants,
                           const std::vector<std::vector<double> >& bounds,
                           std::initializer_list<const kq::ReferenceCopy*> copies, void* stream) {
  kq::HostBytes scratch;
  const auto h = kq::check_timed_output(t, rules, wants, bounds, scratch);
  for (const kq::ReferenceCopy* copy : copies) {
    INFO(copy->how());
    const auto d = kq::check_timed_output(t, rules, wants, bounds, scratch, copy, stream);
    CHECK(h.ok == d.ok);
    CHECK(h.message == d.message);
    CHECK(h.index == d.index);
    CHECK(h.expected == d.expected);
    CHECK(h.got == d.got);
  }
  return h.ok;
}

// A KernelBench spec's first timed point, its timing points replaced (`points` by `with`), on
// the device with its output's guards set, as the timing loop's set-up leaves them, and its
// SizeChecks' reference made.
struct TimedPoint {
  static kq::Spec spec_with(const std::string& name, const std::string& points,
                            const std::string& with) {
    std::string yaml =
        kq::test::read_file(kq::test::source_dir() / ("specs/kernelbench/" + name + ".yaml"));
    REQUIRE(yaml.find(points) != std::string::npos);
    yaml.replace(yaml.find(points), points.size(), with);
    return kq::parse_spec(yaml, name + ".yaml");
  }
  TimedPoint(const std::string& name, const std::string& points, const std::string& with,
             std::uint64_t seed)
      : spec(spec_with(name, points, with)),
        c(kq::timed_points(spec).front().c),
        t(spec, c, kq::Device::cuda),
        checks(spec, c, seed) {
    t.load_inputs(c, 0);
    t.poison_output(0);
    checks.reference(t, s.s);
    checks.restart_counts();
  }
  // The output's elements, as an arm writes them.
  void write(const std::vector<float>& y) {
    const_cast<kq::DeviceMemory&>(t.output_owner().memory)
        .upload(y.data(), t.output_byte(0), y.size() * 4);
  }
  kq::Spec spec;
  kq::Case c;
  kq::CaseTensors t;
  Stream s;
  kq::SizeChecks checks;
};

}  // namespace

TEST_CASE("the timing loop's output check: the same findings on the device as on the host") {
  kq::Spec spec = kq::load_spec(kq::test::source_dir() / "specs/residual_relu_bf16.yaml");
  CaseOnDevice k(spec, "size/1025");
  std::vector<kq::HostBytes> wants{k.want};
  // The reference whole on the device, and streamed in chunks of 128 elements (9 of them).
  kq::ReferenceCopyShape streamed;
  streamed.whole = false;
  streamed.chunk = streamed.least_chunk = 256;
  std::string why;
  const std::int64_t n = k.t.output_view().numel();
  kq::ReferenceCopy whole = kq::ReferenceCopy::make(wants[0].data(), nullptr, n, k.t.dtype(), &why);
  kq::ReferenceCopy chunks =
      kq::ReferenceCopy::make(wants[0].data(), nullptr, n, k.t.dtype(), &why, streamed);
  REQUIRE(whole.usable());
  REQUIRE(chunks.usable());
  CHECK_FALSE(whole.streamed());
  CHECK(chunks.streamed());
  MESSAGE("the streamed copy: " << chunks.how());
  const std::vector<kq::OutputRule> rules{spec.op.compare};
  auto all_agree = [&](const char* what) {
    INFO(what);
    return host_and_copies_agree(k.t, rules, wants, {}, {&whole, &chunks}, k.s.s);
  };
  CHECK(all_agree("a right output"));
  auto wrong = k.want;
  wrong[2 * 17] ^= 0x02;
  k.write_output(wrong);
  CHECK_FALSE(all_agree("a wrong element"));
  wrong[2 * 1024] ^= 0x40;  // in the last, short chunk too
  wrong[2 * 300 + 1] ^= 0x01;
  k.write_output(wrong);
  CHECK_FALSE(all_agree("wrong elements in three chunks"));
  k.write_output(k.want);
  // The reference changes on the host (fresh inputs' patches): each copy follows.
  wants[0][2 * 600] ^= 0x10;
  whole.changed(600, 1);
  chunks.changed(600, 1);
  CHECK_FALSE(all_agree("a changed reference"));
  wants[0][2 * 600] ^= 0x10;
  whole.changed(600, 1);
  chunks.changed(600, 1);
  CHECK(all_agree("the reference as it was"));
  const kq::CaseTensor& o = k.t.output_owner();
  k.write_byte(o, kq::data_end(o), 0x00);
  CHECK_FALSE(all_agree("a write past the end"));
}

TEST_CASE("the timing loop's output check by the accumulation bound, whole and streamed") {
  kq::Spec spec = kq::load_spec(kq::test::source_dir() / "specs/kernelbench/89_cumsum.yaml");
  const kq::Case c = CaseOnDevice::find(spec, "point/M=7,N=4099");
  const std::vector<kq::OutputRule> rules = kq::output_rules(spec, c);
  REQUIRE(rules[0].by_bound());
  REQUIRE_FALSE(rules[0].sampled());
  kq::CaseTensors t(spec, c, kq::Device::cuda);
  Stream s;
  t.load_inputs(c, 0);
  const std::int64_t n = t.output_view().numel();
  std::vector<kq::HostBytes> wants(1);
  wants[0].resize(static_cast<std::size_t>(n) * 4);
  std::vector<std::vector<double> > bounds{std::vector<double>(static_cast<std::size_t>(n))};
  unsigned char* const dst[] = {wants[0].data()};
  double* const dst_bounds[] = {bounds[0].data()};
  kq::case_reference(spec, c, t.pristine_input_views(), dst, dst_bounds);
  t.poison_output(0);
  auto write = [&](const kq::HostBytes& bytes) {
    const_cast<kq::DeviceMemory&>(t.output_owner().memory)
        .upload(bytes.data(), t.output_byte(0), bytes.size());
  };
  write(wants[0]);
  kq::ReferenceCopyShape streamed;  // chunks of 1000 elements: 4 bytes and a bound's 8 each
  streamed.whole = false;
  streamed.chunk = streamed.least_chunk = 12000;
  std::string why;
  kq::ReferenceCopy whole =
      kq::ReferenceCopy::make(wants[0].data(), bounds[0].data(), n, t.dtype(), &why);
  kq::ReferenceCopy chunks =
      kq::ReferenceCopy::make(wants[0].data(), bounds[0].data(), n, t.dtype(), &why, streamed);
  REQUIRE(chunks.streamed());
  CHECK(chunks.how().find("chunks of 1000 elements") != std::string::npos);
  auto all_agree = [&](const char* what) {
    INFO(what);
    return host_and_copies_agree(t, rules, wants, bounds, {&whole, &chunks}, s.s);
  };
  CHECK(all_agree("the reference itself"));
  auto moved = [&](std::size_t i, float by) {  // the reference with element i moved by `by`
    auto bytes = wants[0];
    float x;
    std::memcpy(&x, bytes.data() + 4 * i, 4);
    x += by;
    std::memcpy(bytes.data() + 4 * i, &x, 4);
    return bytes;
  };
  write(moved(28000, 1e6f));
  CHECK_FALSE(all_agree("an element far beyond its bound, in the 29th chunk"));
  write(moved(5, 1e6f));
  CHECK_FALSE(all_agree("another in the first chunk"));
  // The bound of an element changes on the host (fresh inputs' patches): each copy follows.
  write(wants[0]);
  const double e = bounds[0][1234];
  bounds[0][1234] = -1e30;  // nothing is within a negative bound but equal bits
  wants[0][4 * 1234] ^= 0x01;
  whole.changed(1234, 1);
  chunks.changed(1234, 1);
  CHECK_FALSE(all_agree("a changed reference and bound"));
  bounds[0][1234] = e;
  wants[0][4 * 1234] ^= 0x01;
  whole.changed(1234, 1);
  chunks.changed(1234, 1);
  CHECK(all_agree("the reference as it was"));
  // A changed column, 7 elements 4099 apart: one pitched copy of values and bounds.
  const kq::CopyBlock column{100, 1, 7, 4099, {}};
  std::vector<double> column_bounds(7);
  auto flip_column = [&](bool on) {  // its bits flipped, its bounds negative; and back
    for (std::size_t r = 0; r < 7; ++r) {
      const std::size_t i = 100 + r * 4099;
      if (on) column_bounds[r] = bounds[0][i];
      bounds[0][i] = on ? -1e30 : column_bounds[r];
      wants[0][4 * i] ^= 0x01;
    }
  };
  flip_column(true);
  whole.changed(column);
  chunks.changed(column);
  CHECK_FALSE(all_agree("a changed column"));
  flip_column(false);
  whole.changed(column);
  chunks.changed(column);
  CHECK(all_agree("the column as it was"));
}

TEST_CASE("a long scan's timed checks stay on the device, its unknown elements the output's") {
  // 89_cumsum at 256 x 4096 (2^20 elements, the device checks' least): a changed element
  // changes the rest of its row, thousands of sums of thousands of terms, past what a check
  // evaluates again (FreshInputs::kCheckSteps); the rest is accepted as the output holds it.
  TimedPoint p("89_cumsum", "points: [{M: 4096, N: 4096}, {M: 32768, N: 32768}]",
               "points: [{M: 256, N: 4096}]", 12345);
  kq::CaseTensors& t = p.t;
  kq::SizeChecks& checks = p.checks;
  Stream& s = p.s;
  const std::size_t m = 256, n = 4096;
  const kq::CaseTensor& x = t.inputs()[0];
  std::vector<float> xs(m * n), ys(m * n);
  auto write = [&](const std::vector<float>& y) { p.write(y); };
  for (int round = 0; round < 4; ++round) {
    INFO("round " << round);
    checks.change(t, s.s);
    // What a right arm returns: the changed inputs' prefix sums, in float64.
    x.memory.download(xs.data(), kq::data_begin(x), xs.size() * 4);
    for (std::size_t r = 0; r < m; ++r) {
      double sum = 0;
      for (std::size_t k = 0; k < n; ++k) ys[r * n + k] = static_cast<float>(sum += xs[r * n + k]);
    }
    write(ys);
    const kq::OutputFinding right = checks.check(t, true);
    CHECK_MESSAGE(right.ok, right.message);
    // Wrong at the start of every row: most rows are unchanged, their reference known.
    auto wrong = ys;
    for (std::size_t r = 0; r < m; ++r) wrong[r * n] += 1e3f;
    write(wrong);
    CHECK_FALSE(checks.check(t, true).ok);
  }
  kq::rec::SizeEnd end;
  checks.count_into(end);
  CHECK(end.checks == 8);
  CHECK(end.host_checks == 0);
  CHECK_MESSAGE(end.host_checks_why.empty(), end.host_checks_why);
}

TEST_CASE("a product's timed checks stay on the device, its changed columns copied pitched") {
  // 02_standard_matmul at 1024 x 1024 x 1536: a changed element of B changes a column of C,
  // 1024 elements 1024 apart of 1536 terms each, past what a check evaluates again; the known
  // part and the output's own bits at the rest go to the device's reference a block at a time
  // (util/copy_blocks.hpp), not one copy an element.
  TimedPoint p("02_standard_matmul",
               "points: [{M: 512, N: 1024, K: 2048}, {M: 2048, N: 4096, K: 8192}]",
               "points: [{M: 1024, N: 1024, K: 1536}]", 4242);
  kq::CaseTensors& t = p.t;
  kq::SizeChecks& checks = p.checks;
  Stream& s = p.s;
  const std::size_t m = 1024, n = 1024, k = 1536;
  std::vector<float> a(m * k), b(k * n), cs(m * n);
  auto write = [&](const std::vector<float>& y) { p.write(y); };
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    checks.change(t, s.s);
    // What a right arm returns: the changed inputs' product, in float64.
    t.inputs()[0].memory.download(a.data(), kq::data_begin(t.inputs()[0]), a.size() * 4);
    t.inputs()[1].memory.download(b.data(), kq::data_begin(t.inputs()[1]), b.size() * 4);
    std::vector<double> row(n);
    for (std::size_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (std::size_t q = 0; q < k; ++q) {
        const double x = a[i * k + q];
        const float* bq = b.data() + q * n;
        for (std::size_t j = 0; j < n; ++j) row[j] += x * bq[j];
      }
      for (std::size_t j = 0; j < n; ++j) cs[i * n + j] = static_cast<float>(row[j]);
    }
    write(cs);
    const kq::OutputFinding right = checks.check(t, true);
    CHECK_MESSAGE(right.ok, right.message);
    auto wrong = cs;  // wrong in a column: most of its rows are unchanged, their reference known
    for (std::size_t i = 0; i < m; ++i) wrong[i * n + 3] += 1e3f;
    write(wrong);
    CHECK_FALSE(checks.check(t, true).ok);
  }
  kq::rec::SizeEnd end;
  checks.count_into(end);
  CHECK(end.checks == 6);
  CHECK(end.host_checks == 0);
  CHECK_MESSAGE(end.host_checks_why.empty(), end.host_checks_why);
  MESSAGE("6 checks: " << end.check_s << " s, their patches " << end.patch_s << " s");
}

TEST_CASE("case_checks falls back to the host where the device's do not apply") {
  kq::Spec spec = kq::test::residual_relu_spec();
  Stream s;
  for (const auto& c : kq::plan_cases(spec, {false, true})) {
    if (c.name != "size/1025" && c.name != "size/4097") continue;
    kq::CaseTensors t(spec, c, kq::Device::cuda);
    CHECK(std::string(kq::case_checks(spec, c, t, kq::Device::cuda, {spec.op.compare}, s.s, 4096)
                          ->where()) == (c.numel() >= 4096 ? "device" : "host"));
  }
}
#endif
