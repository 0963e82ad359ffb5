// Its create function makes one arm, then throws a std::runtime_error.
#include <memory>
#include <stdexcept>

#include "kq/export.hpp"
#include "test_arm.hpp"

static void make_arms(kq::ArmList& out) {
  out.push_back(std::make_unique<kq_test::ScaleArm>("test_create_throws", 1.0f));
  throw std::runtime_error("boom");
}
KQ_EXPORT_ARMS(make_arms)
