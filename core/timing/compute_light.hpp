// The compute light of a matrix product's timed point: the vendor's GEMM (cuBLASLt) of a large
// square shape, 4096^3, in the product's operand type and the spec's compute type, timed among
// the arms like the device copy is (timing/light.hpp). It is the rate a tuned kernel reaches on
// this GPU in this run; the summary weighs each arm's TFLOP/s against it and the roofline picks
// it as the light where a point's arithmetic intensity is above the GPU's ridge.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "device/stream.hpp"
#include "kq/tensor.hpp"
#include "spec/spec.hpp"

namespace kq {

struct Light;
struct GemmLight;  // cuBLASLt's handle, plan and operands; defined in compute_light.cpp

// What the vendor GEMM computes: the product's operand type and whether TF32 is admitted.
struct GemmLightType {
  DType operands = DType::f32;
  bool tf32 = false;
};

// The type of the product among a format-2 spec's statements (kq::ix::match_product), or
// nullopt where the spec holds none.
std::optional<GemmLightType> product_type(const Spec& spec);

// The vendor GEMM (cuBLASLt's handle, plan and operands), built and called once, or nullptr
// with *why (no cuBLASLt in this build, no algorithm for the type, no device memory for the
// operands). Built once per timing run and shared by its points: the operands' random contents
// take a second of host time.
std::shared_ptr<GemmLight> make_gemm_light(GemmLightType type, std::string* why);

// The compute light of one point: `gemm` timed on `stream`.
std::unique_ptr<Light> make_compute_light(const std::shared_ptr<GemmLight>& gemm,
                                          bool blocking_kernel,
                                          const std::shared_ptr<Stream>& stream);

// Enqueues one product on the light's stream.
void enqueue_gemm_light(GemmLight& g, void* stream);

// "bf16 4096^3 (f32 accumulation)": what the light computes, for the reports.
std::string gemm_light_what(GemmLightType type);

}  // namespace kq
