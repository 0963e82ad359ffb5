// Two arms: one whose identity() throws, and a well-behaved one that must still load.
#include <memory>
#include <stdexcept>

#include "kq/export.hpp"
#include "test_arm.hpp"

namespace {
class NoIdentityArm : public kq_test::ScaleArm {
 public:
  NoIdentityArm() : ScaleArm("unused", 1.0f) {}
  kq::ArmIdentity identity() const override { throw std::logic_error("no identity here"); }
};
}  // namespace

static void make_arms(kq::ArmList& out) {
  out.push_back(std::make_unique<NoIdentityArm>());
  out.push_back(std::make_unique<kq_test::ScaleArm>("test_identity_survivor", 1.0f));
}
KQ_EXPORT_ARMS(make_arms)
