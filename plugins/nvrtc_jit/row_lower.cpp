#include "row_lower.hpp"

#include <algorithm>
#include <set>

namespace kq::nvrtc {
namespace {

using ix::NodeKind;
using ix::Program;
using ix::Reduction;
using ix::Role;
using ix::Statement;
using ix::TensorDecl;

bool float_type(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

class Lowering {
 public:
  Lowering(const OpSpec& spec, RowPlan& plan) : spec_(spec), p_(*spec.program), plan_(plan) {}

  std::string run() {
    if (spec_.compute != DType::f32)
      return "computed in " + std::string(to_string(spec_.compute)) +
             ": the row kernel computes in float32";
    // The constructs first (a scan, where R stands, a gather), then the declarations: the
    // reason given is the most telling one.
    if (std::string why = find_row_dim(); !why.empty()) return why;
    if (std::string why = check_row_position(); !why.empty()) return why;
    for (const Statement& s : p_.statements)
      if (std::string why = check_statement(s); !why.empty()) return at(s) + why;
    if (std::string why = check_declarations(); !why.empty()) return why;
    return check_shapes();
  }

 private:
  static std::string at(const Statement& s) {
    return "line " + std::to_string(s.line) + " `" + s.text + "`: ";
  }

  const std::string& dim_name(int d) const {
    return p_.decls.dims[static_cast<std::size_t>(d)].name;
  }

  std::string shape_text(const TensorDecl& t) const {
    std::string s = t.name + "[";
    for (std::size_t i = 0; i < t.shape.size(); ++i)
      s += (i ? ", " : "") + ix::extent_text(t.shape[i]);
    return s + "]";
  }

  std::string check_declarations() {
    if (p_.decls.dims.size() > static_cast<std::size_t>(kMaxRowDims))
      return std::to_string(p_.decls.dims.size()) + " dims, at most " +
             std::to_string(kMaxRowDims) + " are lowered";
    plan_.tensors.assign(p_.decls.tensors.size(), RowTensor{});
    for (std::size_t i = 0; i < p_.decls.tensors.size(); ++i) {
      const TensorDecl& t = p_.decls.tensors[i];
      const std::string who = std::string(ix::to_string(t.role)) + " " + t.name;
      // A temporary's dtype only says whether it may be gathered through (f64 by default):
      // a float one is kept in float32 like every value here.
      const bool index_out = t.role == Role::output &&
                             (t.dtype == DType::i32 || t.dtype == DType::i64) &&
                             arg_outputs_.count(static_cast<int>(i));
      const bool mask_in = t.role == Role::input && t.dtype == DType::boolean;
      const bool ok = t.role == Role::temporary ? !is_integer(t.dtype)
                                                : float_type(t.dtype) || index_out || mask_in;
      if (!ok) {
        if (t.dtype == DType::f64) return who + ": dtype f64: the row kernel computes in float32";
        return who + ": dtype " + std::string(to_string(t.dtype)) +
               ": integer and bool tensors are not lowered" +
               (t.role == Role::output  ? " (bar an argmax's i32 or i64 output)"
                : t.role == Role::input ? " (bar bool inputs)"
                                        : "");
      }
      if (t.role == Role::input) plan_.tensors[i].slot = plan_.num_inputs++;
    }
    for (std::size_t i = 0; i < p_.decls.tensors.size(); ++i)
      if (p_.decls.tensors[i].role == Role::output)
        plan_.tensors[i].slot = plan_.num_inputs + plan_.num_outputs++;
    if (plan_.num_inputs + plan_.num_outputs > kMaxRowTensors)
      return std::to_string(plan_.num_inputs + plan_.num_outputs) +
             " inputs and outputs, at most " + std::to_string(kMaxRowTensors) + " are lowered";
    return {};
  }

  // R: the one index every reduction runs over; without reductions, the innermost extent of
  // the first tensor assigned.
  std::string find_row_dim() {
    for (const Statement& s : p_.statements)
      for (int i : tree(s.root)) {
        const ix::Node& n = p_.nodes[static_cast<std::size_t>(i)];
        if (n.kind == NodeKind::scan) {
          if (std::string why = check_scan(s, i); !why.empty()) return at(s) + why;
          continue;
        }
        if (n.kind != NodeKind::reduce) continue;
        const std::string red(ix::to_string(n.reduction));
        if (is_arg_reduction(n.reduction)) {
          if (i != s.root) return at(s) + red + " inside an expression is not lowered";
          const TensorDecl& t = p_.decls.tensors[static_cast<std::size_t>(s.tensor)];
          if (t.role != Role::output || (t.dtype != DType::i32 && t.dtype != DType::i64))
            return at(s) + red + " into " + std::string(ix::to_string(t.role)) + " " + t.name +
                   " of " + std::string(to_string(t.dtype)) +
                   ": only into an i32 or i64 output is lowered";
          arg_outputs_.insert(s.tensor);
        }
        if (n.over.size() != 1) {
          std::string names;
          for (int v : n.over)
            names += (names.empty() ? "" : ", ") + p_.indices[static_cast<std::size_t>(v)].name;
          return at(s) + "a " + red + " over several indices (" + names +
                 ") is not lowered: one reduced dim, the innermost";
        }
        const ix::IndexVar& v = p_.indices[static_cast<std::size_t>(n.over[0])];
        if (!v.extent.is_dim())
          return at(s) + "a " + red + " over '" + v.name + "', of constant extent " +
                 std::to_string(v.extent.constant) + ", is not lowered";
        if (plan_.r_dim < 0) plan_.r_dim = v.extent.dim;
        if (plan_.r_dim != v.extent.dim)
          return at(s) + "a " + red + " over " + dim_name(v.extent.dim) + ", an earlier one over " +
                 dim_name(plan_.r_dim) + ": one reduced dim is lowered";
      }
    if (plan_.r_dim >= 0) return {};
    // No reduction: the one dim declared reduced, else the innermost extent of the assigned
    // tensor of highest rank (the first of them).
    int reduced = -1, count = 0;
    for (std::size_t d = 0; d < p_.decls.dims.size(); ++d)
      if (p_.decls.dims[d].kind == ix::DimKind::reduced) {
        reduced = static_cast<int>(d);
        ++count;
      }
    if (count == 1) {
      plan_.r_dim = reduced;
      return {};
    }
    const Statement* widest = nullptr;
    for (const Statement& s : p_.statements)
      if (widest == nullptr || s.lhs.size() > widest->lhs.size()) widest = &s;
    const TensorDecl& t = p_.decls.tensors[static_cast<std::size_t>(widest->tensor)];
    if (t.shape.empty()) return "no reduction and no assigned tensor with a dimension: no row";
    if (!t.shape.back().is_dim())
      return at(*widest) + "the innermost extent of " + shape_text(t) + " is a constant";
    plan_.r_dim = t.shape.back().dim;
    return {};
  }

  // A scan is the whole right-hand side of a statement assigning an output no later statement
  // reads, and runs along R (the dim it sets, if none is set yet).
  std::string check_scan(const Statement& s, int node) {
    const ix::Node& n = p_.nodes[static_cast<std::size_t>(node)];
    const std::string what = n.scan == ix::ScanKind::cumsum ? "cumsum" : "cumprod";
    if (node != s.root) return "a " + what + " inside an expression is not lowered";
    const TensorDecl& t = p_.decls.tensors[static_cast<std::size_t>(s.tensor)];
    if (t.role != Role::output)
      return "a " + what + " into " + std::string(ix::to_string(t.role)) + " " + t.name +
             " is not lowered: only into an output";
    const ix::IndexVar& v = p_.indices[static_cast<std::size_t>(n.over[0])];
    if (!v.extent.is_dim())
      return "a " + what + " along '" + v.name + "', of constant extent, is not lowered";
    if (plan_.r_dim < 0) plan_.r_dim = v.extent.dim;
    if (plan_.r_dim != v.extent.dim)
      return "a " + what + " along " + dim_name(v.extent.dim) + ", a reduction along " +
             dim_name(plan_.r_dim) + ": one dim is lowered";
    scan_outputs_.insert(s.tensor);
    return {};
  }

  // The nodes of the expression under `root`, in increasing order (operands first).
  std::vector<int> tree(int root) const {
    std::vector<int> out, stack{root};
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      out.push_back(i);
      for (int a : p_.nodes[static_cast<std::size_t>(i)].args) stack.push_back(a);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // Where R stands: the innermost extent of every tensor that has it (the row kernel) or of
  // none (the column kernel). Constant extents other than 1 are declined.
  std::string check_row_position() {
    const int R = plan_.r_dim;
    const TensorDecl* inner = nullptr;
    const TensorDecl* not_inner = nullptr;
    for (const TensorDecl& t : p_.decls.tensors) {
      int seen = 0;
      for (std::size_t i = 0; i < t.shape.size(); ++i) {
        const ix::Extent& e = t.shape[i];
        if (!e.is_dim()) {
          if (e.constant == 1) continue;
          return who(t) + ": a constant extent (" + std::to_string(e.constant) +
                 ") is not lowered (bar 1)";
        }
        if (e.dim != R) continue;
        if (++seen > 1)
          return dim_name(R) + ", the reduced dim, is two extents of " + who(t) + ": not lowered";
        const TensorDecl*& first = i + 1 == t.shape.size() ? inner : not_inner;
        if (first == nullptr) first = &t;
      }
    }
    if (inner != nullptr && not_inner != nullptr)
      return dim_name(R) + ", the reduced dim, is not the innermost extent of " + who(*not_inner) +
             " but is of " + who(*inner) + " (a product: neither a row nor a column kernel)";
    plan_.columns = not_inner != nullptr;
    for (int t : arg_outputs_)
      if (!plan_.columns)
        return "the argmax or argmin into " + p_.decls.tensors[static_cast<std::size_t>(t)].name +
               " runs along " + dim_name(R) +
               ", the innermost extent: not lowered (the column kernel takes them)";
    return {};
  }

  std::string who(const TensorDecl& t) const {
    return std::string(ix::to_string(t.role)) + " " + shape_text(t);
  }

  std::string check_shapes() {
    const int R = plan_.r_dim;
    // F: the first assigned tensor's dims before R.
    const TensorDecl& first = p_.decls.tensors[static_cast<std::size_t>(p_.statements[0].tensor)];
    for (const ix::Extent& e : first.shape)
      if (e.is_dim() && e.dim != R) plan_.free_dims.push_back(e.dim);
    auto free_place = [&](int dim) {
      auto it = std::find(plan_.free_dims.begin(), plan_.free_dims.end(), dim);
      return it == plan_.free_dims.end() ? -1 : static_cast<int>(it - plan_.free_dims.begin());
    };
    std::string f_text = "(";
    for (std::size_t i = 0; i < plan_.free_dims.size(); ++i)
      f_text += (i ? ", " : "") + dim_name(plan_.free_dims[i]);
    f_text += ")";
    for (std::size_t i = 0; i < p_.decls.tensors.size(); ++i) {
      const TensorDecl& t = p_.decls.tensors[i];
      RowTensor& rt = plan_.tensors[i];
      rt.r_at = r_position(t);
      rt.row = rt.r_at >= 0;
      const std::string who = this->who(t);
      for (std::size_t k = 0; k < t.shape.size(); ++k) {
        if (!t.shape[k].is_dim() || static_cast<int>(k) == rt.r_at) continue;
        const int place = free_place(t.shape[k].dim);
        if (place < 0)
          return who + ": " + dim_name(t.shape[k].dim) + " is neither the reduced dim " +
                 dim_name(R) + " nor a free dim of " + shape_text(first) +
                 " (a reduction over a free dim is not lowered)";
        if (!rt.free_at.empty() && place <= rt.free_at.back())
          return who + ": its free dims are not in the order " + f_text;
        rt.free_at.push_back(place);
        rt.free_pos.push_back(static_cast<int>(k));
      }
      // Assigned tensors have every free dim: a statement computes whole rows.
      if (t.role != Role::input && rt.free_at.size() != plan_.free_dims.size())
        return who + ": an assigned tensor must have every free dim " + f_text + " (then " +
               dim_name(R) + " or not): a reduction over a free dim is not lowered";
    }
    return {};
  }

  // The right-hand side: reads through bare indices (the statement's own for free dims, the
  // current row index for R), one level of reduction, no index values or scans.
  std::string check_statement(const Statement& s) {
    const TensorDecl& t = p_.decls.tensors[static_cast<std::size_t>(s.tensor)];
    lhs_by_dim_.assign(p_.decls.dims.size(), -1);
    for (std::size_t k = 0; k < s.lhs.size(); ++k)
      if (t.shape[k].is_dim()) lhs_by_dim_[static_cast<std::size_t>(t.shape[k].dim)] = s.lhs[k];
    const int r_at = r_position(t);
    const int r_var = r_at >= 0 ? s.lhs[static_cast<std::size_t>(r_at)] : -1;
    return check_node(s.root, r_var, false);
  }

  int r_position(const TensorDecl& t) const {
    for (std::size_t k = 0; k < t.shape.size(); ++k)
      if (t.shape[k].is_dim() && t.shape[k].dim == plan_.r_dim) return static_cast<int>(k);
    return -1;
  }

  std::string check_node(int i, int r_var, bool in_reduce) {
    const ix::Node& n = p_.nodes[static_cast<std::size_t>(i)];
    const std::string col = " (column " + std::to_string(n.column) + ")";
    switch (n.kind) {
      case NodeKind::number:
      case NodeKind::param:
      case NodeKind::dim:
        return {};
      case NodeKind::index:
        return "the value of index '" + p_.indices[static_cast<std::size_t>(n.ref)].name +
               "' used as a number" + col + " is not lowered";
      case NodeKind::scan:  // the statement's root (check_scan): its body as a row expression
        if (in_reduce) return "a scan inside a reduction" + col + " is not lowered";
        return check_node(n.args[0], r_var, true);
      case NodeKind::reduce:
        if (in_reduce) return "a reduction inside a reduction" + col + " is not lowered";
        return check_node(n.args[0], n.over[0], true);
      case NodeKind::apply:
        for (int a : n.args)
          if (std::string why = check_node(a, r_var, in_reduce); !why.empty()) return why;
        return {};
      case NodeKind::access:
        return check_access(n, r_var, col);
    }
    return "an unknown node" + col;
  }

  std::string check_access(const ix::Node& n, int r_var, const std::string& col) {
    const TensorDecl& t = p_.decls.tensors[static_cast<std::size_t>(n.ref)];
    if (t.role != Role::input && is_integer(t.dtype))
      return "reading " + t.name + col + ", an argmax's index, is not lowered";
    if (scan_outputs_.count(n.ref))
      return "reading " + t.name + col + ", a scan's output, is not lowered";
    for (std::size_t k = 0; k < n.args.size(); ++k) {
      const ix::Node& sub = p_.nodes[static_cast<std::size_t>(n.args[k])];
      if (sub.kind == NodeKind::access)
        return "a gather through '" + p_.decls.tensors[static_cast<std::size_t>(sub.ref)].name +
               "' in " + t.name + col + " is not lowered";
      if (sub.kind != NodeKind::index)
        return "index arithmetic in subscript " + std::to_string(k + 1) + " of " + t.name + col +
               " is not lowered";
      if (!t.shape[k].is_dim()) continue;  // an extent of 1: the index is 0
      const int dim = t.shape[k].dim;
      const std::string& var = p_.indices[static_cast<std::size_t>(sub.ref)].name;
      if (dim == plan_.r_dim) {
        if (r_var < 0)
          return t.name + col + " is read along " + dim_name(dim) +
                 " outside a reduction, in a per-row statement";
        if (sub.ref != r_var)
          return t.name + col + " is read at '" + var + "' inside a reduction over '" +
                 p_.indices[static_cast<std::size_t>(r_var)].name +
                 "' (a term depending on two positions of the row) and is not lowered";
      } else if (sub.ref != lhs_by_dim_[static_cast<std::size_t>(dim)]) {
        return t.name + col + " is read at '" + var + "' along the free dim " + dim_name(dim) +
               ", not at the statement's own index";
      }
    }
    return {};
  }

  const OpSpec& spec_;
  const Program& p_;
  RowPlan& plan_;
  std::vector<int> lhs_by_dim_;  // per dim: the current statement's index variable, or -1
  std::set<int> arg_outputs_;    // tensors an argmax or argmin statement assigns
  std::set<int> scan_outputs_;   // tensors a scan statement assigns
};

}  // namespace

std::string lower_rows(const OpSpec& spec, RowPlan& plan) {
  plan = RowPlan{};
  if (!spec.program) return "not a format-2 (shaped) spec";
  if (spec.program->statements.empty()) return "no statements";
  std::string why = Lowering(spec, plan).run();
  if (!why.empty()) plan = RowPlan{};
  return why;
}

}  // namespace kq::nvrtc
