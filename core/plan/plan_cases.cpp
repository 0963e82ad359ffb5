#include "plan/plan_cases.hpp"

#include <algorithm>
#include <string>

#include "plan/plan_shaped.hpp"

namespace kq {
namespace {

// Cases of this many elements and more carry every special value class (sprinkled); smaller
// sizes keep plain mixed values, so that their tails stay easy to read.
constexpr std::int64_t kSprinkledFrom = 4096;
// The largest size --quick qualifies.
constexpr std::int64_t kQuickMax = (std::int64_t{1} << 20) + 3;
// Above 2^31 elements: 32-bit index arithmetic wraps there.
constexpr std::int64_t kHugeSize = (std::int64_t{1} << 31) + 5;

bool has_rank(const Spec& s, int r) {
  const auto& rs = s.op.layouts.ranks;
  return std::find(rs.begin(), rs.end(), r) != rs.end();
}

class Planner {
 public:
  explicit Planner(const Spec& s) : spec_(s) {}

  // A case over `shape`, contiguous everywhere, mixed values at scale 1.
  Case make(std::string group, std::string name, std::vector<std::int64_t> shape) const {
    Case c;
    c.group = std::move(group);
    c.name = c.group + "/" + name;
    c.shape = std::move(shape);
    c.inputs.resize(spec_.op.inputs.size());
    c.outputs.resize(spec_.op.outputs.size());
    c.seed = fnv1a(c.name, 1469598103934665603ull ^ spec_.qualification.seed);
    c.ieee_specials = spec_.op.domain == Domain::ieee;
    c.max_abs_input = spec_.qualification.max_abs_input;
    const int r = static_cast<int>(c.shape.size());
    if (!has_rank(spec_, r))
      outside(c, "rank " + std::to_string(r) + " is not among the spec's ranks");
    return c;
  }

  // A case of n elements in the smallest admitted rank; sprinkled from kSprinkledFrom up.
  Case sized(std::string group, std::int64_t n) const {
    Case c = make(std::move(group), std::to_string(n), shape_for(n));
    if (n >= kSprinkledFrom) sprinkle(c);
    return c;
  }

  // Every special value class the spec admits, sprinkled through a mixed background.
  void sprinkle(Case& c) const {
    c.values = ValueClass::sprinkled;
    const double bound = spec_.qualification.max_abs_input;
    c.scale = bound > 0 ? std::min(1.0, bound) : 1.0;
  }

  // The value-class cases over `vshape`, each named values/<class><suffix>.
  void add_value_cases(std::vector<Case>& cases, const std::vector<std::int64_t>& vshape,
                       const std::string& suffix) const {
    const auto& in = spec_.op.inputs;
    // A spec may claim its accuracy for bounded inputs only: then no value exceeds the bound.
    const double bound = spec_.qualification.max_abs_input;
    for (auto [scale, name] :
         {std::pair{1e-3, "1e-3"}, std::pair{1.0, "1"}, std::pair{1e3, "1e3"}}) {
      Case c = make("values", std::string("mixed_") + name + suffix, vshape);
      c.scale = bound > 0 ? std::min(scale, bound) : scale;
      cases.push_back(std::move(c));
    }
    std::vector<ValueClass> classes = {ValueClass::all_negative, ValueClass::negative_zero,
                                       ValueClass::denormal, ValueClass::huge,
                                       ValueClass::overflow};
    if (in.size() >= 2) classes.push_back(ValueClass::cancel);
    if (in.size() >= 2 && is_half(spec_.op.dtype)) classes.push_back(ValueClass::ties);
    for (ValueClass v : classes) {
      if (bound > 0 && (v == ValueClass::huge || v == ValueClass::overflow)) continue;
      if (bound > 0 && bound < 8 && v == ValueClass::ties) continue;  // ties reach |x| < 8
      Case c = make("values", to_string(v) + suffix, vshape);
      c.values = v;
      cases.push_back(std::move(c));
    }
    if (spec_.op.domain != Domain::ieee) return;
    for (ValueClass v : {ValueClass::nan, ValueClass::inf}) {
      for (std::size_t t = 0; t < in.size(); ++t) {
        Case c = make("values", std::string(to_string(v)) + "_in_" + in[t] + suffix, vshape);
        c.values = v;
        c.special_input = static_cast<int>(t);
        cases.push_back(std::move(c));
      }
    }
  }

