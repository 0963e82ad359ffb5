// Exports kq_create_arms but not kq_abi_version (a plugin from before the ABI check, say).
#include <memory>

#include "kq/export.hpp"
#include "test_arm.hpp"

namespace {
void make_arms(kq::ArmList& out) {
  out.push_back(std::make_unique<kq_test::ScaleArm>("test_no_abi", 1.0f));
}
}  // namespace

KQ_PLUGIN_ALIAS_(make_arms, kq_create_arms)
