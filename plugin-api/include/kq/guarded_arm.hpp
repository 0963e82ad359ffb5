// GuardedArm: the careful boundary of an arm, written once. Every entry point catches whatever
// the arm throws and returns it as a status (artifacts(): as nothing). prepare() refuses a
// problem without a spec, a spec the arm does not support and views outside the contract, then
// keeps a copy of the spec; run() refuses a call before a successful prepare() and views outside
// the contract, and returns ok at once for an empty output. The arm supplies what is its own:
//
//   class MyArm : public kq::GuardedArm {
//    public:
//     MyArm() : GuardedArm(kq::Device::cuda) {}
//     kq::ArmIdentity identity() const override;
//    protected:
//     kq::Status on_supports(const kq::OpSpec& spec) const override;    // may throw
//     kq::Status on_prepare(const kq::Problem& p) override;             // optional
//     kq::Status on_run(std::span<const kq::TensorView> in,             // non-empty, in contract
//                       std::span<const kq::TensorView> out, void* stream) override;
//   };
#pragma once
#include <span>
#include <vector>

#include "kq/arm.hpp"
#include "kq/contract.hpp"
#include "kq/shaped_contract.hpp"
#include "kq/status.hpp"

namespace kq {

class GuardedArm : public IKernelArm {
 public:
  explicit GuardedArm(Device device) : device_(device) {}

  Status supports(const OpSpec& spec) const final {
    try {
      if (spec.program && !computes_shaped()) return shaped_unsupported();
      return on_supports(spec);
    } catch (...) {
      return status_from_current_exception("supports()");
    }
  }

  Status prepare(const Problem& problem) final {
    try {
      prepared_ = false;
      if (problem.spec == nullptr) return Status::error("prepare() without a spec");
      if (problem.spec->program && !computes_shaped()) return shaped_unsupported();
      if (Status s = on_supports(*problem.spec); !s.is_ok()) return s;
      if (checks_contract())
        if (Status s = contract(*problem.spec, problem.inputs, problem.outputs); !s.is_ok())
          return s;
      spec_ = *problem.spec;
      if (Status s = on_prepare(problem); !s.is_ok()) return s;
      prepared_ = true;
      return Status::ok();
    } catch (...) {
      prepared_ = false;
      return status_from_current_exception("prepare()");
    }
  }

  Status run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
             void* stream) final {
    try {
      if (!prepared_) return Status::error("run() before a successful prepare()");
      if (checks_contract()) {
        if (Status s = contract(spec_, inputs, outputs); !s.is_ok()) return s;
      } else if (inputs.size() != spec_.inputs.size() || outputs.size() != spec_.outputs.size()) {
        return Status::error("run(): wrong number of tensors");
      }
      bool empty = true;  // no output element to write: nothing to do
      for (const TensorView& o : outputs) empty = empty && o.numel() == 0;
      if (empty) return Status::ok();
      return on_run(inputs, outputs, stream);
    } catch (...) {
      return status_from_current_exception("run()");
    }
  }

  std::vector<Artifact> artifacts() const final {
    try {
      return on_artifacts();
    } catch (...) {
      return {};
    }
  }

 protected:
  // Whether the arm implements the spec: ok, or unsupported with the reason.
  virtual Status on_supports(const OpSpec& spec) const = 0;
  // After the spec and the contract were accepted (spec() is set): plans, compiles, workspaces.
  virtual Status on_prepare(const Problem&) { return Status::ok(); }
  // Views inside the contract, a non-empty output.
  virtual Status on_run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                        void* stream) = 0;
  virtual std::vector<Artifact> on_artifacts() const { return {}; }
  // An arm whose point is to ignore the contract (a known-broken candidate) says false.
  virtual bool checks_contract() const { return true; }
  // Whether on_supports() looks at format-2 (shaped) specs (OpSpec::program); an arm that
  // does not is told none.
  virtual bool computes_shaped() const { return false; }

  const OpSpec& spec() const { return spec_; }
  Device device() const { return device_; }
  bool prepared() const { return prepared_; }

 private:
  Status contract(const OpSpec& spec, std::span<const TensorView> inputs,
                  std::span<const TensorView> outputs) const {
    return spec.program ? check_shaped_contract(spec, inputs, outputs, device_)
                        : check_contract(spec, inputs, outputs, device_);
  }
  static Status shaped_unsupported() {
    return Status::unsupported(
        "a format-2 (shaped) spec: this arm computes elementwise (format-1) specs only");
  }

  Device device_;
  OpSpec spec_;
  bool prepared_ = false;
};

}  // namespace kq
