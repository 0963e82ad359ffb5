#include "row_codegen.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

namespace kq::nvrtc {
namespace {

using ix::NodeKind;
using ix::Reduction;
using ix::Role;
using ix::Statement;
using ix::TensorDecl;

const char* c_type(DType t) {
  switch (t) {
    case DType::f16:
      return "__half";
    case DType::bf16:
      return "__nv_bfloat16";
    case DType::i32:
      return "int";
    case DType::i64:
      return "long long";
    case DType::boolean:
      return "unsigned char";
    default:
      return "float";
  }
}

const char* reduction_word(Reduction r) {
  switch (r) {
    case Reduction::sum:
      return "sum";
    case Reduction::prod:
      return "prod";
    case Reduction::max:
      return "max";
    default:
      return "min";
  }
}

// The identity a thread's partial starts from (the empty reduction's value: 0, 1, -inf, +inf)
// and the combining step.
const char* identity(Reduction r) {
  switch (r) {
    case Reduction::sum:
      return "0.0f";
    case Reduction::prod:
      return "1.0f";
    case Reduction::max:
      return "__int_as_float((int)0xff800000u)";
    default:
      return "__int_as_float((int)0x7f800000u)";
  }
}

const char* combine(Reduction r) {
  switch (r) {
    case Reduction::sum:
      return "kq_add";
    case Reduction::prod:
      return "kq_mul";
    case Reduction::max:
      return "kq_max";
    default:
      return "kq_min";
  }
}

// A running reduction in float `acc` (and, for a sum, its compensation `comp`, Neumaier's as
// the reference's): its start at the identity, one term's step, its value.
struct Running {
  Reduction r;
  std::string acc, comp;
  bool sum() const { return r == Reduction::sum; }
  std::string start() const {
    return "float " + acc + " = " + identity(r) + (sum() ? ", " + comp + " = 0.0f" : "");
  }
  std::string step(const std::string& term) const {
    return sum() ? "kq_sum_step(" + acc + ", " + comp + ", " + term + ");\n"
                 : acc + " = " + combine(r) + "(" + acc + ", " + term + ");\n";
  }
  std::string value() const { return sum() ? "kq_sum_value(" + acc + ", " + comp + ")" : acc; }
};

Reduction scan_reduction(ix::ScanKind k) {
  return k == ix::ScanKind::cumsum ? Reduction::sum : Reduction::prod;
}

// Warp shuffles, then the warps' partials through shared memory; every warp reduces all the
// partials in the same order, so every thread gets the same value. The first __syncthreads
// keeps the previous reduction's readers of `sh` ahead of this one's writers.
std::string block_reduce(Reduction r) {
  const std::string name = reduction_word(r), comb = combine(r), id = identity(r);
  return "__device__ float kq_block_" + name +
         "(float v, float* sh) {\n"
         "#pragma unroll\n"
         "  for (int o = 16; o > 0; o >>= 1) v = " +
         comb +
         "(v, __shfl_xor_sync(0xffffffffu, v, o));\n"
         "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
         "  __syncthreads();\n"
         "  if (lane == 0) sh[warp] = v;\n"
         "  __syncthreads();\n"
         "  v = lane < (int)(blockDim.x >> 5) ? sh[lane] : " +
         id +
         ";\n"
         "#pragma unroll\n"
         "  for (int o = 16; o > 0; o >>= 1) v = " +
         comb +
         "(v, __shfl_xor_sync(0xffffffffu, v, o));\n"
         "  return v;\n}\n\n";
}

// argmax and argmin across a block: each thread's first extreme (value and position; -1 where
// the thread saw none), combined by warp shuffles, then the warps' through shared memory. The
// rule picks one winner whatever the order of the combining: a NaN beats any number and the
// first NaN beats the others; else the larger (argmax) or smaller value, then the first
// position. So it is the first extreme of the whole row, the first NaN final, as in the
// reference's walk.
std::string block_arg(Reduction r) {
  const std::string name = r == Reduction::argmax ? "argmax" : "argmin";
  const char* better = r == Reduction::argmax ? " > " : " < ";
  return "__device__ __forceinline__ bool kq_" + name +
         "_takes(float a, kq_i64 ia, float b, kq_i64 ib) {\n"
         "  if (ib < 0) return false;\n"
         "  if (ia < 0) return true;\n"
         "  const bool na = a != a, nb = b != b;\n"
         "  if (na || nb) return nb && (!na || ib < ia);\n"
         "  return b" +
         better +
         "a || (b == a && ib < ia);\n}\n\n"
         "__device__ kq_i64 kq_block_" +
         name +
         "(float v, kq_i64 at, float* sh, kq_i64* shi) {\n"
         "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
         "  for (int round = 0; round < 2; ++round) {\n"
         "#pragma unroll\n"
         "    for (int o = 16; o > 0; o >>= 1) {\n"
         "      const float ov = __shfl_xor_sync(0xffffffffu, v, o);\n"
         "      const kq_i64 oat = __shfl_xor_sync(0xffffffffu, at, o);\n"
         "      if (kq_" +
         name +
         "_takes(v, at, ov, oat)) {\n"
         "        v = ov;\n"
         "        at = oat;\n"
         "      }\n"
         "    }\n"
         "    if (round == 1) break;\n"
         "    __syncthreads();\n"
         "    if (lane == 0) {\n"
         "      sh[warp] = v;\n"
         "      shi[warp] = at;\n"
         "    }\n"
         "    __syncthreads();\n"
         "    const bool held = lane < (int)(blockDim.x >> 5);\n"
         "    v = held ? sh[lane] : 0.0f;\n"
         "    at = held ? shi[lane] : -1;\n"
         "  }\n"
         "  return at;\n}\n\n";
}

// An exclusive scan of v across the block in thread order, and the block's total: warp scans by
// shuffles, then the warps' totals through shared memory, each thread taking the warps before
// its own in order. The first __syncthreads keeps earlier readers of `sh` ahead of its writers.
std::string block_scan(ix::ScanKind k) {
  const bool sum = k == ix::ScanKind::cumsum;
  const std::string name = sum ? "sum" : "prod", op = sum ? "kq_add" : "kq_mul",
                    id = sum ? "0.0f" : "1.0f";
  return "__device__ float kq_block_scan_" + name +
         "(float v, float* sh, float& total) {\n"
         "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;\n"
         "  float x = v;\n"
         "#pragma unroll\n"
         "  for (int o = 1; o < 32; o <<= 1) {\n"
         "    const float y = __shfl_up_sync(0xffffffffu, x, o);\n"
         "    if (lane >= o) x = " +
         op +
         "(y, x);\n"
         "  }\n"
         "  float ex = __shfl_up_sync(0xffffffffu, x, 1);\n"
         "  if (lane == 0) ex = " +
         id +
         ";\n"
         "  __syncthreads();\n"
         "  if (lane == 31) sh[warp] = x;\n"
         "  __syncthreads();\n"
         "  float before = " +
         id + ", all = " + id +
         ";\n"
         "  for (int w = 0; w < warps; ++w) {\n"
         "    if (w == warp) before = all;\n"
         "    all = " +
         op +
         "(all, sh[w]);\n"
         "  }\n"
         "  total = all;\n"
         "  return " +
         op + "(before, ex);\n}\n\n";
}

// Neumaier's compensated step, as the reference sums (core/indexed/accumulate.hpp): each
// addition's rounding error goes into c, whichever operand is larger; once s is not finite, c
// is dropped, so inf and NaN propagate as in a plain sum.
const char* const kSumStep =
    R"(__device__ __forceinline__ void kq_sum_step(float& s, float& c, float x) {
  const float t = __fadd_rn(s, x);
  c = __fadd_rn(c, fabsf(s) >= fabsf(x) ? __fadd_rn(__fsub_rn(s, t), x)
                                        : __fadd_rn(__fsub_rn(x, t), s));
  s = t;
}
__device__ __forceinline__ float kq_sum_value(float s, float c) {
  return isfinite(s) ? __fadd_rn(s, c) : s;
}

)";

