#include "norm_graph.hpp"

#include <utility>

namespace kq::cudnn_graph {

namespace {

std::string dims_text(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
  return s + "]";
}

const char* type_name(cudnnDataType_t t) {
  switch (t) {
    case CUDNN_DATA_HALF:
      return "HALF";
    case CUDNN_DATA_BFLOAT16:
      return "BFLOAT16";
    default:
      return "FLOAT";
  }
}

struct TensorSpec {
  const char* name;
  std::int64_t uid;
  cudnnDataType_t type;
  std::vector<std::int64_t> dims, strides;
  bool by_value = false;
};

class NormBuilder {
 public:
  NormBuilder(cudnnHandle_t h, const NormMatch& m, const NormDims& d, std::int64_t align,
              NormGraph& g)
      : h_(h), m_(m), d_(d), align_(align), g_(g) {}

  Status run() {
    const std::int64_t r = d_.rows, c = d_.cols;
    const std::vector<std::int64_t> row_dims{r, c, 1, 1}, row_strides{c, 1, c, c};
    const std::vector<std::int64_t> w_dims{1, c, 1, 1}, w_strides{c, 1, c, c};
    const std::vector<std::int64_t> stat_dims{r, 1, 1, 1}, ones{1, 1, 1, 1};
    const bool layer = m_.form.kind == NormKind::layer;
    const bool training = m_.form.training;
    g_.form = m_.form;
    g_.eps.value = static_cast<float>(m_.eps);

    cudnnBackendDescriptor_t x, scale, bias = nullptr, eps, y, mean = nullptr, inv = nullptr;
    Status s = tensor({"x", kNormUidX, cudnn_type(m_.x), row_dims, row_strides}, x);
    if (s.is_ok())
      s = tensor({"scale", kNormUidScale, cudnn_type(m_.scale), w_dims, w_strides}, scale);
    if (s.is_ok() && layer)
      s = tensor({"bias", kNormUidBias, cudnn_type(m_.bias), w_dims, w_strides}, bias);
    if (s.is_ok()) s = tensor({"epsilon", kNormUidEps, CUDNN_DATA_FLOAT, ones, ones, true}, eps);
    if (s.is_ok()) s = tensor({"y", kNormUidY, cudnn_type(m_.y), row_dims, row_strides}, y);
    if (s.is_ok() && layer && training)
      s = tensor({"mean", kNormUidMean, CUDNN_DATA_FLOAT, stat_dims, ones}, mean);
    if (s.is_ok() && training)
      s = tensor({"inv_variance", kNormUidInvVariance, CUDNN_DATA_FLOAT, stat_dims, ones}, inv);
    if (!s.is_ok()) return s;

    Desc op;
    const cudnnBackendNormMode_t mode = layer ? CUDNN_LAYER_NORM : CUDNN_RMS_NORM;
    const cudnnBackendNormFwdPhase_t phase =
        training ? CUDNN_NORM_FWD_TRAINING : CUDNN_NORM_FWD_INFERENCE;
    s = Desc::create(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, op);
    if (s.is_ok())
      s = op.set(KQ_ATTR(CUDNN_ATTR_OPERATION_NORM_FWD_MODE), CUDNN_TYPE_NORM_MODE, 1, &mode);
    if (s.is_ok())
      s = op.set(KQ_ATTR(CUDNN_ATTR_OPERATION_NORM_FWD_PHASE), CUDNN_TYPE_NORM_FWD_PHASE, 1,
                 &phase);
    if (s.is_ok()) s = op.set_desc(KQ_ATTR(CUDNN_ATTR_OPERATION_NORM_FWD_XDESC), x);
    if (s.is_ok()) s = op.set_desc(KQ_ATTR(CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC), scale);
    if (s.is_ok() && bias) s = op.set_desc(KQ_ATTR(CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC), bias);
    if (s.is_ok()) s = op.set_desc(KQ_ATTR(CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC), eps);
    if (s.is_ok()) s = op.set_desc(KQ_ATTR(CUDNN_ATTR_OPERATION_NORM_FWD_YDESC), y);
    if (s.is_ok() && mean) s = op.set_desc(KQ_ATTR(CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC), mean);
    if (s.is_ok() && inv)
      s = op.set_desc(KQ_ATTR(CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC), inv);
    if (s.is_ok()) s = op.finalize();
    if (!s.is_ok()) return decline_if_not_supported(s);
    g_.lines.push_back(std::string("NORM_FORWARD mode ") + (layer ? "LAYER_NORM" : "RMS_NORM") +
                       ", phase " + (training ? "TRAINING" : "INFERENCE") + ", epsilon " +
                       std::to_string(g_.eps.value));
    std::vector<cudnnBackendDescriptor_t> ops{op.get()};
    g_.keep.push_back(std::move(op));

    s = Desc::create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, g_.graph);
    if (s.is_ok()) s = g_.graph.set_descs(KQ_ATTR(CUDNN_ATTR_OPERATIONGRAPH_OPS), ops);
    // Deprecated in cuDNN 9 but still read by 9.x; the frontend sets it too.
    if (s.is_ok()) s = g_.graph.set_handle(KQ_ATTR(CUDNN_ATTR_OPERATIONGRAPH_HANDLE), h_);
    if (s.is_ok()) s = g_.graph.finalize();
    return decline_if_not_supported(s);
  }

