// IKernelArm: the interface every kernel arm implements. A plugin exports one or more arms with
// KQ_EXPORT_ARMS (kq/export.hpp). Calls never throw across the boundary: they return a Status.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kq/op_spec.hpp"
#include "kq/status.hpp"
#include "kq/tensor.hpp"

namespace kq {

struct SourceFile {
  std::string path;    // relative to the repository root
  std::string sha256;  // hex, computed at build time
};

struct ArmIdentity {
  std::string name;    // unique across all plugins, e.g. "cpu_tbb"
  std::string family;  // the plugin family, e.g. "cpu", "cuda_fused", "broken"
  Device device = Device::cpu;
  std::string version;  // the arm's own version
  std::vector<SourceFile> sources;
  std::string compile_flags;
  // For known-broken candidates: the qualification check that must reject it; empty otherwise.
  std::string expected_rejection;
  // The file that defines the arm when it is not the plugin itself (a Python arm's .py file),
  // named as `sources` names it; empty otherwise. A kq worker sets KQ_ARM_FILES to the origins
  // of the arms it holds (one a line) before loading plugins: a plugin that loads arms from
  // files loads only those, so that no other file's code runs in the worker.
  std::string origin;
  // Set by the plugin that loaded the arm: what loading its code changed in state every arm
  // shares (a replaced library function), put back since. Non-empty: the arm is rejected by
  // check `tampering` before its first case.
  std::string tampering;
};

// A problem an arm prepares for: the operation and the tensors it will run on. The views'
// pointers are those the arm will see in run(); their contents are unspecified at prepare(), and
// prepare() must not write them (an output may alias an input). `stream` is the one run() will
// get (a cudaStream_t for CUDA arms, nullptr for CPU arms): work prepare() enqueues goes there.
struct Problem {
  const OpSpec* spec = nullptr;
  std::vector<TensorView> inputs;
  std::vector<TensorView> outputs;
  void* stream = nullptr;
};

struct Artifact {
  std::string kind;      // "ptx", "sass", "cubin", "ptxas", "flags", "source", "notes", ...
  std::string filename;  // suggested file name inside the run's artifacts/<arm>/ folder
  std::string content;   // bytes (text or binary)
};

class IKernelArm {
 public:
  virtual ~IKernelArm() = default;

  virtual ArmIdentity identity() const = 0;

  // Whether this arm implements the spec's operation (op, dtype, semantics, layouts).
  // ok, or unsupported with a reason.
  virtual Status supports(const OpSpec& spec) const = 0;

  // Called outside any timed region, before run() on tensors of these shapes, strides and
  // pointers: compile, plan, size workspaces here. May return unsupported for a problem the arm
  // refuses (a layout it cannot handle, for instance).
  virtual Status prepare(const Problem& problem) = 0;

  // Compute outputs from inputs. For CUDA arms `stream` is a cudaStream_t and the work is
  // enqueued on it (the host synchronises); CPU arms get nullptr and finish before returning.
  // A view outside what the arm handles must be refused with unsupported, never computed wrongly.
  virtual Status run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                     void* stream) = 0;

  // Compiled artifacts (PTX, SASS, cubin, resource usage...) gathered so far.
  virtual std::vector<Artifact> artifacts() const { return {}; }
};

using ArmList = std::vector<std::unique_ptr<IKernelArm>>;

}  // namespace kq
