#include "graph_builder.hpp"

#include <optional>
#include <utility>

#include "kq/expr_checks.hpp"
#include "kq/expr_fold.hpp"

namespace kq::cudnn_graph {

namespace {

constexpr std::int64_t kOutputUid = 100;
constexpr std::int64_t kFirstScalarUid = 200;
constexpr std::int64_t kFirstVirtualUid = 1000;

// The cuDNN mode of a unary or binary node that maps one to one; nullopt for the others
// (relu, select, clamp are lowered by hand).
std::optional<cudnnPointwiseMode_t> direct_mode(Op op) {
  switch (op) {
    case Op::neg:
      return CUDNN_POINTWISE_NEG;
    case Op::abs:
      return CUDNN_POINTWISE_ABS;
    case Op::exp:
      return CUDNN_POINTWISE_EXP;
    case Op::log:
      return CUDNN_POINTWISE_LOG;
    case Op::sqrt:
      return CUDNN_POINTWISE_SQRT;
    case Op::tanh:
      return CUDNN_POINTWISE_TANH_FWD;
    case Op::sigmoid:
      return CUDNN_POINTWISE_SIGMOID_FWD;
    case Op::erf:
      return CUDNN_POINTWISE_ERF;
    // GELU_FWD is the erf form 0.5x(1 + erf(x/sqrt2)); GELU_APPROX_TANH_FWD is the tanh one.
    case Op::gelu:
      return CUDNN_POINTWISE_GELU_FWD;
    // SWISH_FWD is x * sigmoid(beta * x); beta is set to 1, which is silu.
    case Op::silu:
      return CUDNN_POINTWISE_SWISH_FWD;
    case Op::add:
      return CUDNN_POINTWISE_ADD;
    case Op::sub:
      return CUDNN_POINTWISE_SUB;
    case Op::mul:
      return CUDNN_POINTWISE_MUL;
    case Op::div:
      return CUDNN_POINTWISE_DIV;
    case Op::max:
      return CUDNN_POINTWISE_MAX;
    case Op::min:
      return CUDNN_POINTWISE_MIN;
    case Op::lt:
      return CUDNN_POINTWISE_CMP_LT;
    case Op::le:
      return CUDNN_POINTWISE_CMP_LE;
    case Op::gt:
      return CUDNN_POINTWISE_CMP_GT;
    case Op::ge:
      return CUDNN_POINTWISE_CMP_GE;
    case Op::eq:
      return CUDNN_POINTWISE_CMP_EQ;
    case Op::ne:
      return CUDNN_POINTWISE_CMP_NEQ;
    default:
      return std::nullopt;
  }
}

// Leaves, the ops with a direct mode, and relu, select and clamp (lowered by hand).
bool has_lowering(Op op) {
  return arity(op) == 0 || op == Op::relu || op == Op::select || op == Op::clamp ||
         direct_mode(op).has_value();
}

bool is_commutative(Op op) {
  return op == Op::add || op == Op::mul || op == Op::max || op == Op::min || op == Op::eq ||
         op == Op::ne;
}

// c OP x == x MIRROR c, so that the full-size tensor is always the X operand.
Op mirrored(Op op) {
  switch (op) {
    case Op::lt:
      return Op::gt;
    case Op::le:
      return Op::ge;
    case Op::gt:
      return Op::lt;
    case Op::ge:
      return Op::le;
    default:
      return op;
  }
}

using Raw = cudnnBackendDescriptor_t;

// The real tensors' type: the spec's dtype. Half inputs are read, and the output written, by the
// pointwise operations themselves; everything between is FLOAT (virtual tensors, scalars, and
// CUDNN_ATTR_POINTWISE_MATH_PREC), the contract's compute f32.
cudnnDataType_t io_type(DType t) {
  switch (t) {
    case DType::f16:
      return CUDNN_DATA_HALF;
    case DType::bf16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

struct Pointwise {
  cudnnPointwiseMode_t mode = CUDNN_POINTWISE_IDENTITY;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  Raw x = nullptr, b = nullptr, t = nullptr, y = nullptr;
  std::string text;  // for the notes
};

class Builder {
 public:
  Builder(cudnnHandle_t h, const OpSpec& spec, const Shaping& shape, const GraphOptions& o,
          BuiltGraph& g)
      : h_(h), e_(spec.semantics), shape_(shape), o_(o), g_(g), io_(io_type(spec.dtype)) {
    std::size_t n = e_.nodes.size();
    value_.assign(n, nullptr);
    mask_.assign(n, nullptr);
    name_.resize(n);
    mask_name_.resize(n);
    inputs_.assign(spec.inputs.size(), nullptr);
    input_names_ = spec.inputs;
    g_.input_uids.assign(spec.inputs.size(), -1);
  }

  Status run() {
    if (e_.nodes.empty()) return Status::unsupported("empty expression");
    folded_ = fold_constants(e_);
    g_.output_uid = kOutputUid;
    Raw root = nullptr;
    Status s = value(e_.root(), root);
    if (!s.is_ok()) return s;
    if (ops_.empty()) return Status::error("the expression produced no operation");
    s = Desc::create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, g_.graph);
    if (s.is_ok()) s = g_.graph.set_descs(KQ_ATTR(CUDNN_ATTR_OPERATIONGRAPH_OPS), ops_);
    // Deprecated in cuDNN 9 but still read by 9.x; the frontend sets it too.
    if (s.is_ok()) s = g_.graph.set_handle(KQ_ATTR(CUDNN_ATTR_OPERATIONGRAPH_HANDLE), h_);
    if (s.is_ok()) s = g_.graph.finalize();
    if (!s.is_ok()) return s;
    std::int64_t count = 0, got = 0;
    if (g_.graph
            .get(KQ_ATTR(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT), CUDNN_TYPE_INT64, 1, &got,
                 &count)
            .is_ok())
      g_.engine_count = count;
    return Status::ok();
  }

 private:
  Status tensor(std::int64_t uid, cudnnDataType_t dt, bool is_virtual, bool by_value, Raw& out) {
    Desc t;
    Status s = Desc::create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, t);
    std::vector<std::int64_t> dims = shape_.dims, strides = shape_.strides;
    if (by_value) {
      dims.assign(dims.size(), 1);  // a scalar broadcast against the full tensors
      strides.assign(strides.size(), 1);
    }
    // Virtual and by-value tensors have no device pointer; 16 is the frontend's default.
    std::int64_t align = (is_virtual || by_value) ? 16 : o_.alignment;
    if (s.is_ok()) s = t.set_i64(KQ_ATTR(CUDNN_ATTR_TENSOR_UNIQUE_ID), uid);
    if (s.is_ok()) s = t.set_dtype(KQ_ATTR(CUDNN_ATTR_TENSOR_DATA_TYPE), dt);
    if (s.is_ok()) s = t.set_i64(KQ_ATTR(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT), align);
    if (s.is_ok()) s = t.set_i64s(KQ_ATTR(CUDNN_ATTR_TENSOR_DIMENSIONS), dims);
    if (s.is_ok()) s = t.set_i64s(KQ_ATTR(CUDNN_ATTR_TENSOR_STRIDES), strides);
    if (s.is_ok() && is_virtual) s = t.set_bool(KQ_ATTR(CUDNN_ATTR_TENSOR_IS_VIRTUAL), true);
    if (s.is_ok() && by_value) s = t.set_bool(KQ_ATTR(CUDNN_ATTR_TENSOR_IS_BY_VALUE), true);
    if (s.is_ok()) s = t.finalize();
    if (!s.is_ok()) return s;
    out = t.get();
    g_.keep.push_back(std::move(t));
    return Status::ok();
  }

  Status virtual_tensor(cudnnDataType_t dt, Raw& out, std::string& name) {
    std::int64_t uid = next_virtual_++;
    name = "v" + std::to_string(uid - kFirstVirtualUid);
    return tensor(uid, dt, true, false, out);
  }

  Status scalar(double v, Raw& out, std::string& name) {
    std::int64_t uid = kFirstScalarUid + static_cast<std::int64_t>(g_.scalars.size());
    Status s = tensor(uid, CUDNN_DATA_FLOAT, false, true, out);
    if (!s.is_ok()) return s;
    ScalarSlot slot;
    slot.value = static_cast<float>(v);
    g_.scalars.push_back(slot);
    g_.scalar_uids.push_back(uid);
    name = std::to_string(slot.value);
    return Status::ok();
  }

  Status input(int k, Raw& out, std::string& name) {
    auto idx = static_cast<std::size_t>(k);
    if (idx >= inputs_.size()) return Status::unsupported("input index out of range");
    name = input_names_[idx];
    if (inputs_[idx] != nullptr) {
      out = inputs_[idx];
      return Status::ok();
    }
    std::int64_t uid = 1 + k;
    Status s = tensor(uid, io_, false, false, out);
    if (!s.is_ok()) return s;
    inputs_[idx] = out;
    g_.input_uids[idx] = uid;
    return Status::ok();
  }

  // The float tensor (or by-value scalar) standing for node i as an operand.
  Status operand(int i, Raw& out, std::string& name) {
    auto idx = static_cast<std::size_t>(i);
    if (folded_[idx]) return scalar(*folded_[idx], out, name);
    return value(i, out, name);
  }

  // Where node i's float result goes: the real output for the root, a virtual tensor otherwise.
  Status result_tensor(int i, Raw& out, std::string& name) {
    if (i == e_.root()) {
      name = "out";
      return tensor(kOutputUid, io_, false, false, out);
    }
    return virtual_tensor(CUDNN_DATA_FLOAT, out, name);
  }

  Status emit(Pointwise p) {
    Desc pw;
    Status s = Desc::create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, pw);
    if (s.is_ok())
      s = pw.set(KQ_ATTR(CUDNN_ATTR_POINTWISE_MODE), CUDNN_TYPE_POINTWISE_MODE, 1, &p.mode);
    if (s.is_ok()) s = pw.set_dtype(KQ_ATTR(CUDNN_ATTR_POINTWISE_MATH_PREC), p.compute);
    if (s.is_ok() && p.mode == CUDNN_POINTWISE_RELU_FWD) {
      // No upper clip is set: the frontend clamps it to FLT_MAX for float, which would turn +inf
      // into FLT_MAX if cuDNN applied it.
      s = pw.set_double(KQ_ATTR(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP), 0.0);
      if (s.is_ok()) s = pw.set_double(KQ_ATTR(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE), 0.0);
    }
    if (s.is_ok() && p.mode == CUDNN_POINTWISE_SWISH_FWD)
      s = pw.set_double(KQ_ATTR(CUDNN_ATTR_POINTWISE_SWISH_BETA), 1.0);
    if (s.is_ok()) s = pw.finalize();
    Desc op;
    if (s.is_ok()) s = Desc::create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, op);
    if (s.is_ok()) s = op.set_desc(KQ_ATTR(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR), pw.get());
    if (s.is_ok()) s = op.set_desc(KQ_ATTR(CUDNN_ATTR_OPERATION_POINTWISE_XDESC), p.x);
    if (s.is_ok() && p.b) s = op.set_desc(KQ_ATTR(CUDNN_ATTR_OPERATION_POINTWISE_BDESC), p.b);
    if (s.is_ok() && p.t) s = op.set_desc(KQ_ATTR(CUDNN_ATTR_OPERATION_POINTWISE_TDESC), p.t);
    if (s.is_ok()) s = op.set_desc(KQ_ATTR(CUDNN_ATTR_OPERATION_POINTWISE_YDESC), p.y);
    // ALPHA1/ALPHA2 are left at their default of 1: on the H200 with cuDNN 9.14 a graph with
    // ALPHA1 = -1 got no engine configuration from either heuristics mode.
    if (s.is_ok()) s = op.finalize();
    if (!s.is_ok())
      return Status::error(std::string(pointwise_mode_name(p.mode)) + " (" + p.text +
                           "): " + s.message());
    ops_.push_back(op.get());
    g_.ops.push_back(p.text);
    g_.keep.push_back(std::move(pw));
    g_.keep.push_back(std::move(op));
    return Status::ok();
  }

