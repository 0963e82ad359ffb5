// A case's inputs and references computed once (qualify/case_data.hpp) are the ones a worker
// computes itself, bit for bit, for every layout; shared through sealed memory
// (util/sealed_memory.hpp, qualify/shared_cases.hpp), nobody can write them; and a case run
// from shared data ends as it does from its own.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_arm.hpp"
#include "plan/plan_cases.hpp"
#include "qualify/case_data.hpp"
#include "qualify/case_tensors.hpp"
#include "qualify/run_case.hpp"
#include "qualify/shared_cases.hpp"
#include "spec_fixture.hpp"
#include "util/fd_passing.hpp"
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
    kq::CaseTensors own(spec(), c, kq::Device::cpu);
    kq::CaseTensors copied(spec(), c, kq::Device::cpu);
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
  // The stage's budget: half the memory available, unless KQ_SHARED_CASES_BYTES says.
  CHECK(kq::shared_cases_budget() > 0);
  ::setenv("KQ_SHARED_CASES_BYTES", "0", 1);
  CHECK(kq::shared_cases_budget() == 0);
  ::unsetenv("KQ_SHARED_CASES_BYTES");
}

TEST_CASE("while sealed memory is filled, no other descriptor can write it") {
  // Cases computed beside the workers are filled while the workers run: one that reaches the
  // descriptor through /proc/<kq>/fd in the meantime must find every write refused.
  int written = 0, tried = 0;
  kq::SealedMemory m("filling", 8192, [&](unsigned char* d) {
    std::memset(d, 0x33, 8192);
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
      std::error_code ec;
      const auto target = std::filesystem::read_symlink(e.path(), ec).string();
      if (target.find("memfd:kq-filling") == std::string::npos) continue;
      ++tried;
      const int rw = ::open(e.path().c_str(), O_RDWR);
      REQUIRE(rw >= 0);
      const unsigned char byte = 1;
      if (::pwrite(rw, &byte, 1, 0) == 1) ++written;
      void* p = ::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0);
      if (p != MAP_FAILED) {
        ++written;
        ::munmap(p, 8192);
      }
      CHECK(::ftruncate(rw, 0) != 0);
      ::close(rw);
      // Not inherited by a process started now.
      CHECK((::fcntl(std::stoi(e.path().filename().string()), F_GETFD) & FD_CLOEXEC) != 0);
    }
  });
  CHECK(tried == 1);
  CHECK(written == 0);
  CHECK(m.data()[0] == 0x33);
  CHECK((::fcntl(m.fd(), F_GETFD) & FD_CLOEXEC) == 0);  // sealed: inherited from now on
}

TEST_CASE("a worker's argument takes the names of format-2 points, commas and all") {
  // The points of a format-2 spec name their dims: "point/M=127,N=65,K=257".
  kq::SealedMemory m("test", 64, [](unsigned char* d) { std::memset(d, 0x21, 64); });
  const std::string a = "point/M=127,N=65,K=257=" + std::to_string(::dup(m.fd())) + ":64;" +
                        "values/mixed@M=3,N=3,K=4097=" + std::to_string(::dup(m.fd())) + ":64";
  const kq::SharedCases w = kq::SharedCases::adopt(a);
  CHECK(w.size() == 2);
  REQUIRE(w.find("point/M=127,N=65,K=257") != nullptr);
  CHECK(w.find("point/M=127,N=65,K=257")[63] == 0x21);
  CHECK(w.find("values/mixed@M=3,N=3,K=4097") != nullptr);
}

namespace {

// `argument` with every descriptor it names duplicated: a worker's view adopted in this
// process then owns its own descriptors, not the feed's.
std::string with_own_descriptors(const std::string& argument) {
  std::string out, item;
  std::istringstream items(argument);
  while (std::getline(items, item, ';')) {
    const auto eq = item.rfind('='), colon = item.rfind(':');
    const std::string where = item.substr(eq + 1, colon - eq - 1);
    if (item.rfind("@socket=", 0) != 0 && where != "late")
      item = item.substr(0, eq + 1) + std::to_string(::dup(std::stoi(where))) + item.substr(colon);
    out += (out.empty() ? "" : ";") + item;
  }
  return out;
}

}  // namespace

