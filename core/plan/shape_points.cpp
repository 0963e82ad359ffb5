#include "plan/shape_points.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "indexed/derived_dims.hpp"
#include "indexed/subscript_range.hpp"
#include "spec/sections.hpp"

namespace kq {
static_assert(kMaxPointElements == spec_detail::kMaxElements);

namespace {

// A single row beyond 2^20 (and 2^24 + 1 is not a float32: a count held in f32 rounds).
constexpr std::int64_t kHugeRow = (std::int64_t{1} << 24) + 1;
// The row length of the point whose tensor exceeds 2^31 elements.
constexpr std::int64_t kHugeRowsLength = 4097;

std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  constexpr std::int64_t cap = kMaxPointElements + 1;
  if (a == 0 || b == 0) return 0;
  if (a >= cap || b >= cap || a > cap / b) return cap;
  return std::min(a * b, cap);
}

int dim_index(const ShapedContract& c, const ix::Extent& e) {
  if (e.dim >= 0) return e.dim;
  const auto& ds = c.program->decls.dims;
  for (std::size_t i = 0; i < ds.size(); ++i)
    if (ds[i].name == e.name) return static_cast<int>(i);
  return -1;
}

std::int64_t tensor_elements(const ShapedContract& c, const ix::TensorDecl& t,
                             const std::vector<std::int64_t>& dims) {
  std::int64_t n = 1;
  for (const auto& e : t.shape) {
    std::int64_t v = e.constant;
    if (e.is_dim()) {
      const int d = dim_index(c, e);
      v = d >= 0 && d < static_cast<int>(dims.size()) ? dims[static_cast<std::size_t>(d)] : 1;
    }
    n = saturating_mul(n, v);
  }
  return n;
}

std::string point_name(const ShapedContract& c, const std::vector<std::int64_t>& dims) {
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + c.program->decls.dims[i].name + "=" + std::to_string(dims[i]);
  return s.empty() ? "(no dims)" : s;
}

// Greedy all-pairs. Each point starts from the uncovered pair whose own point (the other dims
// at 1) holds the largest tensor: such a pair leaves the least room for the others, which
// otherwise took a point each late in the walk. Then, of every dim still unset and each of its
// values that keeps every tensor within `limit` (unset dims count as 1), the one covering most
// uncovered pairs with the dims set so far is set, until none is left (ties: the smaller value,
// then the earlier dim). KernelBench's quick plans: three dims 338 -> 227 points, four 552 ->
// 435, five 840 -> 710, against taking the first uncovered pair and the dims in order.
std::vector<std::vector<std::int64_t>> pairwise(const ShapedContract& c,
                                                const std::vector<std::vector<std::int64_t>>& v,
                                                std::int64_t limit) {
  const std::size_t k = v.size();
  std::vector<std::vector<std::int64_t>> points;
  if (k == 0) return {{}};
  if (k == 1) {
    for (auto x : v[0])
      if (largest_tensor_elements(c, {x}) <= limit) points.push_back({x});
    return points;
  }
  using Pair = std::tuple<std::size_t, std::size_t, std::size_t, std::size_t>;  // i, a, j, b
  std::map<Pair, std::int64_t> uncovered;                 // each pair's own point's tensor
  std::set<std::pair<std::int64_t, Pair>> hardest_first;  // by that tensor, negated
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = i + 1; j < k; ++j)
      for (std::size_t a = 0; a < v[i].size(); ++a)
        for (std::size_t b = 0; b < v[j].size(); ++b) {
          std::vector<std::int64_t> p(k, 1);
          p[i] = v[i][a];
          p[j] = v[j][b];
          const std::int64_t n = largest_tensor_elements(c, p);
          if (n > limit) continue;
          uncovered.emplace(Pair{i, a, j, b}, n);
          hardest_first.emplace(-n, Pair{i, a, j, b});
        }
  auto is_uncovered = [&](std::size_t e, std::size_t x, std::size_t d, std::size_t y) {
    return uncovered.count(e < d ? Pair{e, x, d, y} : Pair{d, y, e, x}) > 0;
  };
  while (!uncovered.empty()) {
    const auto [i0, a0, j0, b0] = hardest_first.begin()->second;
    std::vector<std::int64_t> p(k, 1);
    std::vector<std::ptrdiff_t> chosen(k, -1);
    chosen[i0] = static_cast<std::ptrdiff_t>(a0);
    chosen[j0] = static_cast<std::ptrdiff_t>(b0);
    p[i0] = v[i0][a0];
    p[j0] = v[j0][b0];
    for (std::size_t left = k - 2; left > 0; --left) {
      std::size_t best_d = k, best_x = 0;
      int best_gain = -1;
      for (std::size_t d = 0; d < k; ++d) {
        if (chosen[d] >= 0) continue;
        for (std::size_t x = 0; x < v[d].size(); ++x) {
          auto q = p;
          q[d] = v[d][x];
          if (largest_tensor_elements(c, q) > limit) continue;
          int gain = 0;
          for (std::size_t e = 0; e < k; ++e)
            if (e != d && chosen[e] >= 0)
              gain += is_uncovered(e, static_cast<std::size_t>(chosen[e]), d, x) ? 1 : 0;
          // Ties keep the first: the smaller value (candidates ascend), the earlier dim.
          if (gain > best_gain || (gain == best_gain && x < best_x))
            best_gain = gain, best_d = d, best_x = x;
        }
      }
      // Value 1 (the first candidate) always fits, so some dim is set.
      chosen[best_d] = static_cast<std::ptrdiff_t>(best_x);
      p[best_d] = v[best_d][best_x];
    }
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = i + 1; j < k; ++j) {
        const Pair pair{i, static_cast<std::size_t>(chosen[i]), j,
                        static_cast<std::size_t>(chosen[j])};
        const auto it = uncovered.find(pair);
        if (it == uncovered.end()) continue;
        hardest_first.erase({-it->second, pair});
        uncovered.erase(it);
      }
    points.push_back(std::move(p));
  }
  return points;
}