  // A binary operation on nodes ia and ib with the non-constant operand placed in X.
  Status binary(Op op, int ia, int ib, Raw y, const std::string& yname) {
    bool a_const = folded_[static_cast<std::size_t>(ia)].has_value();
    Pointwise p;
    p.y = y;
    std::string an, bn;
    if (a_const && (is_commutative(op) || is_comparison(op))) {
      op = mirrored(op);
      std::swap(ia, ib);
    } else if (a_const && op == Op::sub) {
      // c - x == (-x) + c exactly: the negation is exact and IEEE addition commutes. This keeps
      // the full-size tensor in X (a broadcast scalar X is untested ground).
      Pointwise neg;
      std::string nn;
      Status s = operand(ib, neg.x, an);
      if (s.is_ok()) s = virtual_tensor(CUDNN_DATA_FLOAT, neg.y, nn);
      if (!s.is_ok()) return s;
      neg.mode = CUDNN_POINTWISE_NEG;
      neg.text = nn + " = NEG(" + an + ")";
      s = emit(neg);
      if (s.is_ok()) s = operand(ia, p.b, bn);
      if (!s.is_ok()) return s;
      p.x = neg.y;
      p.mode = CUDNN_POINTWISE_ADD;
      p.text = yname + " = ADD(" + nn + ", " + bn + ")";
      return emit(p);
    }
    Status s = operand(ia, p.x, an);
    if (s.is_ok()) s = operand(ib, p.b, bn);
    if (!s.is_ok()) return s;
    p.mode = *direct_mode(op);
    p.text = yname + " = " + pointwise_mode_name(p.mode) + "(" + an + ", " + bn + ")";
    return emit(p);
  }

