#include "semantics_notes.hpp"

namespace kq::cudnn_graph {

std::string semantics_notes() {
  return R"(# cuDNN pointwise semantics against kq's definitions

Measured on one H200 with cuDNN 9.14 through this plugin's GPU test (tests/gpu/test_cudnn_graph.cpp);
engine 1 (runtime fusion, NVRTC-compiled) was the only engine proposed for these graphs. The
qualification is the authority; this says what to expect and why the graph looks as it does.

- relu. CUDNN_POINTWISE_RELU_FWD (lower clip 0, slope 0, upper clip left unset) gives
  relu(-0) = -0 where kq defines +0. Everything else matched: NaN propagates, +inf stays +inf (no
  FLT_MAX clip with the upper clip unset), denormals pass, negatives give +0. cudnn_pointwise
  therefore lowers relu as RELU_FWD followed by ADD(+0): -0 + +0 = +0 in round to nearest and
  adding +0 changes no other value; the +0 is a by-value kernel parameter, so it is not folded. It
  matched kq bit for bit on -0, +0, NaN, +-inf, denormals, overflowing sums and random data at
  1 to 2^24 elements, and cost nothing measurable (2^24: 54.9 us against 53.9 us for RELU_FWD
  alone: medians of back-to-back executions in the search, no L2 flush). The variant cudnn_pointwise_relu_fwd keeps RELU_FWD alone
  and is declared known-broken (expected rejection: values); it is offered for relu specs only.
  A select(!(x <= 0), x, +0) lowering (CMP_LE, LOGICAL_NOT, BINARY_SELECT with BOOLEAN masks) was
  exact too, but NVRTC failed to compile its kernel for shapings such as NHWC {3,341,1,1},
  {1,3,1,1} and {919,1141,1,1} (CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED).
- gelu is CUDNN_POINTWISE_GELU_FWD, the erf form 0.5x(1 + erf(x/sqrt2)) (GELU_APPROX_TANH_FWD is
  the tanh approximation, not used): within 1 ulp of the float64 reference on [-6, 6].
- silu is CUDNN_POINTWISE_SWISH_FWD with swish beta 1, x * sigmoid(x): silu(x) * y within 3 ulp.
- select(c, a, b) is BINARY_SELECT(x = a, b = b, t = mask), t ? a : b, the mask being the
  comparison itself with a BOOLEAN output, or CMP_NEQ(c, 0) (true for NaN, as kq wants).
  select(x > 0, x, 0.01 * x) and select(x, y, 0.25) ran at 65536 elements; given the compile
  failures above, BOOLEAN masks may fail to compile at some sizes: prepare() then refuses.
- Comparisons used as values are CMP_* with a FLOAT output: (x > y) * y matched bit for bit.
- clamp(x, lo, hi) is MIN(MAX(x, lo), hi): matched bit for bit on finite data. cuDNN's MAX/MIN on
  NaN and on -0/+0 were not measured: ieee-domain specs with max/min/clamp are the
  qualification's to decide.
- c - x is NEG(x) then ADD(., c) (exact). A graph with ALPHA1 = -1 got no engine configuration.
- Constants are pass-by-value FLOAT scalars {1,...,1} broadcast as the B operand; the spec's
  double constant is rounded to float first, so 0.01 * x differs from the float64 reference's
  single rounding in up to 1 ulp.
- Transcendentals (exp, tanh, sigmoid, erf) are cuDNN's own approximations: tanh(x) * exp(y) was
  up to 159-168 ulp from the float64 reference on [-6, 6], 1 - sigmoid(x) 2 ulp.
- Single-rounding expressions (x + y, 0.5 - x, max(x, y) - min(x, 0.5), clamp) matched bit for bit.
- The engine reports the numerical note TENSOR_CORE even for these pointwise graphs; the math
  precision is FLOAT and the results are those of float arithmetic.
)";
}

std::string norm_semantics_notes() {
  return R"(# cuDNN NORM_FORWARD against kq's layer norm and RMS norm statements

Not yet measured on the GPU host; the qualification is the authority. What the graph is:

- One CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, mode LAYER_NORM or RMS_NORM, recognised by
  the program's canonical form only (plugins/cudnn_graph/norm_match.cpp): the statistics as
  outputs (y, mean, rstd; RMS: y, rstd) give phase TRAINING, as temporaries phase INFERENCE.
- x and y are [rows, cols, 1, 1] with strides [cols, 1, cols, cols]: rows is x's first extent,
  cols the product of the others (the elements one row is normalised over). The weight and bias
  are [1, cols, 1, 1]; mean and inv_variance [rows, 1, 1, 1] in FLOAT.
- inv_variance is cuDNN's name for 1 / sqrt(var + eps), the spec's rstd; the variance is the
  biased one (divided by cols), as the statements define it.
- eps is the param the statements add under the root, passed as a by-value FLOAT scalar: rounded
  to float once (1e-5 moves by about 1e-13).
- A spec without a weight gets a buffer of ones, without a bias (layer norm) a buffer of zeros,
  in the dtype of the other or of x: the graph computes (x - mean) * rstd * 1 + 0, which is the
  same value in float.
- How cuDNN accumulates the row sums (one or two passes, the order) is its own: the qualification
  judges it against the spec's compare rules.
)";
}

}  // namespace kq::cudnn_graph
