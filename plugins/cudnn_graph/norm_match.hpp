// Which format-2 specs cudnn_norm computes, recognised by structure only: the program's canonical
// form (kq/indexed_text.hpp) against those of layer norm and RMS norm over every dim but the
// first, with or without weight and bias, the statistics outputs or temporaries. Pure (no cuDNN
// call), so that the recognition and every reason for declining are tested without a GPU.
#pragma once
#include <string>

#include "kq/op_spec.hpp"
#include "kq/status.hpp"

namespace kq::cudnn_graph {

enum class NormKind { layer, rms };

// The forms recognised. Inputs are x (in0), then the weight and the bias where present; outputs
// are y (out0), then, in training form, the statistics: layer norm's mean and rstd, RMS norm's
// rstd. In inference form the statistics are temporaries.
struct NormForm {
  NormKind kind = NormKind::layer;
  int rank = 2;           // of x: normalised over dims 1 .. rank-1, one row per index of dim 0
  bool training = false;  // the statistics are outputs (CUDNN_NORM_FWD_TRAINING)
  bool scale = false;     // a weight input, w[d1, ...]
  bool bias = false;      // a bias input, b[d1, ...] (layer norm only)
};

// The canonical text of a form, as `kq check-spec` would print it for such a spec.
std::string canonical_of(const NormForm& f);

// What a recognised spec asks of the graph.
struct NormMatch {
  NormForm form;
  double eps = 0.0;  // the value of the param the statements add under the root (p0)
  DType x = DType::f32, y = DType::f32, scale = DType::f32, bias = DType::f32;
};

// ok and `out` filled when the spec is one of the forms and inside what the arm computes
// (dtypes f32, f16 or bf16, statistics in f32, compute f32, domain finite, contiguous views);
// otherwise unsupported with the reason. Softmax and log-softmax get their own reason: cuDNN's
// graph API has no standalone softmax operation.
Status match_norm(const OpSpec& spec, NormMatch& out);

// The computation in words, for notes and messages: "layer norm over 1 dim, training (y, mean,
// rstd), weight and bias".
std::string norm_words(const NormForm& f);

}  // namespace kq::cudnn_graph