  // The boolean mask "node i != 0" for a select: the comparison itself with a BOOLEAN output when
  // node i is one, CMP_NEQ(v, 0) otherwise (true for NaN, as kq's select wants).
  Status mask(int i, Raw& out, std::string& name) {
    auto idx = static_cast<std::size_t>(i);
    if (mask_[idx] != nullptr) {
      out = mask_[idx];
      name = mask_name_[idx];
      return Status::ok();
    }
    Status s = virtual_tensor(CUDNN_DATA_BOOLEAN, out, name);
    if (!s.is_ok()) return s;
    const ExprNode& n = e_.nodes[idx];
    if (is_comparison(n.op)) {
      s = binary(n.op, n.args[0], n.args[1], out, name);
    } else {
      Pointwise p;
      std::string xn, zn;
      s = operand(i, p.x, xn);
      if (s.is_ok()) s = scalar(0.0, p.b, zn);
      if (!s.is_ok()) return s;
      p.mode = CUDNN_POINTWISE_CMP_NEQ;
      p.y = out;
      p.text = name + " = CMP_NEQ(" + xn + ", " + zn + ")";
      s = emit(p);
    }
    if (!s.is_ok()) return s;
    mask_[idx] = out;
    mask_name_[idx] = name;
    return Status::ok();
  }

