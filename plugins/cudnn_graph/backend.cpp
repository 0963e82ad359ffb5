#include "backend.hpp"

#include <array>
#include <utility>

namespace kq::cudnn_graph {

std::string describe(cudnnStatus_t s) {
  std::string out = cudnnGetErrorString(s);
  out += " (" + std::to_string(static_cast<int>(s)) + ")";
  // The last error message is per thread and describes the most recent failure in much more
  // detail than the status name ("tensor strides do not match the layout...").
  std::array<char, 1024> buf{};
  cudnnGetLastErrorString(buf.data(), buf.size());
  buf.back() = '\0';
  if (buf[0] != '\0') out += std::string(": ") + buf.data();
  return out;
}

Status checked(cudnnStatus_t s, const std::string& what) {
  if (s == CUDNN_STATUS_SUCCESS) return Status::ok();
  return Status::error(what + ": " + describe(s));
}

Desc& Desc::operator=(Desc&& o) noexcept {
  if (this != &o) {
    reset();
    d_ = std::exchange(o.d_, nullptr);
    type_ = o.type_;
  }
  return *this;
}

Status Desc::create(cudnnBackendDescriptorType_t type, Desc& out) {
  out.reset();
  out.type_ = type;
  return checked(cudnnBackendCreateDescriptor(type, &out.d_),
                 std::string("cudnnBackendCreateDescriptor(") + descriptor_type_name(type) + ")");
}

void Desc::reset() {
  if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
  d_ = nullptr;
}

std::string Desc::where(const char* call, const char* attr_name) const {
  return std::string(call) + "(" + descriptor_type_name(type_) + ", " + attr_name + ")";
}

Status Desc::set(cudnnBackendAttributeName_t attr, const char* attr_name,
                 cudnnBackendAttributeType_t type, std::int64_t count, const void* values) {
  return checked(cudnnBackendSetAttribute(d_, attr, type, count, values),
                 where("cudnnBackendSetAttribute", attr_name));
}

Status Desc::get(cudnnBackendAttributeName_t attr, const char* attr_name,
                 cudnnBackendAttributeType_t type, std::int64_t requested, std::int64_t* count,
                 void* values) const {
  return checked(cudnnBackendGetAttribute(d_, attr, type, requested, count, values),
                 where("cudnnBackendGetAttribute", attr_name));
}

Status Desc::finalize() {
  return checked(cudnnBackendFinalize(d_),
                 std::string("cudnnBackendFinalize(") + descriptor_type_name(type_) + ")");
}

Status Desc::set_i64(cudnnBackendAttributeName_t a, const char* n, std::int64_t v) {
  return set(a, n, CUDNN_TYPE_INT64, 1, &v);
}
Status Desc::set_i64s(cudnnBackendAttributeName_t a, const char* n,
                      const std::vector<std::int64_t>& v) {
  return set(a, n, CUDNN_TYPE_INT64, static_cast<std::int64_t>(v.size()), v.data());
}
Status Desc::set_bool(cudnnBackendAttributeName_t a, const char* n, bool v) {
  // CUDNN_TYPE_BOOLEAN is a C++ bool (one byte), as the frontend passes it.
  return set(a, n, CUDNN_TYPE_BOOLEAN, 1, &v);
}
Status Desc::set_double(cudnnBackendAttributeName_t a, const char* n, double v) {
  return set(a, n, CUDNN_TYPE_DOUBLE, 1, &v);
}
Status Desc::set_float(cudnnBackendAttributeName_t a, const char* n, float v) {
  return set(a, n, CUDNN_TYPE_FLOAT, 1, &v);
}
Status Desc::set_dtype(cudnnBackendAttributeName_t a, const char* n, cudnnDataType_t v) {
  return set(a, n, CUDNN_TYPE_DATA_TYPE, 1, &v);
}
Status Desc::set_desc(cudnnBackendAttributeName_t a, const char* n, cudnnBackendDescriptor_t v) {
  return set(a, n, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}
Status Desc::set_descs(cudnnBackendAttributeName_t a, const char* n,
                       const std::vector<cudnnBackendDescriptor_t>& v) {
  return set(a, n, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<std::int64_t>(v.size()), v.data());
}
Status Desc::set_handle(cudnnBackendAttributeName_t a, const char* n, cudnnHandle_t h) {
  return set(a, n, CUDNN_TYPE_HANDLE, 1, &h);
}

const char* descriptor_type_name(cudnnBackendDescriptorType_t t) {
  switch (t) {
    case CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
      return "POINTWISE";
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
      return "ENGINE";
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
      return "ENGINECFG";
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
      return "ENGINEHEUR";
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
      return "EXECUTION_PLAN";
    case CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR:
      return "KNOB_CHOICE";
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
      return "OPERATION_POINTWISE";
    case CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR:
      return "OPERATION_NORM_FORWARD";
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
      return "OPERATIONGRAPH";
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
      return "VARIANT_PACK";
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
      return "TENSOR";
    default:
      return "descriptor";
  }
}

const char* pointwise_mode_name(cudnnPointwiseMode_t m) {
  switch (m) {
    case CUDNN_POINTWISE_ADD:
      return "ADD";
    case CUDNN_POINTWISE_SUB:
      return "SUB";
    case CUDNN_POINTWISE_MUL:
      return "MUL";
    case CUDNN_POINTWISE_DIV:
      return "DIV";
    case CUDNN_POINTWISE_MAX:
      return "MAX";
    case CUDNN_POINTWISE_MIN:
      return "MIN";
    case CUDNN_POINTWISE_ABS:
      return "ABS";
    case CUDNN_POINTWISE_EXP:
      return "EXP";
    case CUDNN_POINTWISE_LOG:
      return "LOG";
    case CUDNN_POINTWISE_NEG:
      return "NEG";
    case CUDNN_POINTWISE_SQRT:
      return "SQRT";
    case CUDNN_POINTWISE_ERF:
      return "ERF";
    case CUDNN_POINTWISE_IDENTITY:
      return "IDENTITY";
    case CUDNN_POINTWISE_RELU_FWD:
      return "RELU_FWD";
    case CUDNN_POINTWISE_TANH_FWD:
      return "TANH_FWD";
    case CUDNN_POINTWISE_SIGMOID_FWD:
      return "SIGMOID_FWD";
    case CUDNN_POINTWISE_GELU_FWD:
      return "GELU_FWD";
    case CUDNN_POINTWISE_SWISH_FWD:
      return "SWISH_FWD";
    case CUDNN_POINTWISE_CMP_EQ:
      return "CMP_EQ";
    case CUDNN_POINTWISE_CMP_NEQ:
      return "CMP_NEQ";
    case CUDNN_POINTWISE_CMP_GT:
      return "CMP_GT";
    case CUDNN_POINTWISE_CMP_GE:
      return "CMP_GE";
    case CUDNN_POINTWISE_CMP_LT:
      return "CMP_LT";
    case CUDNN_POINTWISE_CMP_LE:
      return "CMP_LE";
    case CUDNN_POINTWISE_LOGICAL_NOT:
      return "LOGICAL_NOT";
    case CUDNN_POINTWISE_BINARY_SELECT:
      return "BINARY_SELECT";
    default:
      return "pointwise";
  }
}

const char* numerical_note_name(cudnnBackendNumericalNote_t n) {
  switch (n) {
    case CUDNN_NUMERICAL_NOTE_TENSOR_CORE:
      return "TENSOR_CORE";
    case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS:
      return "DOWN_CONVERT_INPUTS";
    case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
      return "REDUCED_PRECISION_REDUCTION";
    case CUDNN_NUMERICAL_NOTE_FFT:
      return "FFT";
    case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC:
      return "NONDETERMINISTIC";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD:
      return "WINOGRAD";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4:
      return "WINOGRAD_TILE_4x4";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6:
      return "WINOGRAD_TILE_6x6";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13:
      return "WINOGRAD_TILE_13x13";
    case CUDNN_NUMERICAL_NOTE_STRICT_NAN_PROP:
      return "STRICT_NAN_PROP";
    default:
      return "numerical_note";
  }
}

const char* behavior_note_name(cudnnBackendBehaviorNote_t n) {
  // Numeric cases: the GPU host's cuDNN 9.14 headers lack some of the 9.19 names.
  switch (static_cast<int>(n)) {
    case 0:
      return "RUNTIME_COMPILATION";
    case 1:
      return "REQUIRES_FILTER_INT8x32_REORDER";
    case 2:
      return "REQUIRES_BIAS_INT8x32_REORDER";
    case 3:
      return "SUPPORTS_CUDA_GRAPH_NATIVE_API";
    case 4:
      return "CUBLASLT_DEPENDENCY";
    default:
      return "behavior_note";
  }
}

const char* knob_type_name(cudnnBackendKnobType_t k) {
  if (static_cast<int>(k) == 43) return "SWAP_AB";  // not in the 9.14 headers
  switch (k) {
    case CUDNN_KNOB_TYPE_SWIZZLE:
      return "SWIZZLE";
    case CUDNN_KNOB_TYPE_TILE_SIZE:
      return "TILE_SIZE";
    case CUDNN_KNOB_TYPE_EDGE:
      return "EDGE";
    case CUDNN_KNOB_TYPE_MULTIPLY:
      return "MULTIPLY";
    case CUDNN_KNOB_TYPE_SPLIT_K_BUF:
      return "SPLIT_K_BUF";
    case CUDNN_KNOB_TYPE_TILEK:
      return "TILEK";
    case CUDNN_KNOB_TYPE_STAGES:
      return "STAGES";
    case CUDNN_KNOB_TYPE_REDUCTION_MODE:
      return "REDUCTION_MODE";
    case CUDNN_KNOB_TYPE_SPLIT_K_SLC:
      return "SPLIT_K_SLC";
    case CUDNN_KNOB_TYPE_IDX_MODE:
      return "IDX_MODE";
    case CUDNN_KNOB_TYPE_SPECFILT:
      return "SPECFILT";
    case CUDNN_KNOB_TYPE_KERNEL_CFG:
      return "KERNEL_CFG";
    case CUDNN_KNOB_TYPE_WORKSPACE:
      return "WORKSPACE";
    case CUDNN_KNOB_TYPE_TILE_CGA_M:
      return "TILE_CGA_M";
    case CUDNN_KNOB_TYPE_TILE_CGA_N:
      return "TILE_CGA_N";
    case CUDNN_KNOB_TYPE_BLOCK_SIZE:
      return "BLOCK_SIZE";
    case CUDNN_KNOB_TYPE_OCCUPANCY:
      return "OCCUPANCY";
    case CUDNN_KNOB_TYPE_ARRAY_SIZE_PER_THREAD:
      return "ARRAY_SIZE_PER_THREAD";
    case CUDNN_KNOB_TYPE_SPLIT_COLS:
      return "SPLIT_COLS";
    case CUDNN_KNOB_TYPE_TILE_ROWS:
      return "TILE_ROWS";
    case CUDNN_KNOB_TYPE_TILE_COLS:
      return "TILE_COLS";
    case CUDNN_KNOB_TYPE_LOAD_SIZE:
      return "LOAD_SIZE";
    case CUDNN_KNOB_TYPE_CTA_COUNT:
      return "CTA_COUNT";
    case CUDNN_KNOB_TYPE_STREAM_K:
      return "STREAM_K";
    case CUDNN_KNOB_TYPE_SPLIT_P_SLC:
      return "SPLIT_P_SLC";
    case CUDNN_KNOB_TYPE_TILE_M:
      return "TILE_M";
    case CUDNN_KNOB_TYPE_TILE_N:
      return "TILE_N";
    case CUDNN_KNOB_TYPE_WARP_SPEC_CFG:
      return "WARP_SPEC_CFG";
    default:
      return nullptr;
  }
}

}  // namespace kq::cudnn_graph
