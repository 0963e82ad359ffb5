// The roster of a timing worker started beside qualification (worker/roster.hpp): the names come
// through whole, the waiting worker shows it is alive, an empty roster is a roster, and a roster
// sent to a worker that is gone is no crash.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "worker/roster.hpp"

TEST_CASE("a roster sent after a wait arrives whole, the worker alive meanwhile") {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  std::thread parent([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    CHECK(kq::send_roster(fds[0], {"cpu_tbb", "torch_compile", "nvrtc_jit#2"}));
  });
  int alive = 0;
  const auto names = kq::read_roster(
      fds[1], [&] { ++alive; }, 0.02);
  parent.join();
  CHECK(names == std::vector<std::string>{"cpu_tbb", "torch_compile", "nvrtc_jit#2"});
  CHECK(alive >= 2);
}

TEST_CASE("a closed roster is empty, and a roster for a worker gone is refused quietly") {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  ::close(fds[0]);
  CHECK(kq::read_roster(fds[1], [] {}).empty());

  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  ::close(fds[1]);
  CHECK_FALSE(kq::send_roster(fds[0], {"cpu_tbb"}));  // EPIPE, no SIGPIPE
}