  Status identity(Raw x, const std::string& xn, Raw y, const std::string& yn) {
    Pointwise p;
    p.mode = CUDNN_POINTWISE_IDENTITY;
    p.x = x;
    p.y = y;
    p.text = yn + " = IDENTITY(" + xn + ")";
    return emit(p);
  }

  Status relu(int ia, Raw y, const std::string& yn) {
    Pointwise p;
    std::string xn;
    Status s = operand(ia, p.x, xn);
    if (!s.is_ok()) return s;
    p.mode = CUDNN_POINTWISE_RELU_FWD;
    if (o_.relu == ReluLowering::native) {
      p.y = y;
      p.text = yn + " = RELU_FWD(" + xn + ", lower_clip 0)";
      return emit(p);
    }
    // exact: RELU_FWD(x) + (+0). RELU_FWD gives -0 for -0 (measured); -0 + +0 = +0 in round to
    // nearest, and adding +0 leaves every other value (NaN, +inf, denormals, +0) as it is. The
    // scalar is a kernel parameter, so the runtime compiler cannot fold the addition away.
    // (A select(!(x <= 0), x, +0) lowering with BOOLEAN masks was also exact, but NVRTC failed to
    // compile its kernel for shapings such as NHWC {3, 341, 1, 1}.)
    std::string rn, zn;
    s = virtual_tensor(CUDNN_DATA_FLOAT, p.y, rn);
    if (!s.is_ok()) return s;
    p.text = rn + " = RELU_FWD(" + xn + ", lower_clip 0)";
    s = emit(p);
    Pointwise add;
    if (s.is_ok()) s = scalar(0.0, add.b, zn);
    if (!s.is_ok()) return s;
    add.mode = CUDNN_POINTWISE_ADD;
    add.x = p.y;
    add.y = y;
    add.text = yn + " = ADD(" + rn + ", " + zn + ")";
    return emit(add);
  }

  Status value(int i, Raw& out) {
    std::string unused;
    return value(i, out, unused);
  }

