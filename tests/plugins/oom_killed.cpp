// A plugin whose one arm, test_oom_killed, computes out = x right, except on a case of 12345
// elements, where it plays the kernel's OOM killer on itself: it raises the count of OOM kills in
// the file KQ_VMSTAT names (kq reads that file instead of /proc/vmstat, tests/integration's
// test_cli.cpp sets it) and takes a SIGKILL. kq must say the machine ran out of memory and leave
// the arm not judged, neither rejected nor qualified.
#include <signal.h>

#include <cstdlib>
#include <fstream>

#include "kq/contract.hpp"
#include "kq/export.hpp"
#include "test_arm.hpp"

namespace {

class OomKilled final : public kq_test::ScaleArm {
 public:
  OomKilled() : ScaleArm("test_oom_killed", 1.0f) {}

  kq::Status run(std::span<const kq::TensorView> inputs, std::span<const kq::TensorView> outputs,
                 void* stream) override {
    if (!outputs.empty() && outputs[0].numel() == 12345) {
      if (const char* vmstat = std::getenv("KQ_VMSTAT")) std::ofstream(vmstat) << "oom_kill 1\n";
      ::raise(SIGKILL);
    }
    return ScaleArm::run(inputs, outputs, stream);
  }
};

}  // namespace

static void make_arms(kq::ArmList& out) { out.push_back(std::make_unique<OomKilled>()); }
KQ_EXPORT_ARMS(make_arms)
