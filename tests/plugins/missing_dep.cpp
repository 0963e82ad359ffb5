// Links against libkq_missing_dep.so (DT_NEEDED) without an rpath to it.
#include <memory>

#include "kq/export.hpp"
#include "test_arm.hpp"

extern "C" int kq_missing_dep_value();

static void make_arms(kq::ArmList& out) {
  // A real use, so that --as-needed linkers keep the dependency.
  if (kq_missing_dep_value() == 7) {
    out.push_back(std::make_unique<kq_test::ScaleArm>("test_missing_dep", 1.0f));
  }
}
KQ_EXPORT_ARMS(make_arms)