// Each line of `text` prefixed with `indent`.
std::string indented(const std::string& text, const std::string& indent) {
  std::string r;
  bool start = true;
  for (char ch : text) {
    if (start && ch != '\n') r += indent;
    r += ch;
    start = ch == '\n';
  }
  return r;
}

std::string one_line(const std::string& text) {
  std::string r;
  for (char c : text) r += (c == '\n' || c == '\r') ? ' ' : c;
  return r;
}

// Where an expression is emitted: inside a loop over the row (the position is `j`) or once per
// row (per-row scalars). Each node is emitted once per context, and each distinct load: in row
// form the same input read twice in one context is the same element. In a staged context (the
// unrolled step of row_loop) a load goes to `loads`, into an array indexed by kq_u, and `out`
// reads it from there.
struct Ctx {
  bool loop = false;
  bool staged = false;
  std::string out;
  std::string loads;
  std::vector<std::string> arrays;
  std::map<int, std::string> names;
  std::map<std::string, std::string> loaded;  // a load's text -> the name holding it
};

class RowWriter {
 public:
  RowWriter(const OpSpec& spec, const RowPlan& plan) : spec_(spec), p_(*spec.program), plan_(plan) {
    stmt_of_.assign(p_.decls.tensors.size(), -1);
    for (std::size_t s = 0; s < p_.statements.size(); ++s)
      stmt_of_[static_cast<std::size_t>(p_.statements[s].tensor)] = static_cast<int>(s);
  }

