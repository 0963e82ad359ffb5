// A plugin that loads one arm and reports what it could not load of its own (kq_load_problems):
// the host lists each problem as a load error and keeps the arm.
#include <memory>

#include "kq/export.hpp"
#include "test_arm.hpp"

static void make_arms(kq::ArmList& out) {
  out.push_back(std::make_unique<kq_test::ScaleArm>("test_triple", 3.0f));
}
static void problems(kq::LoadProblems& out) {
  out.push_back({"arms/first.py", "cannot import: line 3: SyntaxError: expected ':'"});
  out.push_back({"arms/second.py", "cannot import: ModuleNotFoundError: no module\nnamed x"});
}
KQ_EXPORT_ARMS(make_arms)
KQ_EXPORT_LOAD_PROBLEMS(problems)
