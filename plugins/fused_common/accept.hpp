// The first steps of prepare() in the fused-family arms (cuda_fused, inline_ptx,
// thrust_transform): a spec is given, the arm supports it, the views are inside its contract;
// then the arm keeps the spec for run().
#pragma once
#include "kq/arm.hpp"
#include "kq/contract.hpp"

namespace kq::fused {

inline Status accept_problem(const IKernelArm& arm, const Problem& problem, OpSpec& kept) {
  if (!problem.spec) return Status::error("prepare() without a spec");
  if (Status s = arm.supports(*problem.spec); !s.is_ok()) return s;
  if (Status s = check_contract(*problem.spec, problem.inputs, problem.outputs, Device::cuda);
      !s.is_ok())
    return s;
  kept = *problem.spec;
  return Status::ok();
}

}  // namespace kq::fused