  Generated run() {
    Generated g;
    g.rows = true;
    g.block = plan_.columns ? kColBlock : kRowMaxBlock;
    g.unroll = 1;
    g.num_inputs = plan_.num_inputs;
    std::set<DType> types;
    std::set<Reduction> reductions;
    std::set<ix::ScanKind> scans;
    for (const TensorDecl& t : p_.decls.tensors)
      if (t.role != Role::temporary) types.insert(t.dtype);
    for (const ix::Node& n : p_.nodes) {
      if (n.kind == NodeKind::reduce) reductions.insert(n.reduction);
      if (n.kind == NodeKind::scan) scans.insert(n.scan);
    }
    g.cuda_headers = types.count(DType::f16) || types.count(DType::bf16);

    std::string& s = g.source;
    s += "// Generated by kq nvrtc_jit (row codegen v2). Do not edit.\n";
    s += "// op " + one_line(spec_.op) + ", rows over " + dims_text(plan_.free_dims) +
         ", reduced along " + r_text() + "\n";
    for (const Statement& st : p_.statements) s += "//   " + one_line(st.text) + "\n";
    s += "\n";
    if (types.count(DType::f16)) s += "#include <cuda_fp16.h>\n";
    if (types.count(DType::bf16)) s += "#include <cuda_bf16.h>\n";
    s += device_helper_library();
    s += "\n// Loads widen exactly to float; stores round once to nearest even.\n";
    for (DType t : types) {
      const std::string T = c_type(t);
      if (t == DType::boolean) {  // a mask input: 0 or 1, as the reference reads it
        s += "__device__ __forceinline__ float kq_ld(const " + T +
             "* p) { return *p != 0 ? 1.0f : 0.0f; }\n";
        continue;
      }
      if (is_integer(t)) {  // an argmax's output, a gathered position
        s += "__device__ __forceinline__ void kq_st(" + T + "* p, kq_i64 v) { *p = (" + T +
             ")v; }\n";
        s += "__device__ __forceinline__ kq_i64 kq_ldi(const " + T + "* p) { return *p; }\n";
        continue;
      }
      const std::string ld = t == DType::f16    ? "__half2float(*p)"
                             : t == DType::bf16 ? "__bfloat162float(*p)"
                                                : "*p";
      const std::string st = t == DType::f16    ? "__float2half_rn(v)"
                             : t == DType::bf16 ? "__float2bfloat16_rn(v)"
                                                : "v";
      s += "__device__ __forceinline__ float kq_ld(const " + T + "* p) { return " + ld + "; }\n";
      s += "__device__ __forceinline__ void kq_st(" + T + "* p, float v) { *p = " + st + "; }\n";
    }
    s += "\n" + layout_struct() + "\n";
    if (reductions.count(Reduction::sum) || scans.count(ix::ScanKind::cumsum)) s += kSumStep;
    if (!plan_.columns) {
      for (Reduction r : reductions) s += is_arg_reduction(r) ? block_arg(r) : block_reduce(r);
      for (ix::ScanKind k : scans) s += block_scan(k);
    }
    s += kernel(g.plan);
    return g;
  }

 private:
  const std::string& dim(int d) const { return p_.decls.dims[static_cast<std::size_t>(d)].name; }

  // R: "N", or its group "(H, W)".
  std::string r_text() const {
    return plan_.r_dims.size() == 1 ? dim(plan_.r_dims[0]) : dims_text(plan_.r_dims);
  }

  std::string dims_text(const std::vector<int>& dims) const {
    std::string s = "(";
    for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dim(dims[i]);
    return s + ")";
  }

  static std::string layout_struct() {
    const std::string R = std::to_string(kMaxRank), T = std::to_string(kMaxRowTensors);
    return "struct kq_rows_layout {\n  kq_i64 rows, len;\n  kq_i64 free_extent[" + R +
           "];\n  kq_i64 free_stride[" + T + "][" + R + "];\n  kq_i64 row_stride[" + T +
           "];\n  float dim_value[" + std::to_string(kMaxRowDims) + "];\n  kq_i64 group_extent[" +
           R + "];\n  kq_i64 group_stride[" + T + "][" + R +
           "];\n};\nstatic_assert(sizeof(kq_rows_layout) == " + std::to_string(sizeof(RowLayout)) +
           ", \"the host's RowLayout\");\n";
  }

  std::string pointer(int t) const {
    const RowTensor& rt = plan_.tensors[static_cast<std::size_t>(t)];
    return rt.slot < plan_.num_inputs ? "in" + std::to_string(rt.slot)
                                      : "out" + std::to_string(rt.slot - plan_.num_inputs);
  }

  std::string params() const {
    std::string s;
    // Pointer slots in order: inputs, then outputs (both in declaration order).
    std::vector<int> by_slot(static_cast<std::size_t>(plan_.num_inputs + plan_.num_outputs));
    for (std::size_t t = 0; t < p_.decls.tensors.size(); ++t)
      if (plan_.tensors[t].slot >= 0)
        by_slot[static_cast<std::size_t>(plan_.tensors[t].slot)] = static_cast<int>(t);
    for (int t : by_slot) {
      const TensorDecl& d = p_.decls.tensors[static_cast<std::size_t>(t)];
      const bool in = d.role == Role::input;
      s +=
          std::string(in ? "const " : "") + c_type(d.dtype) + "* __restrict__ " + pointer(t) + ", ";
    }
    return s + "kq_rows_layout L" +
           (plan_.split || !plan_.over_rows.empty()
                ? ", float* __restrict__ kq_part, unsigned* __restrict__ kq_count"
                : "");
  }

  // The offset of position j along R in a row tensor: j times its one stride, or, where its
  // R's dims are decomposed, j's digit for each dim it has (the last dim fastest) times its
  // stride there.
  std::string along_r(const RowTensor& rt) const {
    if (!rt.r_general) return "j * L.row_stride[" + std::to_string(rt.slot) + "]";
    const std::string slot = std::to_string(rt.slot);
    std::string q = "j", off;
    for (std::size_t d = plan_.r_dims.size(); d-- > 0;) {
      const std::string D = std::to_string(d);
      if (rt.r_positions[d] >= 0)
        off += std::string(off.empty() ? "" : " + ") + "(" +
               (d == 0 ? q : q + " % L.group_extent[" + D + "]") + ") * L.group_stride[" + slot +
               "][" + D + "]";
      q = "(" + q + " / L.group_extent[" + D + "])";
    }
    return "(" + off + ")";
  }

  std::string ssa(const Ctx& c, int node) const {
    return (c.loop ? "e" : "s") + std::to_string(node);
  }

