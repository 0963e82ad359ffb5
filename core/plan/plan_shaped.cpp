#include "plan/plan_shaped.hpp"

#include <algorithm>
#include <string>

#include "indexed/derived_dims.hpp"
#include "indexed/subscript_range.hpp"
#include "plan/case_shapes.hpp"
#include "plan/shape_points.hpp"

namespace kq {
namespace {

class ShapedPlanner {
 public:
  explicit ShapedPlanner(const Spec& s) : spec_(s), c_(*s.shaped) {}

  // A case at dim values `dims`, contiguous everywhere, mixed values at scale 1.
  Case make(std::string group, const std::string& name, std::vector<std::int64_t> dims) const {
    Case c;
    c.group = std::move(group);
    c.name = c.group + "/" + name;
    c.dims = std::move(dims);
    c.shape = largest_shape(c.dims);
    c.inputs.resize(spec_.op.inputs.size());
    c.outputs.resize(spec_.op.outputs.size());
    c.seed = fnv1a(c.name, 1469598103934665603ull ^ spec_.qualification.seed);
    c.ieee_specials = spec_.op.domain == Domain::ieee;
    c.max_abs_input = spec_.qualification.max_abs_input;
    return c;
  }

  // "M=7,N=4097"
  std::string point_name(const std::vector<std::int64_t>& dims) const {
    std::string s;
    for (std::size_t i = 0; i < dims.size(); ++i)
      s += (i ? "," : "") + decls().dims[i].name + "=" + std::to_string(dims[i]);
    return s;
  }

  // Free dims at `free`, the last reduced dim at `reduced` and the other reduced dims too where
  // the largest tensor stays within kFixedPointElements (else at `free`): a reduction longer
  // than a block with a tail, without a point of 4097^3 elements for three reduced dims. Where
  // the last reduced dim also sizes another dim of a tensor (a square matrix product's N), it
  // takes the longest of 4097, 2049, 1025, ... (2^k + 1 down to 33) that fits. Where
  // index arithmetic then leaves a tensor (x[b, g * C + j] with x of [B, K] needs K >= G * C),
  // the dim that tensor is indexed over grows to what the subscript reaches, as often as that
  // makes every subscript fit.
  std::vector<std::int64_t> by_kind(std::int64_t free, std::int64_t reduced) const {
    std::vector<std::int64_t> d(decls().dims.size(), free);
    bool first = true;
    for (std::size_t i = d.size(); i-- > 0;) {
      if (decls().dims[i].kind != ix::DimKind::reduced) continue;
      std::vector<std::int64_t> raised = d;
      raised[i] = reduced;
      for (std::int64_t r = reduced; first && r > 33 && !fits(raised);) {
        r = (r - 1) / 2 + 1;
        raised[i] = r;
      }
      if (first || fits(raised)) d = std::move(raised);
      first = false;
    }
    derive(d);
    for (int tries = 0; tries < 8; ++tries) {
      const auto bad = ix::first_out_of_range(*c_.program, d);
      if (!bad || bad->lo < 0 || bad->hi >= kMaxPointElements) break;
      const ix::Extent& e = decls().tensors[static_cast<std::size_t>(bad->tensor)].shape[bad->dim];
      if (!e.is_dim()) break;
      d[static_cast<std::size_t>(e.dim)] = bad->hi + 1;
      derive(d);
    }
    return d;
  }

  // The derived dims' values; where one falls below 1 (a window longer than the input), the
  // base dims it is computed from grow (2 n + 1) until it does not.
  void derive(std::vector<std::int64_t>& d) const { ix::complete_dims_growing(decls(), d); }

  const ix::Declarations& decls() const { return c_.program->decls; }

  static void outside(Case& c, const std::string& why) {
    if (!c.in_contract) return;
    c.in_contract = false;
    c.outside_because = why;
  }

  const Spec& spec_;
  const ShapedContract& c_;

 private:
  bool fits(const std::vector<std::int64_t>& dims) const {
    return elements(largest_shape(dims)) <= kFixedPointElements;
  }

  static std::int64_t elements(const std::vector<std::int64_t>& shape) {
    std::int64_t n = 1;
    for (auto x : shape) n = x > 0 && n > kMaxPointElements / x ? kMaxPointElements : n * x;
    return n;
  }

