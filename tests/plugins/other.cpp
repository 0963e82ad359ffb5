// A second good plugin with one arm (test_double), in its own folder: the search tests tell which
// folders were read by which arms came back.
#include <memory>

#include "kq/export.hpp"
#include "test_arm.hpp"

static void make_arms(kq::ArmList& out) {
  out.push_back(std::make_unique<kq_test::ScaleArm>("test_double", 2.0f));
}
KQ_EXPORT_ARMS(make_arms)
