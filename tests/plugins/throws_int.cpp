// Its create function throws something that is not a std::exception.
#include "kq/export.hpp"

static void make_arms(kq::ArmList& /*out*/) { throw 42; }
KQ_EXPORT_ARMS(make_arms)
