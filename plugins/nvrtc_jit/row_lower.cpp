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
      const bool gathered = t.role == Role::input && gather_inputs_.count(static_cast<int>(i));
      const bool ok = t.role == Role::temporary
                          ? !is_integer(t.dtype)
                          : float_type(t.dtype) || index_out || mask_in || gathered;
      if (!ok) {
        if (t.dtype == DType::f64) return who + ": dtype f64: the row kernel computes in float32";
        return who + ": dtype " + std::string(to_string(t.dtype)) +
               ": integer and bool tensors are not lowered" +
               (t.role == Role::output  ? " (bar an argmax's i32 or i64 output)"
                : t.role == Role::input ? " (bar bool inputs and gathered positions)"
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
        has_reduction_ = true;
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
        std::vector<int> dims;
        for (int var : n.over) {
          const ix::IndexVar& v = p_.indices[static_cast<std::size_t>(var)];
          if (!v.extent.is_dim())
            return at(s) + "a " + red + " over '" + v.name + "', of constant extent " +
                   std::to_string(v.extent.constant) + ", is not lowered";
          if (std::find(dims.begin(), dims.end(), v.extent.dim) != dims.end())
            return at(s) + "a " + red + " over " + dim_name(v.extent.dim) + " twice is not lowered";
          dims.push_back(v.extent.dim);
        }
        if (std::string why = set_group(dims, "a " + red); !why.empty()) {
          // Over other dims than R: a reduction over the rows, if they turn out to be F.
          if (is_arg_reduction(n.reduction)) return at(s) + why;
          over_rows_.push_back({i, dims, at(s) + why});
        }
      }
    if (!plan_.r_dims.empty()) return {};
    // No reduction: the one dim declared reduced, else the innermost extent of the assigned
    // tensor of highest rank (the first of them).
    int reduced = -1, count = 0;
    for (std::size_t d = 0; d < p_.decls.dims.size(); ++d)
      if (p_.decls.dims[d].kind == ix::DimKind::reduced) {
        reduced = static_cast<int>(d);
        ++count;
      }
    if (count == 1) return set_group({reduced}, "");
    const Statement* widest = nullptr;
    for (const Statement& s : p_.statements)
      if (widest == nullptr || s.lhs.size() > widest->lhs.size()) widest = &s;
    const TensorDecl& t = p_.decls.tensors[static_cast<std::size_t>(widest->tensor)];
    if (t.shape.empty()) return "no reduction and no assigned tensor with a dimension: no row";
    if (!t.shape.back().is_dim())
      return at(*widest) + "the innermost extent of " + shape_text(t) + " is a constant";
    return set_group({t.shape.back().dim}, "");
  }

  std::string dims_text(const std::vector<int>& dims) const {
    if (dims.size() == 1) return dim_name(dims[0]);
    std::string s = "(";
    for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dim_name(dims[i]);
    return s + ")";
  }

  // R, the reduced dims (one, or a group that every tensor having one of them has whole,
  // consecutive, in this order), set by the first reduction or scan; the others must agree.
  std::string set_group(const std::vector<int>& dims, const std::string& what) {
    if (plan_.r_dims.empty()) {
      plan_.r_dims = dims;
      return {};
    }
    if (plan_.r_dims == dims) return {};
    return what + " over " + dims_text(dims) + ", an earlier one over " + dims_text(plan_.r_dims) +
           ": one reduced dim (or group of dims) is lowered";
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
    if (std::string why = set_group({v.extent.dim}, "a " + what); !why.empty()) return why;
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

  // Where R stands: the innermost extent of every tensor that has one of its dims (the row
  // kernel) or of none (the column kernel). A tensor a statement assigns has all of R's dims;
  // an input may have some. Constant extents other than 1 are declined.
  std::string check_row_position() {
    const std::string R = dims_text(plan_.r_dims);
    const bool one = plan_.r_dims.size() == 1;
    const std::string the = one ? ", the reduced dim, is " : ", the reduced dims, are ";
    const TensorDecl* inner = nullptr;
    const TensorDecl* not_inner = nullptr;
    for (const TensorDecl& t : p_.decls.tensors) {
      for (const ix::Extent& e : t.shape)
        if (!e.is_dim() && e.constant != 1)
          return who(t) + ": a constant extent (" + std::to_string(e.constant) +
                 ") is not lowered (bar 1)";
      int seen = 0;
      for (const ix::Extent& e : t.shape) seen += e.is_dim() && in_group(e.dim);
      if (seen == 0) continue;
      const std::vector<int> pos = r_positions(t);
      if (seen >
          static_cast<int>(std::count_if(pos.begin(), pos.end(), [](int p) { return p >= 0; })))
        return R + the + (one ? "two extents of " : "more than once among the extents of ") +
               who(t) + ": not lowered";
      if (t.role != Role::input && std::count(pos.begin(), pos.end(), -1) > 0)
        return R + the + "not all among the extents of " + who(t) +
               ", which a statement assigns: not lowered";
      const bool innermost = t.shape.back().is_dim() && in_group(t.shape.back().dim);
      const TensorDecl*& first = innermost ? inner : not_inner;
      if (first == nullptr) first = &t;
    }
    if (inner != nullptr && not_inner != nullptr)
      return R + the + (one ? "not the innermost extent of " : "not the innermost extents of ") +
             who(*not_inner) + " but " + (one ? "is" : "are") + " of " + who(*inner) +
             " (a product: neither a row nor a column kernel)";
    plan_.columns = not_inner != nullptr;
    return {};
  }

  // Per dim of R: its (first) position in t's shape, or -1.
  std::vector<int> r_positions(const TensorDecl& t) const {
    std::vector<int> pos(plan_.r_dims.size(), -1);
    for (std::size_t i = 0; i < t.shape.size(); ++i)
      for (std::size_t k = 0; k < plan_.r_dims.size(); ++k)
        if (t.shape[i].is_dim() && t.shape[i].dim == plan_.r_dims[k] && pos[k] < 0)
          pos[k] = static_cast<int>(i);
    return pos;
  }

  // Whether t has one of R's dims.
  bool has_r(const TensorDecl& t) const {
    return std::any_of(t.shape.begin(), t.shape.end(),
                       [&](const ix::Extent& e) { return e.is_dim() && in_group(e.dim); });
  }

  bool in_group(int dim) const {
    return std::find(plan_.r_dims.begin(), plan_.r_dims.end(), dim) != plan_.r_dims.end();
  }

  // No free dim: the one row's reductions are spread over blocks (plan_.split), which needs
  // scalar outputs and reductions that read no scalar an assigned statement computes (those
  // come after every block's share is in).
  std::string check_split() {
    const std::string no = "no free dim: ";
    if (!over_rows_.empty()) return over_rows_[0].why;
    if (!scan_outputs_.empty()) return no + "a scan over every element is not lowered";
    if (!arg_outputs_.empty())
      return no +
             "an argmax or argmin over every element is not lowered (the blocks' first "
             "extremes are not combined)";
    if (plan_.columns) return no + "a reduction not along the innermost extents is not lowered";
    for (const TensorDecl& t : p_.decls.tensors)
      if (t.role == Role::output && has_r(t))
        return no + "output " + t.name +
               " has the reduced dims: with a reduction over every element, only scalar "
               "outputs are lowered";
    for (const Statement& s : p_.statements)
      for (int i : tree(s.root)) {
        const ix::Node& n = p_.nodes[static_cast<std::size_t>(i)];
        if (n.kind != NodeKind::reduce) continue;
        if (const std::string t = scalar_read(n.args[0]); !t.empty())
          return at(s) + no + "a reduction reading " + t +
                 ", a scalar computed before it, is not lowered (every block's share would "
                 "need it first)";
      }
    plan_.split = true;
    return {};
  }

  // The first assigned scalar the expression under `root` reads, through the row temporaries
  // it inlines, or empty.
  std::string scalar_read(int root) const {
    for (int k : tree(root)) {
      const ix::Node& a = p_.nodes[static_cast<std::size_t>(k)];
      if (a.kind != NodeKind::access) continue;
      const TensorDecl& t = p_.decls.tensors[static_cast<std::size_t>(a.ref)];
      if (t.role == Role::input) continue;
      if (!has_r(t)) return t.name;
      for (const Statement& s : p_.statements)
        if (s.tensor == a.ref)
          if (std::string inner = scalar_read(s.root); !inner.empty()) return inner;
    }
    return {};
  }

  bool over_rows_node(int node) const {
    return std::any_of(over_rows_.begin(), over_rows_.end(),
                       [&](const OverRows& o) { return o.node == node; });
  }

  // A reduction over the rows: its term is a per-row expression, its indices standing for the
  // free dims.
  std::string check_over_rows_term(const ix::Node& n) {
    const std::vector<int> saved = lhs_by_dim_;
    for (int v : n.over)
      lhs_by_dim_[static_cast<std::size_t>(p_.indices[static_cast<std::size_t>(v)].extent.dim)] = v;
    std::string why = check_node(n.args[0], {}, true);
    lhs_by_dim_ = saved;
    return why;
  }

  // The reductions over other dims than R reduce over every free dim, in the row kernel; the
  // statements holding them, and those reading what they assign, are scalars computed after
  // the rows, from those reductions, params, dims and each other alone.
  std::string check_over_rows() {
    if (plan_.columns) return over_rows_[0].why + " (the column kernel reduces no rows)";
    std::vector<int> free = plan_.free_dims;
    std::sort(free.begin(), free.end());
    for (const OverRows& o : over_rows_) {
      std::vector<int> dims = o.dims;
      std::sort(dims.begin(), dims.end());
      if (dims != free) return o.why + " (nor over every free dim, after the rows)";
      plan_.over_rows.push_back(o.node);
    }
    std::set<int> after;  // tensors assigned after the rows
    for (const Statement& s : p_.statements) {
      bool late = false;
      for (int i : tree(s.root)) {
        const ix::Node& n = p_.nodes[static_cast<std::size_t>(i)];
        late = late || over_rows_node(i) || (n.kind == NodeKind::access && after.count(n.ref));
      }
      if (!late) continue;
      const TensorDecl& t = p_.decls.tensors[static_cast<std::size_t>(s.tensor)];
      for (const ix::Extent& e : t.shape)
        if (e.is_dim())
          return at(s) + t.name + ", computed after the rows (from a reduction over them), " +
                 "is not a scalar: not lowered";
      if (std::string why = check_after_rows(s.root, after); !why.empty()) return at(s) + why;
      after.insert(s.tensor);
      plan_.tensors[static_cast<std::size_t>(s.tensor)].after_rows = true;
    }
    return {};
  }

  // What a statement after the rows reads, outside its reductions over them: those
  // reductions, the scalars assigned after the rows, params, dims and numbers.
  std::string check_after_rows(int node, const std::set<int>& after) const {
    if (over_rows_node(node)) return {};
    const ix::Node& n = p_.nodes[static_cast<std::size_t>(node)];
    if (n.kind == NodeKind::access && !after.count(n.ref))
      return "reads " + p_.decls.tensors[static_cast<std::size_t>(n.ref)].name +
             " beside a reduction over the rows: not lowered";
    if (n.kind == NodeKind::reduce) return "a reduction beside one over the rows: not lowered";
    for (int a : n.args)
      if (std::string why = check_after_rows(a, after); !why.empty()) return why;
    return {};
  }

  // x[m, t[m]]: an input read along R (one dim) at the position an integer input with free
  // dims alone gives, in a per-row expression.
  std::string check_gather(const TensorDecl& t, std::size_t k, const ix::Node& sub,
                           const std::vector<int>& r_vars, const std::string& col) {
    const TensorDecl& g = p_.decls.tensors[static_cast<std::size_t>(sub.ref)];
    const std::string no =
        "a gather through '" + g.name + "' in " + t.name + col + " is not lowered";
    if (t.role != Role::input || !t.shape[k].is_dim() || plan_.r_dims.size() != 1 ||
        t.shape[k].dim != plan_.r_dims[0])
      return no + ": only an input's position along R is gathered";
    if (!r_vars.empty()) return no + " inside a loop over the row";
    if (g.role != Role::input || (g.dtype != DType::i32 && g.dtype != DType::i64))
      return no + ": only through an i32 or i64 input";
    if (has_r(g)) return no + ": the positions must not run along R";
    if (std::string why = check_access(sub, {}, col); !why.empty()) return why;
    gather_inputs_.insert(sub.ref);
    return {};
  }

  std::string who(const TensorDecl& t) const {
    return std::string(ix::to_string(t.role)) + " " + shape_text(t);
  }

  std::string check_shapes() {
    const std::string R = dims_text(plan_.r_dims);
    // F: the first assigned tensor's dims but R.
    const TensorDecl& first = p_.decls.tensors[static_cast<std::size_t>(p_.statements[0].tensor)];
    for (const ix::Extent& e : first.shape)
      if (e.is_dim() && !in_group(e.dim)) plan_.free_dims.push_back(e.dim);
    if (plan_.free_dims.empty() && (has_reduction_ || !scan_outputs_.empty()))
      if (std::string why = check_split(); !why.empty()) return why;
    if (!over_rows_.empty())
      if (std::string why = check_over_rows(); !why.empty()) return why;
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
      rt.r_positions = r_positions(t);
      rt.row = has_r(t);
      // Whole, consecutive and in order: one stride along R where the view lets it.
      bool simple = rt.row;
      for (std::size_t k = 0; simple && k < rt.r_positions.size(); ++k)
        simple =
            rt.r_positions[k] >= 0 && rt.r_positions[k] == rt.r_positions[0] + static_cast<int>(k);
      rt.r_at = simple ? rt.r_positions[0] : -1;
      rt.r_general = rt.row && !simple;
      const std::string who = this->who(t);
      for (std::size_t k = 0; k < t.shape.size(); ++k) {
        if (!t.shape[k].is_dim() || in_group(t.shape[k].dim)) continue;
        const int place = free_place(t.shape[k].dim);
        if (place < 0)
          return who + ": " + dim_name(t.shape[k].dim) + " is neither the reduced dim " + R +
                 " nor a free dim of " + shape_text(first) +
                 " (a reduction over a free dim is not lowered)";
        if (!rt.free_at.empty() && place <= rt.free_at.back())
          return who + ": its free dims are not in the order " + f_text;
        rt.free_at.push_back(place);
        rt.free_pos.push_back(static_cast<int>(k));
      }
      // Assigned tensors have every free dim: a statement computes whole rows.
      if (t.role != Role::input && !rt.after_rows && rt.free_at.size() != plan_.free_dims.size())
        return who + ": an assigned tensor must have every free dim " + f_text + " (and " + R +
               " or not): a reduction over a free dim is not lowered";
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
    std::vector<int> r_vars;  // an assigned tensor has all of R's dims (check_row_position)
    if (has_r(t))
      for (int p : r_positions(t)) r_vars.push_back(s.lhs[static_cast<std::size_t>(p)]);
    return check_node(s.root, r_vars, false);
  }

  // r_vars: the index variables that stand for R's dims here (a reduction's or scan's own, or
  // the statement's), empty in a per-row expression.
  std::string check_node(int i, const std::vector<int>& r_vars, bool in_reduce) {
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
        return check_node(n.args[0], n.over, true);
      case NodeKind::reduce:
        if (in_reduce) return "a reduction inside a reduction" + col + " is not lowered";
        if (over_rows_node(i)) return check_over_rows_term(n);
        return check_node(n.args[0], n.over, true);
      case NodeKind::apply:
        for (int a : n.args)
          if (std::string why = check_node(a, r_vars, in_reduce); !why.empty()) return why;
        return {};
      case NodeKind::access:
        return check_access(n, r_vars, col);
    }
    return "an unknown node" + col;
  }

  std::string check_access(const ix::Node& n, const std::vector<int>& r_vars,
                           const std::string& col) {
    const TensorDecl& t = p_.decls.tensors[static_cast<std::size_t>(n.ref)];
    if (t.role != Role::input && is_integer(t.dtype))
      return "reading " + t.name + col + ", an argmax's index, is not lowered";
    if (scan_outputs_.count(n.ref))
      return "reading " + t.name + col + ", a scan's output, is not lowered";
    for (std::size_t k = 0; k < n.args.size(); ++k) {
      const ix::Node& sub = p_.nodes[static_cast<std::size_t>(n.args[k])];
      if (sub.kind != NodeKind::index && t.pad)  // outside it, the read would need the pad
        return "subscript " + std::to_string(k + 1) + " of " + t.name + col +
               ", a padded input, may leave it: not lowered";
      if (sub.kind == NodeKind::access) {
        if (std::string why = check_gather(t, k, sub, r_vars, col); !why.empty()) return why;
        continue;
      }
      if (sub.kind != NodeKind::index)
        return "index arithmetic in subscript " + std::to_string(k + 1) + " of " + t.name + col +
               " is not lowered";
      if (!t.shape[k].is_dim()) continue;  // an extent of 1: the index is 0
      const int dim = t.shape[k].dim;
      const std::string& var = p_.indices[static_cast<std::size_t>(sub.ref)].name;
      if (auto g = std::find(plan_.r_dims.begin(), plan_.r_dims.end(), dim);
          g != plan_.r_dims.end()) {
        if (r_vars.empty())
          return t.name + col + " is read along " + dim_name(dim) +
                 " outside a reduction, in a per-row statement";
        const int want = r_vars[static_cast<std::size_t>(g - plan_.r_dims.begin())];
        if (sub.ref != want)
          return t.name + col + " is read at '" + var + "' inside a reduction over '" +
                 p_.indices[static_cast<std::size_t>(want)].name +
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
  std::set<int> gather_inputs_;  // integer inputs read as positions along R
  struct OverRows {
    int node;               // a reduction over other dims than R
    std::vector<int> dims;  // its dims
    std::string why;        // what is said if it turns out not to be over the rows
  };
  std::vector<OverRows> over_rows_;
  bool has_reduction_ = false;
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
