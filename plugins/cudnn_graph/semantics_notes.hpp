// What this arm expects of cuDNN's pointwise semantics against kq's definitions, shipped as a
// "notes" artifact so that a qualification verdict can be read against it.
#pragma once
#include <string>

namespace kq::cudnn_graph {
std::string semantics_notes();
}  // namespace kq::cudnn_graph