// One point with a tensor above kHugePointElements: the tensor over the most dims, its last dim
// kHugeRowsLength (when it has two dims or more), its first dim as large as needed for a whole
// row to start beyond it, others 1.
std::optional<std::vector<std::int64_t>> huge_offsets_point(const ShapedContract& c) {
  const auto& decls = c.program->decls;
  const ix::TensorDecl* best = nullptr;
  std::size_t best_dims = 0;
  for (const auto& t : decls.tensors) {
    std::set<int> ds;
    for (const auto& e : t.shape)
      if (e.is_dim() && dim_index(c, e) >= 0) ds.insert(dim_index(c, e));
    if (ds.size() > best_dims) best = &t, best_dims = ds.size();
  }
  if (!best) return std::nullopt;
  std::vector<int> order;  // the tensor's dims, first occurrence order
  for (const auto& e : best->shape) {
    const int d = e.is_dim() ? dim_index(c, e) : -1;
    if (d >= 0 && std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  }
  std::vector<std::int64_t> p(decls.dims.size(), 1);
  if (order.size() >= 2) p[static_cast<std::size_t>(order.back())] = kHugeRowsLength;
  const auto first = static_cast<std::size_t>(order.front());
  const std::int64_t rest = tensor_elements(c, *best, p);  // with the first dim at 1
  if (rest <= 0) return std::nullopt;
  // Rows enough that the last one starts past 2^31: a 32-bit row offset (row * N in int) wraps
  // there, not only the offsets of the elements inside the row that crosses.
  p[first] = kHugePointElements / rest + 2;
  if (tensor_elements(c, *best, p) <= kHugePointElements) return std::nullopt;
  if (largest_tensor_elements(c, p) > kMaxPointElements) return std::nullopt;
  return p;
}

}  // namespace

std::vector<std::int64_t> shape_candidates(ix::DimKind kind, bool quick) {
  std::vector<std::int64_t> v = {1, 2, 3, 5, 7};
  for (std::int64_t b : {32, 128, 1024, 4096, 8192})
    for (std::int64_t d : {-1, 0, 1}) v.push_back(b + d);
  v.push_back(65521);
  if (kind == ix::DimKind::reduced) v.push_back((std::int64_t{1} << 20) + 3);
  if (quick) std::erase_if(v, [](std::int64_t x) { return x > kQuickMaxDim; });
  return v;
}

std::int64_t largest_tensor_elements(const ShapedContract& c,
                                     const std::vector<std::int64_t>& dims) {
  std::int64_t n = 0;
  for (const auto& t : c.program->decls.tensors) n = std::max(n, tensor_elements(c, t, dims));
  return n;
}

