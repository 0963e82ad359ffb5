// A residual_relu spec for tests, parsed from text so that tests exercise the real loader.
#pragma once
#include <string>

#include "spec/spec.hpp"

namespace kq::test {

inline std::string residual_relu_yaml(const std::string& layouts = "",
                                      const std::string& outputs_extra = "",
                                      const std::string& domain = "finite") {
  return "kq_spec: 1\n"
         "op: residual_relu\n"
         "dtype: f32\n"
         "inputs: [x, residual]\n"
         "outputs:\n"
         "  - name: out\n"
         "    ownership: caller\n" +
         outputs_extra +
         "semantics: relu(x + residual)\n"
         "domain: " +
         domain + "\n" +
         (layouts.empty() ? std::string("layouts:\n  contiguous_only: true\n  min_alignment_bytes: "
                                        "4\n  ranks: [1, 2, 3, 4]\n")
                          : layouts) +
         "compare: bitwise\n"
         "timing:\n  sizes: [4096]\n"
         "decision:\n  baseline: nvrtc_jit\n";
}

inline Spec residual_relu_spec(const std::string& layouts = "",
                               const std::string& outputs_extra = "",
                               const std::string& domain = "finite") {
  return parse_spec(residual_relu_yaml(layouts, outputs_extra, domain), "test.yaml");
}

}  // namespace kq::test