  // The value of node `i` in context `c`: a name whose definition is in c.out.
  std::string emit(int i, Ctx& c) {
    if (auto it = c.names.find(i); it != c.names.end()) return it->second;
    const ix::Node& n = p_.nodes[static_cast<std::size_t>(i)];
    std::string rhs, what, type = "float ";
    switch (n.kind) {
      case NodeKind::number:
        rhs = exact_literal(n.value, true);
        break;
      case NodeKind::param: {
        const ix::ParamDecl& pd = p_.decls.params[static_cast<std::size_t>(n.ref)];
        rhs = exact_literal(pd.value, true);
        what = "param " + pd.name;
        break;
      }
      case NodeKind::dim:
        rhs = "L.dim_value[" + std::to_string(n.ref) + "]";
        what = "dim " + dim(n.ref);
        break;
      case NodeKind::access: {
        const TensorDecl& d = p_.decls.tensors[static_cast<std::size_t>(n.ref)];
        const RowTensor& rt = plan_.tensors[static_cast<std::size_t>(n.ref)];
        if (d.role != Role::input) {
          if (!rt.row) return c.names[i] = "v" + std::to_string(n.ref);  // a per-row scalar
          if (!c.loop) throw std::logic_error("row tensor " + d.name + " read outside a loop");
          // A row temporary (or an output read later): its statement, inlined at j.
          const int root = p_.statements[static_cast<std::size_t>(stmt_of_[n.ref])].root;
          return c.names[i] = emit(root, c);
        }
        const std::string slot = std::to_string(rt.slot);
        std::string at = rt.row ? " + " + along_r(rt) : "";
        if (rt.row &&
            p_.nodes[static_cast<std::size_t>(n.args[static_cast<std::size_t>(rt.r_at)])].kind ==
                NodeKind::access)  // x[m, t[m]]: at the gathered position
          at = " + " + emit(n.args[static_cast<std::size_t>(rt.r_at)], c) + " * L.row_stride[" +
               slot + "]";
        else if (rt.row && !c.loop)
          throw std::logic_error("row input " + d.name + " outside a loop");
        const bool position = d.dtype == DType::i32 || d.dtype == DType::i64;  // gathered
        rhs = std::string(position ? "kq_ldi(" : "kq_ld(") + pointer(n.ref) + " + (o" + slot + at +
              "))";
        what = d.name;
        if (position) type = "kq_i64 ";
        if (auto it = c.loaded.find(rhs); it != c.loaded.end()) return c.names[i] = it->second;
        c.loaded[rhs] = ssa(c, i);
        if (c.staged && !position) {
          const std::string a = "kq_x" + std::to_string(i);
          c.arrays.push_back(a);
          c.loads += a + "[kq_u] = " + rhs + ";  // " + what + "\n";
          rhs = a + "[kq_u]";
        }
        break;
      }
      case NodeKind::reduce:
        return c.names[i] = "r" + std::to_string(i);
      case NodeKind::apply: {
        std::string a[3];
        for (std::size_t k = 0; k < n.args.size() && k < 3; ++k) a[k] = emit(n.args[k], c);
        rhs = apply(n.op, a);
        what = to_string(n.op);
        break;
      }
      default:
        throw std::logic_error("a node the row form excludes");
    }
    const std::string name = ssa(c, i);
    c.out +=
        "const " + type + name + " = " + rhs + ";" + (what.empty() ? "" : "  // " + what) + "\n";
    return c.names[i] = name;
  }

  static std::string apply(Op op, const std::string* a) {
    switch (op) {
      case Op::add:
      case Op::sub:
      case Op::mul:
      case Op::div:
      case Op::max:
      case Op::min:
        return "kq_" + std::string(to_string(op)) + "(" + a[0] + ", " + a[1] + ")";
      case Op::sqrt:
      case Op::abs:
      case Op::relu:
      case Op::exp:
      case Op::log:
      case Op::tanh:
      case Op::sigmoid:
      case Op::erf:
      case Op::gelu:
      case Op::silu:
        return "kq_" + std::string(to_string(op)) + "(" + a[0] + ")";
      case Op::neg:
        return "-" + a[0];
      case Op::clamp:
        return "kq_clamp(" + a[0] + ", " + a[1] + ", " + a[2] + ")";
      case Op::select:  // a NaN condition is != 0: it selects the first branch
        return "(" + a[0] + " != 0.0f) ? " + a[1] + " : " + a[2];
      case Op::lt:
      case Op::le:
      case Op::gt:
      case Op::ge:
      case Op::eq:
      case Op::ne: {
        static const char* sym[] = {"<", "<=", ">", ">=", "==", "!="};
        return "(" + a[0] + " " + sym[static_cast<int>(op) - static_cast<int>(Op::lt)] + " " +
               a[1] + ") ? 1.0f : 0.0f";
      }
      default:
        throw std::logic_error("an op the row form excludes");
    }
  }

  bool has_arg_reduction() const {
    return std::any_of(p_.nodes.begin(), p_.nodes.end(), [](const ix::Node& n) {
      return n.kind == NodeKind::reduce && is_arg_reduction(n.reduction);
    });
  }

  bool needs_shared() const {
    return std::any_of(p_.nodes.begin(), p_.nodes.end(), [](const ix::Node& n) {
      return n.kind == NodeKind::reduce || n.kind == NodeKind::scan;
    });
  }

