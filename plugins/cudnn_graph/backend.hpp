// RAII ownership of cuDNN backend descriptors, and checked calls that turn a failing
// cudnnBackend* call into a kq::Status carrying cuDNN's own words (cudnnGetErrorString plus
// cudnnGetLastErrorString), the descriptor type and the attribute involved. Most mistakes with
// the backend API are a wrong attribute type or element count, so every message names both.
#pragma once
#include <cudnn.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kq/status.hpp"

namespace kq::cudnn_graph {

// "CUDNN_STATUS_BAD_PARAM (2000): <cuDNN's last error message, if any>".
std::string describe(cudnnStatus_t s);

// ok when s is CUDNN_STATUS_SUCCESS, otherwise Status::error("<what>: <describe(s)>").
Status checked(cudnnStatus_t s, const std::string& what);

// Passes an attribute's enum value and its spelled name together: set(KQ_ATTR(CUDNN_ATTR_X), ...).
#define KQ_ATTR(a) a, #a

// One backend descriptor, destroyed with the object. Move-only.
class Desc {
 public:
  Desc() = default;
  ~Desc() { reset(); }
  Desc(Desc&& o) noexcept : d_(o.d_), type_(o.type_) { o.d_ = nullptr; }
  Desc& operator=(Desc&& o) noexcept;
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;

  // Creates a descriptor of `type`; `out` is reset first.
  static Status create(cudnnBackendDescriptorType_t type, Desc& out);

  void reset();
  cudnnBackendDescriptor_t get() const { return d_; }
  // Address of the raw handle, for attributes that take an array of descriptors.
  cudnnBackendDescriptor_t* addr() { return &d_; }
  explicit operator bool() const { return d_ != nullptr; }
  cudnnBackendDescriptorType_t type() const { return type_; }

  Status set(cudnnBackendAttributeName_t attr, const char* attr_name,
             cudnnBackendAttributeType_t type, std::int64_t count, const void* values);
  Status get(cudnnBackendAttributeName_t attr, const char* attr_name,
             cudnnBackendAttributeType_t type, std::int64_t requested, std::int64_t* count,
             void* values) const;
  Status finalize();

  // Typed shorthands: the attribute type and element count follow from the C++ type.
  Status set_i64(cudnnBackendAttributeName_t a, const char* n, std::int64_t v);
  Status set_i64s(cudnnBackendAttributeName_t a, const char* n, const std::vector<std::int64_t>& v);
  Status set_bool(cudnnBackendAttributeName_t a, const char* n, bool v);
  Status set_double(cudnnBackendAttributeName_t a, const char* n, double v);
  Status set_float(cudnnBackendAttributeName_t a, const char* n, float v);
  Status set_dtype(cudnnBackendAttributeName_t a, const char* n, cudnnDataType_t v);
  Status set_desc(cudnnBackendAttributeName_t a, const char* n, cudnnBackendDescriptor_t v);
  Status set_descs(cudnnBackendAttributeName_t a, const char* n,
                   const std::vector<cudnnBackendDescriptor_t>& v);
  Status set_handle(cudnnBackendAttributeName_t a, const char* n, cudnnHandle_t h);

 private:
  std::string where(const char* call, const char* attr_name) const;
  cudnnBackendDescriptor_t d_ = nullptr;
  cudnnBackendDescriptorType_t type_ = CUDNN_BACKEND_POINTWISE_DESCRIPTOR;
};

const char* descriptor_type_name(cudnnBackendDescriptorType_t t);
const char* pointwise_mode_name(cudnnPointwiseMode_t m);
const char* numerical_note_name(cudnnBackendNumericalNote_t n);
const char* behavior_note_name(cudnnBackendBehaviorNote_t n);
const char* knob_type_name(cudnnBackendKnobType_t k);

}  // namespace kq::cudnn_graph
