// Claims ABI version 999. Its create function would add an arm; the loader must never call it.
#include <cstdint>
#include <memory>

#include "kq/export.hpp"
#include "test_arm.hpp"

namespace {
std::uint32_t wrong_abi_version() { return 999; }
void make_arms(kq::ArmList& out) {
  out.push_back(std::make_unique<kq_test::ScaleArm>("test_abi_mismatch", 1.0f));
}
}  // namespace

KQ_PLUGIN_ALIAS_(wrong_abi_version, kq_abi_version)
KQ_PLUGIN_ALIAS_(make_arms, kq_create_arms)
