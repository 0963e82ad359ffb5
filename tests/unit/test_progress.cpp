// What a run prints while it goes (pipeline/progress.hpp), to a log: the heartbeat's line names
// what each arm is doing, a wait before a case as a wait.
#include <doctest/doctest.h>

#include <chrono>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "pipeline/progress.hpp"
#include "record/records.hpp"

namespace {

// std::cout into a string for the scope.
struct Captured {
  std::ostringstream text;
  std::streambuf* saved = std::cout.rdbuf(text.rdbuf());
  ~Captured() { std::cout.rdbuf(saved); }
};

}  // namespace

TEST_CASE("a worker waiting for a case's data is shown waiting, from its first word") {
  Captured out;
  {
    kq::Progress progress(std::chrono::milliseconds(300));
    progress.record(nlohmann::json(kq::rec::CaseStart{"arm_a", "point/M=1,N=1", 10, {}, 10}));
    progress.record(nlohmann::json(kq::rec::Waiting{"arm_a", "timing/M=4096,N=393216", {}}));
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    // Said again a few seconds on: still the one wait, timed from its start.
    progress.record(nlohmann::json(kq::rec::Waiting{"arm_a", "timing/M=4096,N=393216", {}}));
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    progress.finish();
  }
  const std::string text = out.text.str();
  INFO(text);
  CHECK(text.find("still running: arm_a waiting for the data of timing/M=4096,N=393216 (1 s)") !=
        std::string::npos);
  CHECK(text.find("waiting for the data of timing/M=4096,N=393216 (0 s)", text.find("(1 s)")) ==
        std::string::npos);
  CHECK(text.find("arm_a point/M=1,N=1 (") == std::string::npos);
}

TEST_CASE("a worker waiting for a large case's turn at the device says so") {
  Captured out;
  {
    kq::Progress progress(std::chrono::milliseconds(300));
    progress.record(
        nlohmann::json(kq::rec::Waiting{"arm_b", "timing/M=32768,N=32768", {}, /*turn=*/true}));
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    progress.finish();
  }
  const std::string text = out.text.str();
  INFO(text);
  CHECK(text.find("arm_b waiting for the device for timing/M=32768,N=32768 (") !=
        std::string::npos);
}

TEST_CASE("an arm left out at a point is said by the point's name, before the point starts") {
  // A point's set-up records its arms' skips before the point's own record (size_start): the
  // names come from the plan.
  Captured out;
  {
    kq::Progress progress;
    progress.name_points({{1, "M=4096,N=4096"}, {2, "M=4096,N=393216"}});
    progress.record(nlohmann::json(kq::rec::ArmSkip{"torch_eager", 2, "out of memory", {}}));
    progress.finish();
  }
  const std::string text = out.text.str();
  INFO(text);
  CHECK(text.find("torch_eager not timed at M=4096,N=393216: out of memory") != std::string::npos);
}

TEST_CASE("a size's line says what its checks took, and why where they were on the host") {
  Captured out;
  {
    kq::Progress progress;
    progress.name_points({{1, "M=4096,N=4096"}, {2, "M=4096,N=393216"}});
    kq::rec::SizeEnd quick{1, 12, "confidence", 0.5, 0.2};
    quick.check_s = 0.04;
    quick.patch_s = 0.01;
    quick.checks = 5;
    quick.host_checks = 0;
    progress.record(nlohmann::json(quick));
    kq::rec::SizeEnd slow{2, 11, "confidence", 26.4, 2.8};
    slow.check_s = 24.1;
    slow.patch_s = 0.12;
    slow.checks = 15;
    slow.host_checks = 13;
    slow.host_checks_why = "no device memory for the reference's 6442 MB";
    progress.record(nlohmann::json(slow));
    kq::rec::SizeEnd small{3, 20, "confidence", 0.9, 0.1};  // on the host by design: unsaid
    small.check_s = 0.3;
    small.patch_s = 0.0;
    small.checks = 4;
    small.host_checks = 4;
    small.host_checks_why = "a small output";
    progress.record(nlohmann::json(small));
    progress.finish();
  }
  const std::string text = out.text.str();
  INFO(text);
  CHECK(text.find("M=4096,N=4096: 12 rounds, stopped by confidence (0.5 s; set-up 0.2 s; "
                  "checks 0.0 s, their reference 0.0 s") != std::string::npos);
  CHECK(text.find(
            "M=4096,N=393216: 11 rounds, stopped by confidence (26.4 s; set-up 2.8 s; "
            "checks 24.1 s, their reference 0.1 s, 13 of 15 on the host (no device memory for the "
            "reference's "
            "6442 MB)") != std::string::npos);
  CHECK(text.find("checks 0.3 s, their reference 0.0 s)") != std::string::npos);
  CHECK(text.find("a small output") == std::string::npos);
}
