// Offers an arm named test_copy, which the good plugin already provides, and one of its own.
// Its file name sorts after libkq_test_good.so, so in a shared folder the good plugin keeps the
// name and this copy is the one refused.
#include <memory>

#include "kq/export.hpp"
#include "test_arm.hpp"

static void make_arms(kq::ArmList& out) {
  out.push_back(std::make_unique<kq_test::ScaleArm>("test_copy", 3.0f));
  out.push_back(std::make_unique<kq_test::ScaleArm>("test_taken_name_own", 1.0f));
}
KQ_EXPORT_ARMS(make_arms)