  std::vector<int> reduces_of(int root) const {
    std::vector<int> out, stack{root};
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      const ix::Node& n = p_.nodes[static_cast<std::size_t>(i)];
      if (n.kind == NodeKind::reduce) {
        out.push_back(i);
        continue;  // a nested reduction is excluded by the row form
      }
      for (int a : n.args) stack.push_back(a);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // A loop over the row's positions running at each the statements `body` emits (in terms of
  // j) into a loop context, then the ones it returns. In the row kernel a thread takes j =
  // threadIdx.x + k * blockDim.x in increasing k, as a plain strided loop would; in the column
  // kernel the thread takes every j. kRowUnroll positions a step while all of them lie in the
  // row: first the step's loads, all of them, then its arithmetic, so that the loads are in
  // flight together (a thread with one 4-byte load in flight at a time leaves HBM idle). A
  // thread's positions come in the plain loop's order, so a reduction has the same bits.
  template <class Body>
  std::string row_loop(Body body, const std::string& I) {
    Ctx staged{true, true}, plain{true};
    const std::string staged_end = body(staged), plain_end = body(plain);
    const std::string U = std::to_string(kRowUnroll);
    const std::string each = I + "  for (int kq_u = 0; kq_u < " + U + "; ++kq_u) {\n";
    // A thread's first position and its stride: its row's every one (column kernel), the
    // block's share (row kernel), the grid's (split).
    std::string s =
        plan_.columns ? I + "kq_i64 kq_j0 = 0;\n" + I + "const kq_i64 kq_nt = 1;\n"
        : plan_.split
            ? I + "kq_i64 kq_j0 = (kq_i64)blockIdx.x * blockDim.x + threadIdx.x;\n" + I +
                  "const kq_i64 kq_nt = (kq_i64)gridDim.x * blockDim.x;\n"
            : I + "kq_i64 kq_j0 = threadIdx.x;\n" + I + "const kq_i64 kq_nt = blockDim.x;\n";
    s += I + "for (; kq_j0 + " + std::to_string(kRowUnroll - 1) +
         " * kq_nt < L.len; kq_j0 += " + U + " * kq_nt) {\n";
    if (!staged.arrays.empty()) {
      s += I + "  float ";
      for (std::size_t a = 0; a < staged.arrays.size(); ++a)
        s += (a ? ", " : "") + staged.arrays[a] + "[" + U + "]";
      s += ";\n#pragma unroll\n" + each + I + "    const kq_i64 j = kq_j0 + kq_u * kq_nt;\n" +
           indented(staged.loads, I + "    ") + I + "  }\n";
    }
    s += "#pragma unroll\n" + each + I +
         "    [[maybe_unused]] const kq_i64 j = kq_j0 + kq_u * kq_nt;\n" +
         indented(staged.out + staged_end, I + "    ") + I + "  }\n" + I + "}\n";
    s += I + "for (kq_i64 j = kq_j0; j < L.len; j += kq_nt) {\n" +
         indented(plain.out + plain_end, I + "  ") + I + "}\n";
    return s;
  }

  // Reduction node `r` into the variable named after it: a loop over the row, then (in the row
  // kernel) the threads' partials combined. argmax and argmin keep the first extreme: only a
  // strictly better term moves it, and the first NaN is final (across a block: block_arg).
  std::string reduction(int r) {
    const ix::Node& n = p_.nodes[static_cast<std::size_t>(r)];
    const std::string R = "r" + std::to_string(r), I = "      ";
    if (is_arg_reduction(n.reduction)) {
      const char* better = n.reduction == Reduction::argmax ? " > " : " < ";
      auto step = [&](Ctx& c) {
        const std::string t = emit(n.args[0], c);
        return "if (at < 0 || (best == best && (" + t + " != " + t + " || " + t + better +
               "best))) {\n  best = " + t + ";\n  at = j;\n}\n";
      };
      const std::string combined =
          plan_.columns
              ? "at"
              : "kq_block_" + std::string(n.reduction == Reduction::argmax ? "argmax" : "argmin") +
                    "(best, at, kq_sh, kq_shi)";
      return "    kq_i64 " + R + ";\n    {\n" + I + "float best = 0.0f;\n" + I +
             "kq_i64 at = -1;\n" + row_loop(step, I) + I + R + " = " + combined + ";\n    }\n";
    }
    // A sum's partial is compensated: a thread may add 2^15 terms (a row of 2^24).
    const Running acc{n.reduction, "acc", "comp"};
    auto step = [&](Ctx& c) { return acc.step(emit(n.args[0], c)); };
    const std::string partial = acc.value();
    return "    float " + R + ";\n    {\n" + I + acc.start() + ";\n" + row_loop(step, I) + I + R +
           " = " +
           (plan_.columns ? partial
                          : "kq_block_" + std::string(reduction_word(n.reduction)) + "(" + partial +
                                ", kq_sh)") +
           ";\n    }\n";
  }

  // The store of `v` at position j along R into row tensor t.
  std::string row_store(int t, const std::string& v) const {
    const RowTensor& rt = plan_.tensors[static_cast<std::size_t>(t)];
    return "kq_st(" + pointer(t) + " + (o" + std::to_string(rt.slot) + " + " + along_r(rt) + "), " +
           v + ");\n";
  }

  // A scan statement in the row kernel: the row in chunks of kRowUnroll positions a thread
  // (in scan order: from the end for reverse), each thread scanning its own positions, the
  // block's exclusive scan of the threads' totals (kq_block_scan_*), and a running total of the
  // chunks before (compensated for cumsum). Positions past the row take the identity.
  std::string scan_rows(const Statement& st) {
    const ix::Node& n = p_.nodes[static_cast<std::size_t>(st.root)];
    const bool sum = n.scan == ix::ScanKind::cumsum;
    const std::string op = sum ? "kq_add" : "kq_mul", id = sum ? "0.0f" : "1.0f",
                      U = std::to_string(kRowUnroll), I = "      ";
    Ctx c{true, true};
    const std::string term = emit(n.args[0], c);
    const std::string J = I + "  ", K = J + "  ";
    const std::string each =
        "#pragma unroll\n" + J + "for (int kq_u = 0; kq_u < " + U + "; ++kq_u) {\n";
    const std::string at = K + "const kq_i64 kq_p = kq_first + kq_u;\n";
    const std::string j_at =
        K + "const kq_i64 j = " + (n.reverse ? "L.len - 1 - kq_p" : "kq_p") + ";\n";
    const Running carry{scan_reduction(n.scan), "kq_carry", "kq_ccomp"};
    std::string s = "    {\n      " + carry.start() +
                    ";\n      for (kq_i64 kq_base = 0; kq_base < L.len; kq_base += (kq_i64)" +
                    "blockDim.x * " + U + ") {\n";
    s += J + "const kq_i64 kq_first = kq_base + (kq_i64)threadIdx.x * " + U + ";\n";
    s += J + "float kq_t[" + U + "];\n";
    if (!c.arrays.empty()) {  // the loads first, all of them
      s += J + "float ";
      for (std::size_t a = 0; a < c.arrays.size(); ++a)
        s += (a ? ", " : "") + c.arrays[a] + "[" + U + "]";
      s += ";\n" + each + at + j_at + K + "if (kq_p < L.len) {\n" + indented(c.loads, K + "  ") +
           K + "}\n" + J + "}\n";
    }
    // The thread's own scan of its positions.
    s += each + at + K + "float kq_v = " + id + ";\n" + K + "if (kq_p < L.len) {\n" +
         indented(c.out, K + "  ") + K + "  kq_v = " + term + ";\n" + K + "}\n" + K +
         "kq_t[kq_u] = kq_u == 0 ? kq_v : " + op + "(kq_t[kq_u - 1], kq_v);\n" + J + "}\n";
    // Everything before the thread's first position: the chunks before, the threads before.
    s += J + "float kq_total;\n" + J + "const float kq_before = kq_block_scan_" +
         (sum ? "sum" : "prod") + "(kq_t[" + std::to_string(kRowUnroll - 1) +
         "], kq_sh, kq_total);\n";
    s += J + "const float kq_start = " + op + "(" + carry.value() + ", kq_before);\n";
    const std::string value = n.exclusive
                                  ? "kq_u == 0 ? kq_start : " + op + "(kq_start, kq_t[kq_u - 1])"
                                  : op + "(kq_start, kq_t[kq_u])";
    s += each + at + j_at + K + "if (kq_p < L.len) " + row_store(st.tensor, value) + J + "}\n";
    s += J + carry.step("kq_total");
    return s + "      }\n    }\n";
  }

  // A scan statement in the column kernel: the thread's own running value along its row
  // (compensated for cumsum), stored before the step (exclusive) or after it.
  std::string scan_columns(const Statement& st) {
    const ix::Node& n = p_.nodes[static_cast<std::size_t>(st.root)];
    const std::string I = "        ";
    Ctx c{true};
    const Running acc{scan_reduction(n.scan), "kq_acc", "kq_comp"};
    const std::string value = acc.value(), step = acc.step(emit(n.args[0], c));
    std::string s = "    {\n      " + acc.start() +
                    ";\n      for (kq_i64 kq_p = 0; kq_p < L.len; ++kq_p) {\n" + I +
                    "const kq_i64 j = " + (n.reverse ? "L.len - 1 - kq_p" : "kq_p") + ";\n" +
                    indented(c.out, I);
    s += n.exclusive ? I + row_store(st.tensor, value) + I + step
                     : I + step + I + row_store(st.tensor, value);
    return s + "      }\n    }\n";
  }

  // The blocks' values of reductions `nodes` (values[k] in every thread of a block) into
  // kq_part; the last block to count itself in (kq_count) goes on: every thread combines a
  // strided share of each reduction's partials, in block order, then the block reduction puts
  // r<node> in every thread; the other blocks return. The same bits for a given grid.
  std::string last_block_combines(const std::vector<int>& nodes,
                                  const std::vector<std::string>& values) {
    std::string s;
    for (std::size_t k = 0; k < nodes.size(); ++k)
      s += "  if (threadIdx.x == 0) kq_part[" + std::to_string(k) +
           " * gridDim.x + blockIdx.x] = " + values[k] + ";\n";
    s += "  // The last block to finish combines the partials.\n"
         "  __threadfence();\n  __syncthreads();\n"
         "  if (threadIdx.x == 0) kq_last = atomicAdd(kq_count, 1u) == gridDim.x - 1;\n"
         "  __syncthreads();\n  if (!kq_last) return;\n  __threadfence();\n"
         "  const volatile float* kq_partials = kq_part;\n";
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const ix::Node& n = p_.nodes[static_cast<std::size_t>(nodes[k])];
      const Running acc{n.reduction, "acc", "comp"};
      s +=
          "  {\n    " + acc.start() +
          ";\n    for (unsigned kq_b = threadIdx.x; kq_b < gridDim.x; kq_b += blockDim.x)\n      " +
          acc.step("kq_partials[" + std::to_string(k) + " * gridDim.x + kq_b]") + "    r" +
          std::to_string(nodes[k]) + " = kq_block_" + reduction_word(n.reduction) + "(" +
          acc.value() + ", kq_sh);\n  }\n";
    }
    return s;
  }

