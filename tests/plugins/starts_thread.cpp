// A plugin whose load starts a thread that outlives it (arm test_threaded, out = 3x): kq names
// the thread in kq list and times the plugin's arms in a worker of their own.
#include <dlfcn.h>

#include <chrono>
#include <memory>
#include <thread>

#include "kq/export.hpp"
#include "test_arm.hpp"

static void make_arms(kq::ArmList& out) {
  static const bool started = [] {
    // Kept loaded when kq unloads it: the thread's code must stay mapped while it runs.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&make_arms), &info) && info.dli_fname)
      dlopen(info.dli_fname, RTLD_NOW | RTLD_NODELETE | RTLD_NOLOAD);
    std::thread([] {
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }).detach();
    return true;
  }();
  (void)started;
  out.push_back(std::make_unique<kq_test::ScaleArm>("test_threaded", 3.0f));
}
KQ_EXPORT_ARMS(make_arms)
