// cudnn_norm: layer norm and RMS norm of format-2 specs as one cuDNN NORM_FORWARD operation
// (norm_match.hpp says which specs, norm_graph.hpp how the graph is laid out).
#pragma once
#include "kq/plugin_api.hpp"

namespace kq::cudnn_graph {

// Appends cudnn_norm to the plugin's arms.
void add_norm_arm(ArmList& out);

}  // namespace kq::cudnn_graph
