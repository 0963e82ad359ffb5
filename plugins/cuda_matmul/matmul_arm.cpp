// cuda_matmul: a hand-written CUDA C++ matrix product on the tensor cores (mma.cu: mma.sync,
// cp.async, ldmatrix), for every format-2 spec that is one (kq/matmul_form.hpp: batched,
// transposed operands, flattened m and n dims, + bias[n], gelu) with f16 or bf16 operands and
// output computed in f32. The form and the views' strides are read at prepare and at every
// call; the kernel and its loads are chosen from them (mma.hpp).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kq/build_artifacts.hpp"
#include "kq/build_info.hpp"
#include "kq/export.hpp"
#include "kq/guarded_arm.hpp"
#include "kq/matmul_form.hpp"
#include "mma.hpp"

namespace kq::mma {
namespace {

std::vector<DType> dtypes(const ix::Program& p, ix::Role role) {
  std::vector<DType> out;
  for (const ix::TensorDecl& t : p.decls.tensors)
    if (t.role == role) out.push_back(t.dtype);
  return out;
}

// The form, or why the spec is not one this arm computes.
Status recognise(const OpSpec& spec, ix::MatmulForm& f) {
  if (!spec.program) return Status::unsupported("format-2 (shaped) specs only");
  std::string why;
  const std::optional<ix::MatmulForm> m = ix::match_matmul(*spec.program, &why);
  if (!m) return Status::unsupported("computes a matrix product only: " + why);
  const std::vector<DType> in = dtypes(*spec.program, ix::Role::input);
  const DType ab = in[static_cast<std::size_t>(m->a)];
  const DType c = dtypes(*spec.program, ix::Role::output)[0];
  if ((ab != DType::bf16 && ab != DType::f16) || in[static_cast<std::size_t>(m->b)] != ab ||
      c != ab)
    return Status::unsupported("A, B and C of one 16-bit type (f16 or bf16)");
  if (m->bias >= 0 && in[static_cast<std::size_t>(m->bias)] != c)
    return Status::unsupported("a bias of C's type");
  if (spec.compute != DType::f32)
    return Status::unsupported("accumulates in f32: the spec's compute type is " +
                               std::string(to_string(spec.compute)));
  f = *m;
  return Status::ok();
}

class MmaArm final : public GuardedArm {
 public:
  MmaArm() : GuardedArm(Device::cuda) {}

  ArmIdentity identity() const override {
    return build::identity("cuda_mma_matmul", "cuda", Device::cuda, "1");
  }

 protected:
  bool computes_shaped() const override { return true; }

  Status on_supports(const OpSpec& spec) const override {
    ix::MatmulForm f;
    return recognise(spec, f);
  }

  Status on_prepare(const Problem& problem) override {
    if (Status s = recognise(spec(), form_); !s.is_ok()) return s;
    MmaArgs a;
    if (Status s = arguments(problem.inputs, problem.outputs[0], a); !s.is_ok()) return s;
    described_ = std::string(a.bf16 ? "bf16" : "f16") + ", batch " + std::to_string(a.batch) +
                 ", M = " + std::to_string(a.M) + ", N = " + std::to_string(a.N) +
                 ", K = " + std::to_string(a.K) + ": " + describe(choose(a));
    return prepare_kernels();
  }

  Status on_run(std::span<const TensorView> in, std::span<const TensorView> out,
                void* stream) override {
    MmaArgs a;
    Status s = arguments(std::vector<TensorView>(in.begin(), in.end()), out[0], a);
    return s.is_ok() ? launch(a, stream) : s;
  }

  std::vector<Artifact> on_artifacts() const override {
    std::vector<Artifact> out = build::cuda_artifacts();
    out.push_back({"notes", "kernel.txt",
                   "arm cuda_mma_matmul: " + describe_kernels() + "\nlast prepared problem: " +
                       (described_.empty() ? std::string("none") : described_) +
                       "\nsources: plugins/cuda_matmul/mma.cu (why these choices)\n"});
    return out;
  }

 private:
  Status arguments(const std::vector<TensorView>& in, const TensorView& c, MmaArgs& a) const {
    std::string why;
    const std::optional<ix::MatmulGeometry> g = ix::matmul_geometry(form_, in, c, &why);
    if (!g) return Status::unsupported(why);
    a.a = in[static_cast<std::size_t>(form_.a)].data;
    a.b = in[static_cast<std::size_t>(form_.b)].data;
    a.c = c.data;
    a.M = g->M;
    a.N = g->N;
    a.K = g->K;
    a.batch = g->batch;
    a.sa = {g->a.rs, g->a.cs, g->a.batch_stride};
    a.sb = {g->b.rs, g->b.cs, g->b.batch_stride};
    a.sc = {g->c.rs, g->c.cs, g->c.batch_stride};
    if (form_.bias >= 0) {
      a.bias = in[static_cast<std::size_t>(form_.bias)].data;
      a.bias_s = g->bias.cs;
    }
    a.bf16 = c.dtype == DType::bf16;
    a.gelu = form_.gelu;
    return Status::ok();
  }

  ix::MatmulForm form_;
  std::string described_;
};

void make_arms(ArmList& out) { out.push_back(std::make_unique<MmaArm>()); }

}  // namespace
}  // namespace kq::mma

KQ_EXPORT_ARMS(kq::mma::make_arms)
