// A case's inputs and references computed once (qualify/case_data.hpp) are the ones a worker
// computes itself, bit for bit, for every layout; shared through sealed memory
// (util/sealed_memory.hpp, qualify/shared_cases.hpp), nobody can write them; and a case run
// from shared data ends as it does from its own.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "fake_arm.hpp"
#include "plan/plan_cases.hpp"
#include "qualify/case_data.hpp"
#include "qualify/case_tensors.hpp"
#include "qualify/run_case.hpp"
#include "qualify/shared_cases.hpp"
#include "spec_fixture.hpp"
#include "util/sealed_memory.hpp"

namespace {

using kq::test::FakeArm;
using kq::test::Flaw;

const kq::Spec& spec() {
  static const kq::Spec s = kq::test::residual_relu_spec(
      "layouts:\n  contiguous_only: false\n  min_alignment_bytes: 4\n  ranks: [1, 2, 3, 4, 5]\n",
      "    may_alias: [x]\n", "ieee");
  return s;
}

const std::vector<kq::Case>& cases() {
  static const auto c = kq::plan_cases(spec(), {false, true});
  return c;
}

// The bytes of a host view's elements, in logical order.
std::vector<unsigned char> elements(const kq::TensorView& v, const kq::Case& c) {
  std::vector<unsigned char> out;
  std::vector<std::int64_t> idx(c.shape.size(), 0);
  const std::int64_t n = c.numel();
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) off += idx[d] * v.strides[d];
    const auto* p = static_cast<const unsigned char*>(v.data) + off * 4;
    out.insert(out.end(), p, p + 4);
    for (std::size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < c.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("computed once, a case's inputs are the ones a worker draws itself, in every layout") {
  int checked = 0;
  for (const kq::Case& c : cases()) {
    if (c.numel() > 70000) continue;
    const kq::CaseDataLayout layout(spec(), c);
    std::vector<unsigned char> data(layout.total_bytes());
    kq::compute_case_data(spec(), c, layout, data.data());
    kq::CaseTensors own(c, spec().op.inputs, "out", kq::DType::f32, kq::Device::cpu);
    kq::CaseTensors copied(c, spec().op.inputs, "out", kq::DType::f32, kq::Device::cpu);
    for (int g = 0; g < kq::kGenerations; ++g) {
      own.generate_inputs(c, static_cast<std::uint64_t>(g));
      copied.use_inputs(layout, data.data(), g);
      const auto a = own.pristine_input_views(), b = copied.pristine_input_views();
      for (std::size_t i = 0; i < a.size(); ++i) {
        INFO(c.name << " input " << i << " generation " << g);
        REQUIRE(elements(a[i], c) == elements(b[i], c));
      }
    }
    ++checked;
  }
  CHECK(checked > 50);
}

TEST_CASE("a case run from shared data ends as one run from its own, flaws included") {
  const std::vector<kq::Case>& all = cases();
  const kq::SharedCases shared = kq::SharedCases::compute(spec(), all, std::uint64_t{1} << 30);
  for (Flaw f :
       {Flaw::none, Flaw::skip_tail, Flaw::mutate_input, Flaw::pointer_cache, Flaw::no_relu}) {
    // (Views the fake arm cannot read, strided or broadcast ones, would have it read past them.)
    for (const std::string name :
         {"size/1025", "values/all_negative", "offset/x+4", "alias/out_is_x", "values/nan_in_x",
          "fence/x_end", "values/denormal"}) {
      const kq::Case* c = nullptr;
      for (const auto& k : all)
        if (k.name == name) c = &k;
      REQUIRE(c != nullptr);
      REQUIRE(shared.find(name) != nullptr);
      FakeArm a(f), b(f);
      const kq::CaseOutcome own = kq::run_case(a, kq::Device::cpu, spec(), *c);
      const kq::CaseOutcome from_shared =
          kq::run_case(b, kq::Device::cpu, spec(), *c, {}, shared.find(name));
      INFO(name << ": " << own.message << " / " << from_shared.message);
      CHECK(own.result == from_shared.result);
      CHECK(own.check == from_shared.check);
      CHECK(own.message == from_shared.message);
    }
  }
}

TEST_CASE("sealed memory cannot be written, through any descriptor or mapping") {
  kq::SealedMemory m("test", 8192, [](unsigned char* d) { std::memset(d, 0x5a, 8192); });
  REQUIRE(m.data() != nullptr);
  CHECK(m.data()[4321] == 0x5a);
  // Reopened read-write through /proc, as another process of the user could.
  const std::string path = "/proc/self/fd/" + std::to_string(m.fd());
  const int rw = ::open(path.c_str(), O_RDWR);
  REQUIRE(rw >= 0);
  const unsigned char byte = 1;
  CHECK(::pwrite(rw, &byte, 1, 0) < 0);
  CHECK(::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0) == MAP_FAILED);
  CHECK(::ftruncate(rw, 0) != 0);
  ::close(rw);
  CHECK(m.data()[0] == 0x5a);
  // A worker maps what it inherits only when it is sealed and of the size announced.
  const int plain = ::memfd_create("plain", MFD_ALLOW_SEALING);
  REQUIRE(::ftruncate(plain, 64) == 0);
  CHECK_THROWS_WITH_AS(kq::SealedMemory::adopt(plain, 64), doctest::Contains("not sealed"),
                       std::runtime_error);
  const int again = ::dup(m.fd());
  CHECK_THROWS_WITH_AS(kq::SealedMemory::adopt(again, 100), doctest::Contains("does not hold"),
                       std::runtime_error);
  // A descriptor it refuses is left open (it may be anything of the caller's).
  CHECK(::fcntl(plain, F_GETFD) >= 0);
  CHECK(::fcntl(again, F_GETFD) >= 0);
  ::close(plain);
  ::close(again);
}

TEST_CASE("the workers' argument names each shared case's descriptor and size") {
  std::vector<kq::Case> few;
  for (const auto& c : cases())
    if (c.name == "size/7" || c.name == "size/1025") few.push_back(c);
  const kq::SharedCases shared = kq::SharedCases::compute(spec(), few, std::uint64_t{1} << 30);
  const std::string arg = shared.argument();
  CHECK(arg.find("size/1025=") != std::string::npos);
  CHECK(arg.find("size/7=") != std::string::npos);
  // A budget too small for a case leaves it to the workers.
  const kq::SharedCases none = kq::SharedCases::compute(spec(), few, 100);
  CHECK(none.size() == 0);
  CHECK(none.argument().empty());
}