  std::vector<std::int64_t> largest_shape(const std::vector<std::int64_t>& dims) const {
    std::vector<std::int64_t> best;
    std::int64_t most = -1;
    for (const ix::TensorDecl& t : decls().tensors) {
      auto s = declared_shape(t, dims);
      std::int64_t n = 1;
      for (auto x : s) n *= x;
      if (n > most) most = n, best = std::move(s);
    }
    return best;
  }
};

// Every shape point, mixed values; the timed points flagged by their group.
void add_points(const ShapedPlanner& p, const PlanOptions& options, std::vector<Case>& cases) {
  ShapePlanOptions o;
  o.quick = options.quick;
  o.include_huge = options.include_huge;
  o.max_elements = options.quick ? kShapedQuickPointElements : kShapedPointElements;
  o.timed = options.timing_sizes;  // format 2: the numbers of the points that will be timed
  for (const ShapePoint& sp : plan_shape_points(p.c_, o)) {
    std::vector<std::int64_t> dims;
    for (const auto& [name, v] : sp.dims) dims.push_back(v);
    cases.push_back(p.make(sp.timed ? "timing" : "point", sp.name, dims));
  }
}

// The value classes at a point with rows longer than 4096 (tails and block boundaries inside)
// and one with short rows (33).
void add_values(const ShapedPlanner& p, std::vector<Case>& cases) {
  const double bound = p.spec_.qualification.max_abs_input;
  const bool ieee = p.spec_.op.domain == Domain::ieee;
  for (const auto& dims : {p.by_kind(3, 4097), p.by_kind(5, 33)}) {
    const std::string at = "@" + p.point_name(dims);
    for (auto [scale, name] : {std::pair{1e-3, "mixed_1e-3"}, std::pair{1e3, "mixed_1e3"}}) {
      Case c = p.make("values", std::string(name) + at, dims);
      c.scale = bound > 0 ? std::min(scale, bound) : scale;
      cases.push_back(std::move(c));
    }
    std::vector<ValueClass> classes = {ValueClass::spikes,        ValueClass::constant_rows,
                                       ValueClass::integers,      ValueClass::all_negative,
                                       ValueClass::negative_zero, ValueClass::denormal};
    if (bound == 0 || bound >= 1e4 + 1) classes.push_back(ValueClass::offset_rows);
    if (ieee) {
      classes.push_back(ValueClass::masked_rows);
      classes.push_back(ValueClass::sprinkled);
    }
    for (ValueClass v : classes) {
      Case c = p.make("values", to_string(v) + at, dims);
      c.values = v;
      if (v == ValueClass::sprinkled) c.scale = bound > 0 ? std::min(1.0, bound) : 1.0;
      cases.push_back(std::move(c));
    }
    if (!ieee) continue;
    for (ValueClass v : {ValueClass::nan, ValueClass::inf}) {
      for (std::size_t t = 0; t < p.spec_.op.inputs.size(); ++t) {
        Case c =
            p.make("values", std::string(to_string(v)) + "_in_" + p.spec_.op.inputs[t] + at, dims);
        c.values = v;
        c.special_input = static_cast<int>(t);
        cases.push_back(std::move(c));
      }
    }
  }
}

// Padded row strides: the stride of the second-to-last dim longer than the row, as a pitched
// allocation lays rows out. `_rowpad`: at least 16 elements of padding, the row stride a
// multiple of 64 bytes (every row as aligned as the first); `_rowpad_odd`: one element more, so
// that the second row is not 16-byte aligned (a kernel that loads rows in 16-byte vectors
// faults or reads the wrong elements). The dims above keep the padded rows dense between them.
// Outside a contiguous-only contract.
template <typename Place>
void add_padded_rows(const ShapedPlanner& p, const CaseTensorShape& ts,
                     const std::vector<std::int64_t>& dims, Place&& place,
                     std::vector<Case>& cases) {
  const std::size_t r = ts.shape.size();
  if (r < 2 || ts.shape[r - 2] < 2) return;  // a single row has no row stride to pad
  const auto es = static_cast<std::int64_t>(dtype_size(ts.dtype));
  const std::int64_t row = ts.shape[r - 1];
  const std::int64_t per_64 = std::max<std::int64_t>(1, 64 / es);
  const std::int64_t aligned = (row + 16 + per_64 - 1) / per_64 * per_64;
  for (auto [suffix, pitch] :
       {std::pair{"_rowpad", aligned}, std::pair{"_rowpad_odd", aligned + 1}}) {
    Case c = p.make("layout", ts.name + suffix, dims);
    std::vector<std::int64_t> strides(r, 1);
    strides[r - 2] = pitch;
    for (std::size_t d = r - 2; d-- > 0;) strides[d] = strides[d + 1] * ts.shape[d + 1];
    place(c).strides = std::move(strides);
    if (p.spec_.op.layouts.contiguous_only)
      ShapedPlanner::outside(c, ts.name + " has padded rows (a row stride of " +
                                    std::to_string(pitch) + " elements for rows of " +
                                    std::to_string(row) + ")");
    cases.push_back(std::move(c));
  }
}

// The layouts, one tensor at a time, at a point with rows of 1025: offsets from alignment,
// strided views (every other element along the last dim), fences after and before the data.
// Padded row strides (add_padded_rows) for each tensor of two dims or more.
void add_layouts(const ShapedPlanner& p, std::vector<Case>& cases) {
  const auto dims = p.by_kind(3, 1025);
  const auto& layouts = p.spec_.op.layouts;
  const Case probe = p.make("layout", "probe", dims);
  const CaseShapes shapes = case_shapes(p.spec_, probe);
  const std::size_t n_in = shapes.inputs.size();
  for (std::size_t t = 0; t < n_in + shapes.outputs.size(); ++t) {
    const bool is_out = t >= n_in;
    const CaseTensorShape& ts = is_out ? shapes.outputs[t - n_in] : shapes.inputs[t];
    auto place = [&](Case& c) -> Placement& { return is_out ? c.outputs[t - n_in] : c.inputs[t]; };
    const auto es = static_cast<std::int64_t>(dtype_size(ts.dtype));
    for (std::int64_t off : {es, std::max<std::int64_t>(4, es), std::int64_t{8}}) {
      if (off % es != 0) continue;
      Case c = p.make("offset", ts.name + "+" + std::to_string(off), dims);
      place(c).offset_bytes = off;
      if (off % layouts.min_alignment_bytes != 0)
        ShapedPlanner::outside(c, ts.name + " is " + std::to_string(off) +
                                      " bytes from alignment, the spec requires " +
                                      std::to_string(layouts.min_alignment_bytes));
      if (std::none_of(cases.begin(), cases.end(), [&](const Case& k) { return k.name == c.name; }))
        cases.push_back(std::move(c));
    }
    if (!ts.shape.empty() && ts.shape.back() > 1) {
      Case c = p.make("layout", ts.name + "_stride2", dims);
      place(c).strides = row_major_strides(ts.shape);
      for (auto& s : place(c).strides) s *= 2;
      if (layouts.contiguous_only)
        ShapedPlanner::outside(c, ts.name + " is strided (every other element)");
      cases.push_back(std::move(c));
    }
    add_padded_rows(p, ts, dims, place, cases);
    for (auto [suffix, fence] :
         {std::pair{"_end", Fence::after}, std::pair{"_start", Fence::before}}) {
      Case c = p.make("fence", ts.name + suffix, dims);
      place(c).fence = fence;
      // An end fence puts the first element `span` bytes before a page boundary.
      std::int64_t align = 256;
      if (fence == Fence::after) {
        const std::int64_t span = ts.numel() * es;
        align = 1;
        while (align < 256 && span % (align * 2) == 0) align *= 2;
      }
      if (align < layouts.min_alignment_bytes)
        ShapedPlanner::outside(c, ts.name + " is aligned to " + std::to_string(align) +
                                      " bytes, the spec requires " +
                                      std::to_string(layouts.min_alignment_bytes));
      cases.push_back(std::move(c));
    }
  }
  // An output on an input's storage: format 2 admits no aliasing.
  for (std::size_t t = 0; t < n_in; ++t) {
    const CaseTensorShape& in = shapes.inputs[t];
    const CaseTensorShape& out = shapes.outputs[0];
    if (in.dtype != out.dtype || in.shape != out.shape) continue;
    Case c = p.make("alias", out.name + "_is_" + in.name, dims);
    c.alias_input = static_cast<int>(t);
    ShapedPlanner::outside(
        c, "output " + out.name + " is input " + in.name + " (format-2 specs admit no aliasing)");
    cases.push_back(std::move(c));
  }
}

}  // namespace

std::vector<Case> plan_shaped_cases(const Spec& spec, const PlanOptions& options) {
  const ShapedPlanner p(spec);
  std::vector<Case> cases;
  Case conduct = p.make("conduct", p.point_name(p.by_kind(7, 1025)), p.by_kind(7, 1025));
  conduct.conduct = true;
  cases.push_back(std::move(conduct));
  add_values(p, cases);
  add_layouts(p, cases);
  add_points(p, options, cases);  // ascending by size: the largest last
  // The fixed points (7 x 1025, 3 x 4097, ...) that by_kind could not make fit: left out, as
  // the generated points are (shape_points.cpp).
  std::erase_if(cases, [&](const Case& c) {
    return ix::subscript_out_of_range(*p.c_.program, c.dims).has_value();
  });
  return cases;
}

}  // namespace kq
