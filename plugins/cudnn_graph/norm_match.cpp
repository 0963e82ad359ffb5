#include "norm_match.hpp"

#include <cmath>
#include <vector>

#include "kq/indexed_text.hpp"

namespace kq::cudnn_graph {

namespace {

// "i0, i1, ..., i<rank-1>" from `first`.
std::string indices(const char* prefix, int first, int rank) {
  std::string s;
  for (int k = first; k < rank; ++k)
    s += (k > first ? ", " : "") + std::string(prefix) + std::to_string(k);
  return s;
}

// The canonical texts of softmax and log-softmax over the last dim of an (M, N) input (the
// Triton arms of plugins/python/arms/triton_shaped.py match the same).
constexpr const char* kSoftmax = R"(
  tmp0[i0] = max(i1, in0[i0, i1])
  tmp1[i0, i1] = exp(sub(in0[i0, i1], tmp0[i0]))
  tmp2[i0] = sum(i1, tmp1[i0, i1])
  out0[i0, i1] = div(tmp1[i0, i1], tmp2[i0])
  shapes: in0[d0, d1] out0[d0, d1] tmp0[d0] tmp1[d0, d1] tmp2[d0]
)";
constexpr const char* kLogSoftmax = R"(
  tmp0[i0] = max(i1, in0[i0, i1])
  tmp1[i0] = log(sum(i1, exp(sub(in0[i0, i1], tmp0[i0]))))
  out0[i0, i1] = sub(sub(in0[i0, i1], tmp0[i0]), tmp1[i0])
  shapes: in0[d0, d1] out0[d0, d1] tmp0[d0] tmp1[d0]
)";

// Why softmax is declined. Checked against cuDNN 9.19's cudnn_graph_v9.h (no softmax in
// cudnnBackendDescriptorType_t) and cudnn-frontend (include/cudnn_frontend/node/softmax.h,
// scaled_dot_product_flash_attention.h, node_interface.h, May 2026): before cuDNN 9.21 the frontend
// composes softmax from reduction and pointwise operations, and from 9.21 it is
// CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR attached to the SDPA operation through
// CUDNN_ATTR_OPERATION_SDPA_FWD_SOFTMAX_DESC; either way INode::softmax is protected and only the
// attention nodes call it. No engine runs a softmax graph on its own (9.14 on the GPU host).
constexpr const char* kNoSoftmax =
    ": cuDNN 9's graph API has no standalone softmax operation (before 9.21 none at all; from "
    "9.21 CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR exists only as part of an SDPA operation), "
    "and cudnn-frontend builds softmax only inside scaled dot-product attention";

bool is_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

std::string dtype_text(DType t) { return std::string(to_string(t)); }

// Every form, in the order they are tried.
std::vector<NormForm> all_forms() {
  std::vector<NormForm> out;
  for (int rank = 2; rank <= 4; ++rank)
    for (NormKind kind : {NormKind::layer, NormKind::rms})
      for (bool training : {true, false})
        for (bool scale : {true, false})
          for (bool bias : {true, false}) {
            if (kind == NormKind::rms && bias) continue;
            out.push_back(NormForm{kind, rank, training, scale, bias});
          }
  return out;
}

// The value of the param the statements use (canonical p0: the forms use one param only).
bool eps_of(const ix::Program& p, double& eps) {
  for (const ix::Node& n : p.nodes)
    if (n.kind == ix::NodeKind::param && n.ref >= 0 &&
        static_cast<std::size_t>(n.ref) < p.decls.params.size()) {
      eps = p.decls.params[static_cast<std::size_t>(n.ref)].value;
      return true;
    }
  return false;
}

}  // namespace

std::string canonical_of(const NormForm& f) {
  const int r = f.rank;
  const std::string x = "in0[" + indices("i", 0, r) + "]";
  const std::string over = r == 2 ? "i1" : "(" + indices("i", 1, r) + ")";
  std::string divisor = "d1";
  for (int k = 2; k < r; ++k) divisor = "mul(" + divisor + ", d" + std::to_string(k) + ")";
  const std::string inner = indices("i", 1, r);  // the weight's subscripts
  const std::string row_shape = "[" + indices("d", 0, r) + "]";
  const std::string w_shape = "[" + indices("d", 1, r) + "]";

  std::string body, y, outs = " out0" + row_shape, temps;
  if (f.kind == NormKind::layer) {
    const std::string mean = f.training ? "out1" : "tmp0";
    const std::string var = f.training ? "tmp0" : "tmp1";
    const std::string rstd = f.training ? "out2" : "tmp2";
    const std::string centred = "sub(" + x + ", " + mean + "[i0])";
    body += mean + "[i0] = div(sum(" + over + ", " + x + "), " + divisor + ")\n";
    body += var + "[i0] = div(sum(" + over + ", mul(" + centred + ", " + centred + ")), " +
            divisor + ")\n";
    body += rstd + "[i0] = div(1, sqrt(add(" + var + "[i0], p0)))\n";
    y = "mul(" + centred + ", " + rstd + "[i0])";
    if (f.training) {
      outs += " out1[d0] out2[d0]";
      temps = " tmp0[d0]";
    } else {
      temps = " tmp0[d0] tmp1[d0] tmp2[d0]";
    }
  } else {
    const std::string rstd = f.training ? "out1" : "tmp0";
    body += rstd + "[i0] = div(1, sqrt(add(div(sum(" + over + ", mul(" + x + ", " + x + ")), " +
            divisor + "), p0)))\n";
    y = "mul(" + x + ", " + rstd + "[i0])";
    if (f.training)
      outs += " out1[d0]";
    else
      temps = " tmp0[d0]";
  }
  std::string ins = " in0" + row_shape;
  int next = 1;
  if (f.scale) {
    y = "mul(" + y + ", in" + std::to_string(next) + "[" + inner + "])";
    ins += " in" + std::to_string(next++) + w_shape;
  }
  if (f.bias) {
    y = "add(" + y + ", in" + std::to_string(next) + "[" + inner + "])";
    ins += " in" + std::to_string(next++) + w_shape;
  }
  body += "out0" + std::string("[") + indices("i", 0, r) + "] = " + y + "\n";
  return body + "shapes:" + ins + outs + temps + "\n";
}

