// Appends a null arm pointer.
#include "kq/export.hpp"

static void make_arms(kq::ArmList& out) { out.push_back(nullptr); }
KQ_EXPORT_ARMS(make_arms)
