// One arm with an empty name.
#include <memory>

#include "kq/export.hpp"
#include "test_arm.hpp"

static void make_arms(kq::ArmList& out) {
  out.push_back(std::make_unique<kq_test::ScaleArm>("", 1.0f));
}
KQ_EXPORT_ARMS(make_arms)
