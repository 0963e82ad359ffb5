// A plugin that loads one arm and reports what it could not load of its own (kq_load_problems):
// the host lists each problem as a load error and keeps the arm. It also reports its environment
// (kq_plugin_environment), which reaches kq list and the run's manifest.
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
static void environment(kq::EnvironmentFacts& out) {
  out.push_back({"python", "3.12.3 (main, test build)"});
  out.push_back({"torch", "absent"});
  out.push_back({"note", "two\nlines"});  // the host makes it one
}
KQ_EXPORT_ARMS(make_arms)
KQ_EXPORT_LOAD_PROBLEMS(problems)
KQ_EXPORT_ENVIRONMENT(environment)