std::string norm_words(const NormForm& f) {
  std::string s = f.kind == NormKind::layer ? "layer norm" : "RMS norm";
  s += " over " + std::to_string(f.rank - 1) + (f.rank == 2 ? " dim" : " dims");
  if (f.kind == NormKind::layer)
    s += f.training ? ", training (y, mean, rstd)" : ", inference (y)";
  else
    s += f.training ? ", training (y, rstd)" : ", inference (y)";
  if (f.scale && f.bias) return s + ", weight and bias";
  if (f.scale) return s + ", weight";
  if (f.bias) return s + ", bias";
  return s + ", no weight";
}

Status match_norm(const OpSpec& spec, NormMatch& out) {
  if (!spec.program)
    return Status::unsupported(
        "a format-1 (elementwise) spec: cudnn_norm computes format-2 layer and RMS norm specs");
  const ix::Program& p = *spec.program;
  const NormForm* found = nullptr;
  static const std::vector<NormForm> forms = all_forms();
  for (const NormForm& f : forms)
    if (ix::computes(p, canonical_of(f))) {
      found = &f;
      break;
    }
  if (found == nullptr) {
    if (ix::computes(p, kSoftmax)) return Status::unsupported(std::string("softmax") + kNoSoftmax);
    if (ix::computes(p, kLogSoftmax))
      return Status::unsupported(std::string("log-softmax") + kNoSoftmax);
    return Status::unsupported(
        "computes layer norm and RMS norm over every dim but the first only (cuDNN's "
        "NORM_FORWARD operation; format-2 statements of those canonical forms)");
  }
  NormMatch m;
  m.form = *found;
  if (!eps_of(p, m.eps)) return Status::unsupported("no eps param in the statements");
  if (!std::isfinite(m.eps)) return Status::unsupported("eps is not finite");

  // Declaration order: x, weight, bias; y, statistics (the canonical form fixed it).
  std::vector<const ix::TensorDecl*> in, outs;
  for (const ix::TensorDecl& t : p.decls.tensors) {
    if (t.role == ix::Role::input) in.push_back(&t);
    if (t.role == ix::Role::output) outs.push_back(&t);
  }
  for (const ix::TensorDecl* t : in)
    if (!is_float(t->dtype))
      return Status::unsupported("input " + t->name + " is " + dtype_text(t->dtype) +
                                 ": cuDNN's norm reads FLOAT, HALF and BFLOAT16 only here");
  if (!is_float(outs[0]->dtype))
    return Status::unsupported("output " + outs[0]->name + " is " + dtype_text(outs[0]->dtype) +
                               ": cuDNN's norm writes FLOAT, HALF and BFLOAT16 only here");
  for (std::size_t k = 1; k < outs.size(); ++k)
    if (outs[k]->dtype != DType::f32)
      return Status::unsupported("statistics output " + outs[k]->name + " is " +
                                 dtype_text(outs[k]->dtype) +
                                 ": cuDNN writes mean and inv_variance in FLOAT only");
  if (spec.compute != DType::f32)
    return Status::unsupported("computes in float32 only, and the spec's compute type is " +
                               dtype_text(spec.compute));
  if (spec.domain != Domain::finite)
    return Status::unsupported(
        "finite inputs only: how cuDNN's norm propagates NaN and infinities is not defined or "
        "measured");
  if (!spec.layouts.contiguous_only)
    return Status::unsupported("contiguous tensors only, and the spec admits strided views");

  m.x = in[0]->dtype;
  m.y = outs[0]->dtype;
  std::size_t next = 1;
  if (m.form.scale) m.scale = in[next++]->dtype;
  if (m.form.bias) m.bias = in[next++]->dtype;
  // The filled-in weight and bias take the dtype of the other, or of x (cuDNN's samples pair
  // bf16 x with bf16 or FLOAT weights).
  if (!m.form.scale) m.scale = m.form.bias ? m.bias : m.x;
  if (!m.form.bias) m.bias = m.scale;
  out = m;
  return Status::ok();
}

}  // namespace kq::cudnn_graph
