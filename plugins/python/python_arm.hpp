// One arm written in Python, as kq sees it: an IKernelArm over an instance of a kq.Arm subclass.
// Every call takes the GIL. An exception becomes the call's status: kq.Unsupported an
// "unsupported" with its message, anything else an error whose message is the exception, with
// the whole traceback written to stderr (the worker's log). kq's contract check runs before the
// arm's prepare() and run() unless the arm says `checks_contract = False` (a known-broken
// candidate that must be caught by qualification instead). The arm's tensors and streams are
// kq_api.py's _Calls.
#pragma once
#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "kq/guarded_arm.hpp"

namespace kq::python {

class PythonArm final : public GuardedArm {
 public:
  // `instance`: the arm object; `file`, `sha256`: the file it was defined in and its digest.
  PythonArm(pybind11::object instance, ArmIdentity identity);
  ~PythonArm() override;

  ArmIdentity identity() const override { return identity_; }

 protected:
  Status on_supports(const OpSpec& spec) const override;
  Status on_prepare(const Problem& p) override;
  Status on_run(std::span<const TensorView> in, std::span<const TensorView> out,
                void* stream) override;
  std::vector<Artifact> on_artifacts() const override;
  bool checks_contract() const override { return checks_contract_; }
  // Python arms see format-2 specs too: each declines what it does not compute (kq.computes).
  bool computes_shaped() const override { return true; }

 private:
  std::unique_ptr<pybind11::object> instance_;  // released with the GIL held
  std::unique_ptr<pybind11::object> calls_;     // kq._Calls(instance)
  ArmIdentity identity_;
  bool checks_contract_ = true;
};

// The status of the Python exception being handled (call inside a catch of error_already_set).
Status status_of(pybind11::error_already_set& e, const std::string& arm, const char* method);

}  // namespace kq::python
