// The nvrtc_jit arms: CUDA C++ generated from any spec's expression (codegen.hpp) or from a
// format-2 program in row form (row_codegen.hpp), compiled by NVRTC for the running device at
// prepare() (nvrtc_compile.hpp), launched through the driver API on the caller's stream
// (driver_api.hpp).
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "codegen.hpp"
#include "driver_api.hpp"
#include "kq/plugin_api.hpp"
#include "launch_plan.hpp"
#include "nvrtc_compile.hpp"
#include "row_lower.hpp"

namespace kq::nvrtc {

struct ArmConfig {
  std::string name;
  bool vector = true;  // false: contiguous calls take the scalar kernels too
  CodegenOptions codegen;
  int waves = 0;  // grid cap, in waves of resident blocks over all SMs; 0: one thread per unit
};

// One module loaded in one context, with what launches need.
struct LoadedModule {
  enum { vec, vec_alias, scalar, scalar_alias, strided, rows, count };
  CUcontext ctx = nullptr;
  CUmodule module = nullptr;
  CUfunction fn[count] = {};
  int blocks_per_sm[count] = {};
  int regs[count] = {};
  int local_bytes[count] = {};
  int sms = 0;
  Generated gen;
  std::shared_ptr<const Compiled> compiled;
  std::string notes;
};

class NvrtcArm final : public IKernelArm {
 public:
  explicit NvrtcArm(ArmConfig config) : config_(std::move(config)) {}
  ~NvrtcArm() override;

  ArmIdentity identity() const override;
  Status supports(const OpSpec& spec) const override;
  Status prepare(const Problem& problem) override;
  Status run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
             void* stream) override;
  std::vector<Artifact> artifacts() const override;

 private:
  Status prepare_impl(const Problem& problem);
  Status run_impl(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                  void* stream);
  Status run_rows(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                  void* stream);
  LoadedModule& load(const OpSpec& spec);
  Status prepare_partials(const OpSpec& spec, const LoadedModule& m);

  // Like every arm, one caller at a time: prepare, run and artifacts are not called concurrently.
  ArmConfig config_;
  std::optional<OpSpec> spec_;  // the spec of the last prepare(); run() checks against it
  RowPlan row_plan_;            // a format-2 spec's lowering (row_lower.hpp)
  std::map<std::string, std::unique_ptr<LoadedModule>> modules_;  // by compile key + context
  LoadedModule* current_ = nullptr;
  std::string last_plan_;  // the launch prepare() chose, for the notes
  // The device memory of a split plan or of reductions over the rows (row_lower.hpp): the
  // blocks' finishing count in the first kCountBytes bytes (0 between launches: the last block
  // sets it back), then the partials. One launch at a time uses it, as one caller at a time
  // runs the arm on its stream.
  void* partials_ = nullptr;
  std::size_t partials_bytes_ = 0;
};

}  // namespace kq::nvrtc