  // The statements computed after the rows (or, split, after the row's reductions) by thread 0
  // of the last block, storing their outputs; then the count back to 0 for the next launch.
  std::string scalars_after(std::string& plan, bool split) {
    std::string s = "  if (threadIdx.x != 0) return;\n";
    for (const Statement& st : p_.statements) {
      const TensorDecl& d = p_.decls.tensors[static_cast<std::size_t>(st.tensor)];
      const RowTensor& rt = plan_.tensors[static_cast<std::size_t>(st.tensor)];
      if (split ? rt.row : !rt.after_rows) continue;
      Ctx c;
      const std::string v = emit(st.root, c);
      const std::string V = "v" + std::to_string(st.tensor);
      s += "  // " + one_line(st.text) + "\n" + indented(c.out, "  ") + "  const float " + V +
           " = " + v + ";\n";
      if (d.role == Role::output) s += "  kq_st(" + pointer(st.tensor) + ", " + V + ");\n";
      plan += "line " + std::to_string(st.line) + " " + d.name +
              ": scalar, computed by the last block" +
              (reduces_of(st.root).empty() ? "" : " from the blocks' partials (sums compensated)") +
              "\n";
    }
    return s + "  *kq_count = 0;\n";
  }

  // No free dim (plan_.split): every block reduces its share of the one row; the last block
  // combines the partials (last_block_combines) and computes the scalar statements.
  std::string kernel_split(std::string& plan) {
    plan += "no free dim: the row of " + r_text() +
            " spread over the grid, each block reducing its share (each thread " +
            std::to_string(kRowUnroll) +
            " positions a step), the last block to finish combining the blocks' partials in "
            "block order; float32 throughout\n";
    std::string s = "extern \"C\" __global__ void __launch_bounds__(" +
                    std::to_string(kRowMaxBlock) + ", " + std::to_string(kRowMinBlocks) + ") " +
                    kRowKernel + "(" + params() + ") {\n";
    s += "  __shared__ float kq_sh[32];\n  __shared__ bool kq_last;\n";
    for (std::size_t t = 0; t < p_.decls.tensors.size(); ++t)
      if (plan_.tensors[t].slot >= 0)
        s += "  const kq_i64 o" + std::to_string(plan_.tensors[t].slot) + " = 0;  // " +
             p_.decls.tensors[t].name + "\n";
    std::vector<int> nodes;
    std::vector<std::string> values;
    for (const Statement& st : p_.statements) {
      if (plan_.tensors[static_cast<std::size_t>(st.tensor)].row)
        plan += "line " + std::to_string(st.line) + " " +
                p_.decls.tensors[static_cast<std::size_t>(st.tensor)].name +
                ": row temporary, inlined where it is read\n";
      for (int r : reduces_of(st.root)) {
        s += "    // " + one_line(st.text) + ": this block's share\n" + reduction(r);
        nodes.push_back(r);
        values.push_back("r" + std::to_string(r));
      }
    }
    return s + last_block_combines(nodes, values) + scalars_after(plan, true) + "}\n";
  }

