// Points (format 2): dim values to qualify or time at, as a list of maps or as a grid (every
// combination of per-dim lists, the first dim outermost). A point must give every dim but the
// derived ones (computed from the others: ix::complete_dims), and no
// tensor may hold more than kMaxElements elements at it, so byte counts stay far inside int64.
#include <algorithm>

#include "indexed/derived_dims.hpp"
#include "indexed/subscript_range.hpp"
#include "spec/sections.hpp"
#include "spec/shaped_sections.hpp"

namespace kq::spec_detail {
namespace {

// A grid multiplies: bound the points it may make (and the list's, for symmetry).
constexpr std::size_t kMaxPoints = 4096;

std::vector<std::string_view> dim_names(const ix::Declarations& d) {
  std::vector<std::string_view> names;
  for (const ix::DimDecl& dim : d.dims) names.push_back(dim.name);
  return names;
}

// Each tensor's element count at `p`, checked step by step so that nothing overflows; then every
// subscript inside its tensor (dims tied by index arithmetic admit no inputs elsewhere).
void check_extents(const Field& at, const Point& p, const ix::Program& prog) {
  const ix::Declarations& d = prog.decls;
  for (const ix::TensorDecl& t : d.tensors) {
    std::int64_t count = 1;
    for (const ix::Extent& e : t.shape) {
      const std::int64_t n = e.dim >= 0 ? p.dims[static_cast<std::size_t>(e.dim)] : e.constant;
      if (n > kMaxElements / count) {
        at.fail("tensor '" + t.name + "' would hold more than 2^40 (" +
                std::to_string(kMaxElements) + ") elements at this point");
      }
      count *= n;
    }
  }
  if (auto bad = ix::subscript_out_of_range(prog, p.dims))
    at.fail("no input is valid at this point: " + *bad);
}

// A derived dim's value is its formula's: giving it is an error.
void refuse_derived(const std::optional<Field>& v, const ix::DimDecl& dim) {
  if (v) {
    v->fail("dim '" + dim.name + "' is derived (" + dim.derived +
            "): it is computed from the others, not given");
  }
}

// The derived dims' values, then the tensors' extents.
void complete(const Field& at, Point& p, const ix::Program& prog) {
  if (auto bad = ix::complete_dims(prog.decls, p.dims))
    at.fail("no input is valid at this point: " + *bad);
  check_extents(at, p, prog);
}

Point read_point(const Field& f, const ix::Program& prog) {
  const ix::Declarations& d = prog.decls;
  const MapFields m(f, dim_names(d));
  Point p;
  for (const ix::DimDecl& dim : d.dims) {
    const auto v = m.get(dim.name);
    if (dim.is_derived()) {
      refuse_derived(v, dim);
      p.dims.push_back(1);
      continue;
    }
    if (!v) f.fail("the point gives no value for dim '" + dim.name + "' (every dim is given)");
    p.dims.push_back(read_element_count(*v));
  }
  complete(f, p, prog);
  return p;
}

std::vector<Point> read_point_list(const Field& f, const ix::Program& prog) {
  const std::vector<Field> items = read_list(f);
  if (items.empty()) f.fail("at least one point is required");
  if (items.size() > kMaxPoints) {
    f.fail("at most " + std::to_string(kMaxPoints) + " points, got " +
           std::to_string(items.size()));
  }
  std::vector<Point> points;
  for (const Field& item : items) {
    Point p = read_point(item, prog);
    if (auto seen = std::find(points.begin(), points.end(), p); seen != points.end()) {
      item.fail("the same point as " + f.path() + "[" + std::to_string(seen - points.begin()) +
                "]");
    }
    points.push_back(std::move(p));
  }
  return points;
}

std::vector<Point> read_grid(const Field& f, const ix::Program& prog) {
  const ix::Declarations& d = prog.decls;
  const MapFields m(f, dim_names(d));
  std::vector<std::vector<std::int64_t>> axes;
  std::size_t total = 1;
  for (const ix::DimDecl& dim : d.dims) {
    const auto v = m.get(dim.name);
    if (dim.is_derived()) {
      refuse_derived(v, dim);
      axes.push_back({1});
      continue;
    }
    if (!v) f.fail("the grid gives no values for dim '" + dim.name + "' (every dim is given)");
    std::vector<std::int64_t> values;
    for (const Field& item : read_list(*v)) {
      const std::int64_t n = read_element_count(item);
      if (std::find(values.begin(), values.end(), n) != values.end()) {
        item.fail("value " + std::to_string(n) + " is listed twice");
      }
      values.push_back(n);
    }
    if (values.empty()) v->fail("at least one value is required");
    total *= values.size();
    if (total > kMaxPoints) {
      v->fail("the grid would make more than " + std::to_string(kMaxPoints) + " points");
    }
    axes.push_back(std::move(values));
  }
  // Every combination, the first dim outermost (an odometer over the axes).
  std::vector<Point> points;
  std::vector<std::size_t> at(axes.size(), 0);
  for (std::size_t k = 0; k < total; ++k) {
    Point p;
    for (std::size_t i = 0; i < axes.size(); ++i) p.dims.push_back(axes[i][at[i]]);
    complete(f, p, prog);
    points.push_back(std::move(p));
    for (std::size_t i = axes.size(); i-- > 0;) {
      if (++at[i] < axes[i].size()) break;
      at[i] = 0;
    }
  }
  return points;
}

}  // namespace

std::vector<Point> read_points(const MapFields& m, const ix::Program& prog, bool required) {
  const auto points = m.get("points");
  const auto grid = m.get("grid");
  if (points && grid) grid->fail("points and grid are alternatives; give one of them");
  if (points) return read_point_list(*points, prog);
  if (grid) return read_grid(*grid, prog);
  if (required) {
    const Field& f = m.field();
    f.source().fail(f.mark(), f.path() + ".points", "missing required key 'points' (or 'grid')");
  }
  return {};
}

}  // namespace kq::spec_detail
