// A well-formed plugin that makes no arms.
#include "kq/export.hpp"

static void make_arms(kq::ArmList& /*out*/) {}
KQ_EXPORT_ARMS(make_arms)