  // The float tensor holding node i's value (emitting its operations on first use).
  Status value(int i, Raw& out, std::string& name) {
    auto idx = static_cast<std::size_t>(i);
    if (value_[idx] != nullptr) {
      out = value_[idx];
      name = name_[idx];
      return Status::ok();
    }
    const ExprNode& n = e_.nodes[idx];
    Status s = Status::ok();
    bool root = i == e_.root();
    if (n.op == Op::input && !root) {
      s = input(n.input, out, name);
    } else if (folded_[idx] || n.op == Op::input) {
      // A leaf at the root: copy it into the output.
      Raw x = nullptr;
      std::string xn;
      s = folded_[idx] ? scalar(*folded_[idx], x, xn) : input(n.input, x, xn);
      if (s.is_ok()) s = result_tensor(i, out, name);
      if (s.is_ok()) s = identity(x, xn, out, name);
    } else if (n.op == Op::select && folded_[static_cast<std::size_t>(n.args[0])]) {
      // A constant condition picks one branch at build time.
      int pick = *folded_[static_cast<std::size_t>(n.args[0])] != 0 ? n.args[1] : n.args[2];
      Raw x = nullptr;
      std::string xn;
      s = operand(pick, x, xn);
      if (s.is_ok() && root) {
        s = result_tensor(i, out, name);
        if (s.is_ok()) s = identity(x, xn, out, name);
      } else {
        out = x;
        name = xn;
      }
    } else {
      s = result_tensor(i, out, name);
      if (s.is_ok()) s = compute(n, out, name);
    }
    if (!s.is_ok()) return s;
    value_[idx] = out;
    name_[idx] = name;
    return Status::ok();
  }

  // Emits the operations computing node n into y.
  Status compute(const ExprNode& n, Raw y, const std::string& yn) {
    switch (n.op) {
      case Op::relu:
        return relu(n.args[0], y, yn);
      case Op::select: {
        Pointwise p;
        std::string tn, xn, bn;
        Status s = mask(n.args[0], p.t, tn);
        if (s.is_ok()) s = operand(n.args[1], p.x, xn);
        if (s.is_ok()) s = operand(n.args[2], p.b, bn);
        if (!s.is_ok()) return s;
        p.mode = CUDNN_POINTWISE_BINARY_SELECT;
        p.y = y;
        p.text = yn + " = BINARY_SELECT(" + xn + ", " + bn + ", " + tn + ")";
        return emit(p);
      }
      case Op::clamp: {
        // min(max(x, lo), hi)
        Raw t = nullptr;
        std::string tn;
        Status s = virtual_tensor(CUDNN_DATA_FLOAT, t, tn);
        if (s.is_ok()) s = binary(Op::max, n.args[0], n.args[1], t, tn);
        if (!s.is_ok()) return s;
        Pointwise p;
        std::string hn;
        p.x = t;
        s = operand(n.args[2], p.b, hn);
        if (!s.is_ok()) return s;
        p.mode = CUDNN_POINTWISE_MIN;
        p.y = y;
        p.text = yn + " = MIN(" + tn + ", " + hn + ")";
        return emit(p);
      }
      default:
        break;
    }
    auto mode = direct_mode(n.op);
    if (!mode)
      return Status::unsupported("no cuDNN pointwise mode for " + std::string(to_string(n.op)));
    if (arity(n.op) == 2) return binary(n.op, n.args[0], n.args[1], y, yn);
    Pointwise p;
    std::string xn;
    Status s = operand(n.args[0], p.x, xn);
    if (!s.is_ok()) return s;
    p.mode = *mode;
    p.y = y;
    p.text = yn + " = " + pointwise_mode_name(p.mode) + "(" + xn + ")";
    return emit(p);
  }

  cudnnHandle_t h_;
  const Expr& e_;
  const Shaping& shape_;
  const GraphOptions& o_;
  BuiltGraph& g_;
  cudnnDataType_t io_;  // the inputs' and the output's type (io_type)
  std::int64_t next_virtual_ = kFirstVirtualUid;
  std::vector<std::optional<double>> folded_;
  std::vector<Raw> value_, mask_, inputs_;
  std::vector<std::string> name_, mask_name_;
  std::vector<std::string> input_names_;
  std::vector<Raw> ops_;
};

}  // namespace

Status check_expression(const Expr& e, std::size_t input_count) {
  if (std::string why = expr_problem(e, input_count); !why.empty())
    return Status::unsupported("semantics: " + why);
  for (std::size_t i = 0; i < e.nodes.size(); ++i)
    if (!has_lowering(e.nodes[i].op))
      return Status::unsupported("no cuDNN pointwise mode for " +
                                 std::string(to_string(e.nodes[i].op)) + " (node " +
                                 std::to_string(i) + ")");
  return Status::ok();
}

Status build_graph(cudnnHandle_t handle, const OpSpec& spec, const Shaping& shape,
                   const GraphOptions& options, BuiltGraph& out) {
  out = BuiltGraph{};
  Status s = check_expression(spec.semantics, spec.inputs.size());
  if (!s.is_ok()) return s;
  Builder b(handle, spec, shape, options, out);
  return b.run();
}

}  // namespace kq::cudnn_graph