std::vector<ShapePoint> plan_shape_points(const ShapedContract& c, const ShapePlanOptions& o) {
  const auto& dims = c.program->decls.dims;
  std::vector<std::vector<std::int64_t>> cand;
  // A derived dim takes its formula's value at each point (a placeholder until then).
  for (const auto& d : dims)
    cand.push_back(d.is_derived() ? std::vector<std::int64_t>{1}
                                  : shape_candidates(d.kind, o.quick));

  // Dim values -> the point; merged flags.
  std::map<std::vector<std::int64_t>, ShapePoint> points;
  std::optional<std::int64_t> grown_cap;  // set while the pairs' points are added
  auto add = [&](std::vector<std::int64_t> p, bool huge, bool from_spec, bool timed) {
    if (p.size() != dims.size()) return;
    // Base dims whose derived ones fall below 1 (a window longer than the input) grow until
    // they are 1 or more, so that the other dims' values of the pair are still covered.
    if (!ix::complete_dims_growing(c.program->decls, p)) return;
    if (grown_cap && largest_tensor_elements(c, p) > *grown_cap) return;  // grown past the cap
    if (largest_tensor_elements(c, p) > kMaxPointElements) return;
    // Dims tied by index arithmetic (K >= G * C) admit no inputs at some of the pairs.
    if (ix::subscript_out_of_range(*c.program, p)) return;
    // Quick keeps the timed points (what is timed is qualified), within the huge bound.
    if (o.quick && !timed &&
        std::any_of(p.begin(), p.end(), [](auto x) { return x > kQuickMaxDim; }))
      return;
    if (largest_tensor_elements(c, p) > kHugePointElements) {
      if (o.quick) return;
      huge = true;
    }
    auto [it, fresh] = points.try_emplace(p);
    ShapePoint& sp = it->second;
    if (fresh) {
      for (std::size_t i = 0; i < p.size(); ++i) sp.dims.emplace_back(dims[i].name, p[i]);
      sp.name = point_name(c, p);
    }
    sp.huge = sp.huge || huge;
    sp.from_spec = sp.from_spec || from_spec;
    sp.timed = sp.timed || timed;
  };

  // The pairs' points keep every tensor within the cap after their derived dims are mended.
  grown_cap = std::min(o.max_elements, kHugePointElements);
  for (const auto& p : pairwise(c, cand, *grown_cap)) add(p, false, false, false);
  grown_cap.reset();
  if (!o.quick && o.include_huge) {
    if (auto p = huge_offsets_point(c)) add(*p, true, false, false);
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (dims[i].kind != ix::DimKind::reduced) continue;
      std::vector<std::int64_t> p(dims.size(), 1);
      p[i] = kHugeRow;
      add(p, true, false, false);
      break;  // one row
    }
  }
  for (const auto& p : c.qualification_points) add(p.dims, false, true, false);
  for (std::size_t i = 0; i < c.timing_points.size(); ++i)
    if (o.timed.empty() || std::find(o.timed.begin(), o.timed.end(),
                                     static_cast<std::int64_t>(i + 1)) != o.timed.end())
      add(c.timing_points[i].dims, false, false, true);

  std::vector<std::pair<std::vector<std::int64_t>, ShapePoint>> out(points.begin(), points.end());
  auto key = [&](const std::vector<std::int64_t>& p) {
    std::int64_t total = 0;
    for (const auto& t : c.program->decls.tensors)
      total = std::min(total + tensor_elements(c, t, p), kMaxPointElements + 1);
    return std::pair{largest_tensor_elements(c, p), total};
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    const auto ka = key(a.first);
    const auto kb = key(b.first);
    return std::tie(ka, a.first) < std::tie(kb, b.first);
  });
  std::vector<ShapePoint> result;
  result.reserve(out.size());
  for (auto& [p, sp] : out) result.push_back(std::move(sp));
  return result;
}

std::vector<std::string> quick_left_out(const ShapedContract& c) {
  std::vector<std::string> out;
  for (const auto& p : c.qualification_points) {
    const bool timed = std::any_of(c.timing_points.begin(), c.timing_points.end(),
                                   [&](const auto& t) { return t.dims == p.dims; });
    const bool long_dim =
        std::any_of(p.dims.begin(), p.dims.end(), [](std::int64_t x) { return x > kQuickMaxDim; });
    if (!timed && (long_dim || largest_tensor_elements(c, p.dims) > kHugePointElements))
      out.push_back(point_name(c, p.dims));
  }
  return out;
}

}  // namespace kq