  // The smallest admitted rank holding n elements: {n}, {1, n}, ...
  std::vector<std::int64_t> shape_for(std::int64_t n) const {
    int r = spec_.op.layouts.ranks.empty()
                ? 1
                : *std::min_element(spec_.op.layouts.ranks.begin(), spec_.op.layouts.ranks.end());
    std::vector<std::int64_t> shape(static_cast<std::size_t>(std::max(r, 1)), 1);
    shape.back() = n;
    return shape;
  }

  static void outside(Case& c, const std::string& why) {
    if (!c.in_contract) return;  // keep the first reason
    c.in_contract = false;
    c.outside_because = why;
  }

  const Spec& spec_;
};

// Sizes: empty, tiny, around every power-of-two boundary a vector or block width could use,
// and large enough to need several waves of blocks; then the spec's extra sizes.
std::vector<std::int64_t> size_case_sizes(const Spec& spec, const PlanOptions& options) {
  std::vector<std::int64_t> sizes = {0,   1,    2,    3,    4,    5,    7,     8,
                                     31,  32,   33,   127,  128,  129,  255,   256,
                                     257, 1023, 1024, 1025, 4095, 4097, 65537, kQuickMax};
  if (!options.quick) sizes.push_back((1 << 24) + 1);
  for (auto n : spec.qualification.extra_sizes) sizes.push_back(n);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

bool plans_huge(const PlanOptions& options) { return options.include_huge && !options.quick; }

// The timed sizes that no size case covers already (up to kQuickMax when quick), in order.
std::vector<std::int64_t> timing_case_sizes(const Spec& spec, const PlanOptions& options,
                                            const std::vector<std::int64_t>& size_cases) {
  std::vector<std::int64_t> sizes =
      options.timing_sizes.empty() ? spec.timing.sizes : options.timing_sizes;
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::erase_if(sizes, [&](std::int64_t n) {
    return (options.quick && n > kQuickMax) ||
           std::binary_search(size_cases.begin(), size_cases.end(), n) ||
           (n == kHugeSize && plans_huge(options));
  });
  return sizes;
}

}  // namespace

std::vector<Case> plan_cases(const Spec& spec, const PlanOptions& options) {
  if (spec.shaped) return plan_shaped_cases(spec, options);
  Planner p(spec);
  std::vector<Case> cases;
  const std::size_t es = dtype_size(spec.op.dtype);
  const auto& in = spec.op.inputs;
  const bool contiguous_only = spec.op.layouts.contiguous_only;

  const auto sizes = size_case_sizes(spec, options);
  for (auto n : sizes) cases.push_back(p.sized("size", n));

  // How the arm behaves besides its results (for CUDA arms: its stream discipline).
  Case conduct = p.make("conduct", "65537", p.shape_for(65537));
  p.sprinkle(conduct);
  conduct.conduct = true;
  cases.push_back(std::move(conduct));

  // The timed sizes: an arm cannot behave differently at exactly the sizes it is timed at.
  // Those that take turns at the machine (above 2^28 elements) come last, with the huge case.
  const auto timed = timing_case_sizes(spec, options, sizes);
  for (auto n : timed)
    if (n <= kBigCaseElements) cases.push_back(p.sized("timing", n));

  // Ranks 1 to 5 with uneven extents; ranks outside the spec's list must be refused.
  const std::vector<std::vector<std::int64_t>> shapes = {
      {1031}, {33, 65}, {3, 5, 67}, {2, 3, 5, 33}, {2, 3, 1, 5, 7}};
  for (const auto& s : shapes) {
    std::string name;
    for (auto d : s) name += (name.empty() ? "" : "x") + std::to_string(d);
    cases.push_back(p.make("rank", name, s));
  }

  // Views offset from an aligned base, one tensor at a time. Half types also at 2 and 14 bytes:
  // off the 4-byte alignment of half2 loads, and 2 short of a 16-byte boundary.
  const auto offset_shape = p.shape_for(1025);
  const std::vector<std::int64_t> offsets =
      es == 2 ? std::vector<std::int64_t>{2, 4, 8, 14} : std::vector<std::int64_t>{4, 8, 12};
  for (std::int64_t off : offsets) {
    if (off % static_cast<std::int64_t>(es) != 0) continue;
    for (std::size_t t = 0; t <= in.size(); ++t) {
      const bool is_out = t == in.size();
      std::string tname = is_out ? spec.op.outputs[0].name : in[t];
      Case c = p.make("offset", tname + "+" + std::to_string(off), offset_shape);
      (is_out ? c.outputs[0] : c.inputs[t]).offset_bytes = off;
      if (off % spec.op.layouts.min_alignment_bytes != 0)
        Planner::outside(c, tname + " is " + std::to_string(off) +
                                " bytes from alignment, the spec requires " +
                                std::to_string(spec.op.layouts.min_alignment_bytes));
      cases.push_back(std::move(c));
    }
  }

  // Strided, transposed and broadcast views, one tensor at a time.
  const std::vector<std::int64_t> mat = {33, 65};
  for (std::size_t t = 0; t <= in.size(); ++t) {
    const bool is_out = t == in.size();
    std::string tname = is_out ? spec.op.outputs[0].name : in[t];
    auto place = [&](Case& c) -> Placement& { return is_out ? c.outputs[0] : c.inputs[t]; };

    Case strided = p.make("layout", tname + "_stride2", p.shape_for(1025));
    place(strided).strides = row_major_strides(strided.shape);
    place(strided).strides.back() = 2;
    if (contiguous_only) Planner::outside(strided, tname + " is strided (every other element)");
    cases.push_back(std::move(strided));

    Case tr = p.make("layout", tname + "_transposed", mat);
    place(tr).strides = {1, mat[0]};
    if (contiguous_only) Planner::outside(tr, tname + " is a transposed view");
    cases.push_back(std::move(tr));

    if (!is_out) {
      Case bc = p.make("layout", tname + "_broadcast", mat);
      place(bc).strides = {0, 1};  // every row reads the same 65 elements
      if (contiguous_only) Planner::outside(bc, tname + " is broadcast (stride 0)");
      cases.push_back(std::move(bc));
    }
  }

  // Fences: each tensor's data borders unmapped memory, after its last element (odd length,
  // so scalar tails run there; and a multiple of 16 bytes, so vector paths run there) or
  // before its first. A read one element out of bounds faults instead of passing unseen.
  for (std::size_t t = 0; t <= in.size(); ++t) {
    const bool is_out = t == in.size();
    std::string tname = is_out ? spec.op.outputs[0].name : in[t];
    struct F {
      const char* suffix;
      std::int64_t n;
      Fence fence;
    };
    for (F f : {F{"_end", 1027, Fence::after}, F{"_end_vec", 1028, Fence::after},
                F{"_start", 1027, Fence::before}}) {
      Case c = p.make("fence", tname + f.suffix, p.shape_for(f.n));
      (is_out ? c.outputs[0] : c.inputs[t]).fence = f.fence;
      // An end fence puts the first element `span` bytes before a page boundary.
      std::int64_t align = 256;
      if (f.fence == Fence::after) {
        const std::int64_t span = f.n * static_cast<std::int64_t>(es);
        align = 1;
        while (align < 256 && span % (align * 2) == 0) align *= 2;
      }
      if (align < spec.op.layouts.min_alignment_bytes)
        Planner::outside(c, tname + " is aligned to " + std::to_string(align) +
                                " bytes, the spec requires " +
                                std::to_string(spec.op.layouts.min_alignment_bytes));
      cases.push_back(std::move(c));
    }
  }

  // Aliasing: the output is an input (in place), or overlaps one partially.
  for (std::size_t t = 0; t < in.size(); ++t) {
    Case exact = p.make("alias", spec.op.outputs[0].name + "_is_" + in[t], p.shape_for(1025));
    exact.alias_input = static_cast<int>(t);
    const auto& ma = spec.op.outputs[0].may_alias;
    if (std::find(ma.begin(), ma.end(), in[t]) == ma.end())
      Planner::outside(exact, "the output is input " + in[t] + ", which may_alias does not allow");
    cases.push_back(std::move(exact));

    Case partial =
        p.make("alias", spec.op.outputs[0].name + "_overlaps_" + in[t], p.shape_for(1025));
    partial.alias_input = static_cast<int>(t);
    partial.alias_shift = 3;
    Planner::outside(partial, "the output partially overlaps input " + in[t]);
    cases.push_back(std::move(partial));
  }

  // Value classes, at a size with a tail for every vector width; half types also at 9
  // elements (one 8-wide vector and a scalar tail), so that both paths meet every class.
  std::vector<std::pair<std::vector<std::int64_t>, std::string>> value_shapes = {
      {p.shape_for(4097), ""}};
  if (is_half(spec.op.dtype)) value_shapes.push_back({p.shape_for(9), "_n9"});
  for (const auto& [vshape, suffix] : value_shapes) p.add_value_cases(cases, vshape, suffix);
  // Last, since they take minutes and most of the machine's memory: whatever happens to them,
  // every other case has its result.
  for (auto n : timed)
    if (n > kBigCaseElements) cases.push_back(p.sized("timing", n));
  if (plans_huge(options)) cases.push_back(p.sized("size", kHugeSize));
  return cases;
}

}  // namespace kq
