// Calls a function that no library defines. Shared objects may link with undefined symbols, so
// this builds; immediate binding at load must report it.
#include "kq/export.hpp"

__attribute__((visibility("default"))) void kq_test_never_defined(int);

static void make_arms(kq::ArmList& /*out*/) { kq_test_never_defined(1); }
KQ_EXPORT_ARMS(make_arms)
