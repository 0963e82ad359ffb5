// A cuda_rows arm: one row-wise op (recognise.hpp says which specs), its kernels reached through
// a Launcher (launch.hpp). Host code only. GuardedArm checks every view against the shaped
// contract (dtypes, extents bound to the dims, contiguity, no overlap) before prepare() and
// run() see it; this class turns the views into the kernels' arguments and picks the kernel.
// Header-only so that a known-broken candidate (plugins/broken/cuda_shaped) is this same arm
// with other kernels.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kq/build_artifacts.hpp"
#include "kq/plugin_api.hpp"
#include "launch.hpp"
#include "recognise.hpp"

namespace kq::rows {

class RowsArm : public GuardedArm {
 public:
  // `expected`: the check that must reject the arm, for a known-broken candidate; else empty.
  RowsArm(RowOp op, std::string name, std::string family, Launcher launcher,
          std::string expected = {}, std::string flaw = {})
      : GuardedArm(Device::cuda),
        op_(op),
        name_(std::move(name)),
        family_(std::move(family)),
        launcher_(launcher),
        expected_(std::move(expected)),
        flaw_(std::move(flaw)) {}

  ArmIdentity identity() const override {
    ArmIdentity id = build::identity(name_, family_, Device::cuda, "1.0.0");
    id.expected_rejection = expected_;
    return id;
  }

 protected:
  bool computes_shaped() const override { return true; }

  Status on_supports(const OpSpec& spec) const override { return recognise(op_, spec); }

  Status on_prepare(const Problem& p) override {
    RowArgs a;
    if (Status s = arguments(p.inputs, p.outputs, a); !s.is_ok()) return s;
    choice_ = choose_kernel(a, static_cast<std::int64_t>(dtype_size(a.t)));
    described_ = std::string(to_string(a.t)) + ", M = " + std::to_string(a.rows) +
                 ", N = " + std::to_string(a.n) + ": " + describe(choice_);
    return launcher_.load(op_, a.t, choice_);
  }

  Status on_run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                void* stream) override {
    RowArgs a;
    if (Status s = arguments(inputs, outputs, a); !s.is_ok()) return s;
    return launcher_.launch(op_, a, choose_kernel(a, static_cast<std::int64_t>(dtype_size(a.t))),
                            stream);
  }

  std::vector<Artifact> on_artifacts() const override {
    std::vector<Artifact> out = build::cuda_artifacts();
    out.push_back({"notes", "launch.txt", notes()});
    return out;
  }

 private:
  // The kernels' arguments from views inside the contract: x's first dim is the rows, the
  // product of the others (one dim, or C * H * W) the row.
  Status arguments(std::span<const TensorView> in, std::span<const TensorView> out,
                   RowArgs& a) const {
    const bool norm = op_ == RowOp::layer_norm || op_ == RowOp::rms_norm;
    const std::size_t inputs = op_ == RowOp::layer_norm ? 3 : norm ? 2 : 1;
    if (in.size() != inputs || out.empty())
      return Status::error(name_ + ": " + std::to_string(in.size()) + " inputs and " +
                           std::to_string(out.size()) + " outputs, expected " +
                           std::to_string(inputs) + " and at least 1");
    const TensorView &x = in[0], &y = out[0];
    if (x.rank < 2) return Status::unsupported("x of rank " + std::to_string(x.rank));
    a.x = x.data;
    a.y = y.data;
    a.t = x.dtype;
    a.rows = x.shape[0];
    a.n = 1;
    for (int d = 1; d < x.rank; ++d) a.n *= x.shape[d];
    auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
    if (norm) {
      a.w = in[1].data;
      a.wt = in[1].dtype;
      a.w_vec = in[1].dtype == a.t && aligned(a.w);
      a.eps = static_cast<float>(spec().program->decls.params.at(0).value);
    }
    if (op_ == RowOp::layer_norm) {
      a.b = in[2].data;
      a.bt = in[2].dtype;
      a.b_vec = in[2].dtype == a.t && aligned(a.b);
      if (out.size() == 3) {
        a.mean = out[1].data;
        a.mean_t = out[1].dtype;
        a.rstd = out[2].data;
        a.rstd_t = out[2].dtype;
      }
    }
    if (a.n == 0 && a.rows > 0 && a.mean != nullptr)
      return Status::unsupported("rows of length 0 (mean and rstd would be 0 / 0)");
    a.inv_n = a.n > 0 ? static_cast<float>(1.0 / static_cast<double>(a.n)) : 0.0f;
    return Status::ok();
  }

  std::string notes() const {
    std::string s = "arm " + name_ + ": " + what(op_) + ", f32, f16 and bf16 in and out (x and y " +
                    "of one type), computed in float, each output rounded once\n";
    if (!flaw_.empty()) s += "known-broken candidate: " + flaw_ + "\n";
    s += "last prepared problem: " + (described_.empty() ? std::string("none") : described_) + "\n";
    s += "resident_kernel (the row in registers, read once, written once) where every row starts "
         "on a 16-byte boundary and fits: shapes (threads, 16-byte vectors a thread):";
    for (const ResidentShape& r : kResident)
      s += " (" + std::to_string(r.threads) + ", " + std::to_string(r.vectors) + ")";
    s += "\nlooped_kernel (" + std::to_string(kLoopThreads) +
         " threads, a pass per statistic with Kahan sums, then y) otherwise\n"
         "one block per row; reductions by warp shuffles and shared memory; row offsets in 64 "
         "bits\nsources: plugins/cuda_rows/kernels.cuh (why these shapes), launch.hpp (the "
         "choice)\n";
    return s;
  }

  RowOp op_;
  std::string name_, family_;
  Launcher launcher_;
  std::string expected_, flaw_;
  KernelChoice choice_;
  std::string described_;
};

}  // namespace kq::rows
