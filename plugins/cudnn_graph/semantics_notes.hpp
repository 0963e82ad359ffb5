// What cudnn_pointwise expects of cuDNN's pointwise semantics against kq's definitions, shipped as
// a "notes" artifact so that a qualification verdict can be read against it.
#pragma once
#include <string>

namespace kq::cudnn_graph {
std::string semantics_notes();
// The same for cudnn_norm: what its NORM_FORWARD graph computes against the spec's statements.
std::string norm_semantics_notes();
}  // namespace kq::cudnn_graph
