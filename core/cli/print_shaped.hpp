// What `kq check-spec` prints for a format-2 (shaped) spec: its dims, tensors, statements,
// compare rules and points, each point with its bytes and FLOPs.
#pragma once
#include <ostream>

#include "spec/spec.hpp"

namespace kq::cli {

void print_shaped_summary(std::ostream& out, const Spec& spec);

}  // namespace kq::cli