 private:
  // One tensor descriptor; a failure names the tensor as well as the attribute.
  Status tensor(const TensorSpec& t, cudnnBackendDescriptor_t& out) {
    Desc d;
    // Only by-value tensors have no device pointer; 16 is the frontend's default for them.
    const std::int64_t align = t.by_value ? 16 : align_;
    Status s = Desc::create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, d);
    if (s.is_ok()) s = d.set_i64(KQ_ATTR(CUDNN_ATTR_TENSOR_UNIQUE_ID), t.uid);
    if (s.is_ok()) s = d.set_dtype(KQ_ATTR(CUDNN_ATTR_TENSOR_DATA_TYPE), t.type);
    if (s.is_ok()) s = d.set_i64(KQ_ATTR(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT), align);
    if (s.is_ok()) s = d.set_i64s(KQ_ATTR(CUDNN_ATTR_TENSOR_DIMENSIONS), t.dims);
    if (s.is_ok()) s = d.set_i64s(KQ_ATTR(CUDNN_ATTR_TENSOR_STRIDES), t.strides);
    if (s.is_ok() && t.by_value) s = d.set_bool(KQ_ATTR(CUDNN_ATTR_TENSOR_IS_BY_VALUE), true);
    if (s.is_ok()) s = d.finalize();
    const std::string what = std::string(t.name) + " " + type_name(t.type) + " " +
                             dims_text(t.dims) + " strides " + dims_text(t.strides) +
                             (t.by_value ? " by value" : "");
    if (!s.is_ok())
      return decline_if_not_supported(Status::error("tensor " + what + ": " + s.message()));
    g_.lines.push_back("tensor " + what);
    out = d.get();
    g_.keep.push_back(std::move(d));
    return Status::ok();
  }

  cudnnHandle_t h_;
  const NormMatch& m_;
  const NormDims& d_;
  std::int64_t align_;
  NormGraph& g_;
};

}  // namespace

cudnnDataType_t cudnn_type(DType t) {
  switch (t) {
    case DType::f16:
      return CUDNN_DATA_HALF;
    case DType::bf16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

Status decline_if_not_supported(Status s) {
  // cudnnGetErrorString spells every status of the family CUDNN_STATUS_NOT_SUPPORTED...
  if (s.is_error() && s.message().find("CUDNN_STATUS_NOT_SUPPORTED") != std::string::npos)
    return Status::unsupported(s.message());
  return s;
}

Status build_norm_graph(cudnnHandle_t handle, const NormMatch& m, const NormDims& d,
                        std::int64_t alignment, NormGraph& out) {
  return NormBuilder(handle, m, d, alignment, out).run();
}

Status make_norm_pack(const NormGraph& g, const NormPointers& p, void* workspace, Desc& out) {
  const bool layer = g.form.kind == NormKind::layer;
  std::vector<std::int64_t> uids{kNormUidX, kNormUidScale, kNormUidEps, kNormUidY};
  // A by-value tensor takes a host pointer to its value.
  std::vector<void*> ptrs{p.x, p.scale, const_cast<float*>(&g.eps.value), p.y};
  if (layer) {
    uids.push_back(kNormUidBias);
    ptrs.push_back(p.bias);
  }
  if (layer && g.form.training) {
    uids.push_back(kNormUidMean);
    ptrs.push_back(p.mean);
  }
  if (g.form.training) {
    uids.push_back(kNormUidInvVariance);
    ptrs.push_back(p.inv_variance);
  }
  Status s = Desc::create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, out);
  if (s.is_ok())
    s = out.set(KQ_ATTR(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS), CUDNN_TYPE_VOID_PTR,
                static_cast<std::int64_t>(ptrs.size()), ptrs.data());
  if (s.is_ok()) s = out.set_i64s(KQ_ATTR(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS), uids);
  if (s.is_ok())
    s = out.set(KQ_ATTR(CUDNN_ATTR_VARIANT_PACK_WORKSPACE), CUDNN_TYPE_VOID_PTR, 1, &workspace);
  if (s.is_ok()) s = out.finalize();
  return s;
}

}  // namespace kq::cudnn_graph