TEST_CASE("cases computed beside the workers reach a worker over its socket, sealed") {
  std::vector<kq::Case> few;
  for (const auto& c : cases())
    if (c.name == "size/7" || c.name == "size/1025" || c.name == "values/denormal")
      few.push_back(c);
  ::setenv("KQ_LATE_CASE_BYTES", "20000", 1);  // size/1025 and values/denormal come late
  kq::SharedCaseFeed feed(spec(), few, std::uint64_t{1} << 30);
  ::unsetenv("KQ_LATE_CASE_BYTES");
  REQUIRE(feed.has_late());
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  // Two workers start before the feed does: both are told the late cases are coming.
  int other[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, other) == 0);
  const std::string arg = feed.subscribe(sv[0], sv[1]);
  CHECK(feed.subscribe(other[0], other[1]).find("@socket=" + std::to_string(other[1])) !=
        std::string::npos);
  feed.start();
  INFO(arg);
  CHECK(arg.find("size/1025=late:") != std::string::npos);
  CHECK(arg.find("values/denormal=late:") != std::string::npos);
  CHECK(arg.find("size/7=") != std::string::npos);
  CHECK(arg.find("@socket=" + std::to_string(sv[1])) != std::string::npos);
  kq::SharedCases worker = kq::SharedCases::adopt(with_own_descriptors(arg));
  for (const auto& c : few) {
    worker.await(c.name, {});
    const unsigned char* got = worker.find(c.name);
    REQUIRE_MESSAGE(got != nullptr, c.name);
    const kq::CaseDataLayout layout(spec(), c);
    std::vector<unsigned char> want(layout.total_bytes());
    kq::compute_case_data(spec(), c, layout, want.data());
    CHECK(std::memcmp(got, want.data(), want.size()) == 0);
  }
  // A question about a case the stage does not have is answered "none".
  kq::SharedCases asker =
      kq::SharedCases::adopt("size/99=late:384;@socket=" + std::to_string(other[1]) + ":0");
  asker.await("size/99", {});
  CHECK(asker.find("size/99") == nullptr);
  feed.finish();
  feed.unsubscribe(sv[0]);  // the feed closes its ends; sv[1] and other[1] are the views'
  feed.unsubscribe(other[0]);
  CHECK(feed.size() == 3);
}

TEST_CASE("a worker waiting for a case computes its own when word or the stage fails it") {
  auto waiting_for = [](const std::function<void(int)>& stage) {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    kq::SharedCases w =
        kq::SharedCases::adopt("size/7=late:384;@socket=" + std::to_string(sv[1]) + ":0");
    stage(sv[0]);
    w.await("size/7", {});
    ::close(sv[0]);
    return w.find("size/7");
  };
  // The stage could not compute it.
  CHECK(waiting_for([](int s) { kq::send_with_fd(s, "size/7\nnone"); }) == nullptr);
  // The stage is gone.
  CHECK(waiting_for([](int s) { ::shutdown(s, SHUT_RDWR); }) == nullptr);
  // Memory that is not sealed, or not of the size announced, is refused and closed.
  const int plain = ::memfd_create("plain", MFD_ALLOW_SEALING);
  REQUIRE(::ftruncate(plain, 384) == 0);
  CHECK(waiting_for([&](int s) { kq::send_with_fd(s, "size/7\n384", plain); }) == nullptr);
  kq::SealedMemory small("small", 64, [](unsigned char* d) { std::memset(d, 1, 64); });
  CHECK(waiting_for([&](int s) { kq::send_with_fd(s, "size/7\n384", small.fd()); }) == nullptr);
  ::close(plain);
}

TEST_CASE("workers that come and go while a case is coming never stall the feed") {
  // The largest case comes late, and takes long enough to compute that workers subscribe,
  // leave and are replaced meanwhile: a replacement's socket often takes the number of one just
  // gone, whose hang-up the feed may have seen but not yet read. The feed must never wait on a
  // socket it only believes readable: a subscribe that does not return within seconds means
  // it does.
  const kq::Case* big = &cases().front();
  for (const auto& c : cases())
    if (c.numel() > big->numel()) big = &c;
  INFO(big->name);
  ::setenv("KQ_LATE_CASE_BYTES",
           std::to_string(kq::CaseDataLayout(spec(), *big).total_bytes()).c_str(), 1);
  kq::SharedCaseFeed feed(spec(), {*big}, std::uint64_t{1} << 34);
  ::unsetenv("KQ_LATE_CASE_BYTES");
  REQUIRE(feed.has_late());
  feed.start();
  std::atomic<int> churned{0}, while_coming{0};
  std::thread churn([&] {
    std::deque<std::array<int, 2>> live;  // the feed's end, the worker's
    for (int i = 0; i < 4000; ++i) {
      std::array<int, 2> sv{};
      if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv.data()) != 0) break;
      if (feed.subscribe(sv[0], sv[1]).find("=late:") != std::string::npos) ++while_coming;
      live.push_back(sv);
      if (live.size() > 3) {  // the oldest worker hangs up, then its stage thread unsubscribes
        ::close(live.front()[1]);
        feed.unsubscribe(live.front()[0]);
        live.pop_front();
      }
      ++churned;
    }
    for (const auto& sv : live) {
      ::close(sv[1]);
      feed.unsubscribe(sv[0]);
    }
  });
  // A stalled feed holds its lock for good: nothing here could end the test but an exit.
  for (int last = -1, still = 0; churned < 4000;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    still = churned == last ? still + 1 : 0;
    last = churned;
    if (still == 50) {
      std::fprintf(stderr, "the feed stalled after %d workers (%d while the case was coming)\n",
                   last, while_coming.load());
      std::_Exit(1);
    }
  }
  churn.join();
  MESSAGE(while_coming.load() << " of 4000 workers subscribed while the case was coming");
  CHECK(while_coming > 0);
  feed.finish();
  CHECK(feed.size() == 1);
}