  std::string kernel(std::string& plan) {
    if (plan_.split) return kernel_split(plan);
    const std::size_t nf = plan_.free_dims.size();
    const bool cols = plan_.columns;
    plan += "rows: " + dims_text(plan_.free_dims) + " collapsed into one index; row length " +
            r_text() +
            (cols ? "; one thread per row (the column kernel: " + r_text() +
                        " is no tensor's innermost extent, neighbouring threads read "
                        "neighbouring elements)"
                  : std::string("; one block per row")) +
            ", float32 throughout; each thread " + std::to_string(kRowUnroll) +
            " row positions a step, then the rest one at a time\n";
    std::string s = "extern \"C\" __global__ void __launch_bounds__(" +
                    (cols ? std::to_string(kColBlock)
                          : std::to_string(kRowMaxBlock) + ", " + std::to_string(kRowMinBlocks)) +
                    ") " + kRowKernel + "(" + params() + ") {\n";
    if (needs_shared() && !cols) s += "  __shared__ float kq_sh[32];\n";
    if (has_arg_reduction() && !cols) s += "  __shared__ kq_i64 kq_shi[32];\n";
    // A reduction over the rows: each thread keeps its block's running value (the same in
    // every thread), combined after the rows.
    std::vector<Running> over;
    std::vector<std::string> over_values;
    if (!plan_.over_rows.empty()) s += "  __shared__ bool kq_last;\n";
    for (std::size_t k = 0; k < plan_.over_rows.size(); ++k) {
      const std::string K = std::to_string(k);
      over.push_back({p_.nodes[static_cast<std::size_t>(plan_.over_rows[k])].reduction, "kq_o" + K,
                      "kq_oc" + K});
      s += "  " + over.back().start() + ";\n";
      over_values.push_back(over.back().value());
    }
    s += cols ? "  for (kq_i64 row = (kq_i64)blockIdx.x * blockDim.x + threadIdx.x; row < L.rows;"
                " row += (kq_i64)gridDim.x * blockDim.x) {\n"
              : "  for (kq_i64 row = blockIdx.x; row < L.rows; row += gridDim.x) {\n";
    if (nf > 0) {
      s += "    kq_i64 rem = row;\n";
      for (std::size_t d = nf; d-- > 1;) {
        const std::string D = std::to_string(d);
        s += "    const kq_i64 c" + D + " = rem % L.free_extent[" + D + "];\n";
        s += "    rem /= L.free_extent[" + D + "];\n";
      }
      s += "    const kq_i64 c0 = rem;\n";
    }
    for (std::size_t t = 0; t < p_.decls.tensors.size(); ++t) {
      const RowTensor& rt = plan_.tensors[t];
      if (rt.slot < 0) continue;
      const std::string slot = std::to_string(rt.slot);
      std::string off;
      for (int place : rt.free_at) {
        const std::string P = std::to_string(place);
        off += (off.empty() ? "" : " + ") + std::string("c") + P + " * L.free_stride[" + slot +
               "][" + P + "]";
      }
      s += "    const kq_i64 o" + slot + " = " + (off.empty() ? "0" : off) + ";  // " +
           p_.decls.tensors[t].name + "\n";
    }
    std::vector<int> row_outputs;
    for (const Statement& st : p_.statements) {
      const TensorDecl& d = p_.decls.tensors[static_cast<std::size_t>(st.tensor)];
      const RowTensor& rt = plan_.tensors[static_cast<std::size_t>(st.tensor)];
      if (rt.after_rows) continue;  // after the rows, below
      s += "    // " + one_line(st.text) + "\n";
      if (const ix::Node& root = p_.nodes[static_cast<std::size_t>(st.root)];
          root.kind == NodeKind::scan) {
        s += cols ? scan_columns(st) : scan_rows(st);
        plan += "line " + std::to_string(st.line) + " " + d.name + ": " +
                (root.scan == ix::ScanKind::cumsum ? "cumsum" : "cumprod") + " along " + r_text() +
                (root.reverse ? ", reverse" : "") + (root.exclusive ? ", exclusive" : "") +
                (cols ? ": the thread's running value"
                      : ": chunks of " + std::to_string(kRowUnroll) +
                            " positions a thread, the threads' totals scanned across the block, "
                            "a running total of the chunks") +
                (root.scan == ix::ScanKind::cumsum ? " (compensated)" : "") + "\n";
        continue;
      }
      std::string how;
      for (int r : reduces_of(st.root)) {
        s += reduction(r);
        how += std::string(how.empty() ? "" : ", ") +
               std::string(ix::to_string(p_.nodes[static_cast<std::size_t>(r)].reduction)) +
               " over " + r_text();
      }
      if (!rt.row) {
        Ctx c;
        const std::string v = emit(st.root, c);
        const std::string V = "v" + std::to_string(st.tensor);
        s += indented(c.out, "    ") + "    const " + (is_integer(d.dtype) ? "kq_i64 " : "float ") +
             V + " = " + v + ";\n";
        if (d.role == Role::output)
          s += std::string(cols ? "    " : "    if (threadIdx.x == 0) ") + "kq_st(" +
               pointer(st.tensor) + " + o" + std::to_string(rt.slot) + ", " + V + ");\n";
      } else if (d.role == Role::output) {
        row_outputs.push_back(st.tensor);
      }
      plan +=
          "line " + std::to_string(st.line) + " " + d.name + ": " +
          (!rt.row                     ? "per-row scalar, a register of every thread"
           : d.role == Role::temporary ? "row temporary, inlined where it is read"
                                       : "row output, written in the final loop") +
          (d.role == Role::output && !rt.row && !cols ? ", stored by thread 0" : "") +
          (how.empty() ? ""
           : cols      ? "; " + how + ": one thread's loop (sums compensated)"
                  : "; " + how + ": per-thread partials (sums compensated), then warp shuffles") +
          "\n";
    }
    if (!row_outputs.empty()) {
      auto stores = [&](Ctx& c) {
        std::string out;
        for (int t : row_outputs) {
          const std::string v = emit(
              p_.statements[static_cast<std::size_t>(stmt_of_[static_cast<std::size_t>(t)])].root,
              c);
          out += row_store(t, v);
        }
        return out;
      };
      s += "    // the row outputs\n" + row_loop(stores, "    ");
    }
    for (std::size_t k = 0; k < plan_.over_rows.size(); ++k) {
      const ix::Node& n = p_.nodes[static_cast<std::size_t>(plan_.over_rows[k])];
      Ctx c;
      const std::string term = emit(n.args[0], c);
      s += "    // this row's term of the reduction over the rows\n" + indented(c.out, "    ") +
           "    " + over[k].step(term);
    }
    s += "  }\n";
    if (!plan_.over_rows.empty()) {
      for (int r : plan_.over_rows) s += "  float r" + std::to_string(r) + ";\n";
      s += last_block_combines(plan_.over_rows, over_values) + scalars_after(plan, false);
      plan +=
          "the reductions over the rows: each block's rows in turn, then the last block "
          "combining the blocks' partials in block order\n";
    }
    return s + "}\n";
  }

  const OpSpec& spec_;
  const ix::Program& p_;
  const RowPlan& plan_;
  std::vector<int> stmt_of_;  // per tensor: the statement assigning it, or -1
};

}  // namespace

Generated generate_rows(const OpSpec& spec, const RowPlan& plan) {
  if (!spec.program || plan.r_dims.empty())
    throw std::invalid_argument("generate_rows: no row plan (lower_rows first)");
  return RowWriter(spec, plan).run();
}

}  // namespace kq::nvrtc
