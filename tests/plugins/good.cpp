// The good plugin: two arms, test_copy (out = in0) and test_negate (out = -in0).
#include <memory>

#include "kq/export.hpp"
#include "test_arm.hpp"

static void make_arms(kq::ArmList& out) {
  out.push_back(std::make_unique<kq_test::ScaleArm>("test_copy", 1.0f));
  out.push_back(std::make_unique<kq_test::ScaleArm>("test_negate", -1.0f));
}
KQ_EXPORT_ARMS(make_arms)
