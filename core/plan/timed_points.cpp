#include "plan/timed_points.hpp"

#include <algorithm>
#include <stdexcept>

#include "indexed/cost.hpp"
#include "plan/case_shapes.hpp"

namespace kq {
namespace {

std::uint64_t key_seed(const Spec& spec, std::uint64_t key) {
  return spec.qualification.seed ^ key * 0x9e3779b97f4a7c15ull;
}

TimedPoint elementwise(const Spec& spec, std::int64_t size) {
  TimedPoint t;
  t.size = size;
  t.c.group = "timing";
  t.c.name = "timing/" + std::to_string(size);
  t.c.shape = {size};
  t.c.inputs.resize(spec.op.inputs.size());
  t.c.outputs.resize(spec.op.outputs.size());
  t.c.seed = key_seed(spec, static_cast<std::uint64_t>(size));
  t.bytes = static_cast<double>((spec.op.inputs.size() + spec.op.outputs.size()) *
                                dtype_size(spec.op.dtype)) *
            static_cast<double>(size);
  return t;
}

std::string point_name(const ix::Declarations& d, const Point& p) {
  std::string s;
  for (std::size_t i = 0; i < p.dims.size(); ++i)
    s += (i ? "," : "") + d.dims[i].name + "=" + std::to_string(p.dims[i]);
  return s;
}

TimedPoint shaped(const Spec& spec, const Point& p, std::int64_t number) {
  const ShapedContract& sc = *spec.shaped;
  const ix::Declarations& d = sc.program->decls;
  TimedPoint t;
  t.size = number;
  t.point = point_name(d, p);
  t.c.group = "timing";
  t.c.name = "timing/" + t.point;
  t.c.dims = p.dims;
  std::int64_t most = -1;
  for (const ix::TensorDecl& decl : d.tensors) {
    auto s = declared_shape(decl, p.dims);
    std::int64_t n = 1;
    for (auto x : s) n *= x;
    if (n > most) most = n, t.c.shape = std::move(s);
  }
  t.c.inputs.resize(spec.op.inputs.size());
  t.c.outputs.resize(spec.op.outputs.size());
  // By the point, not its number: a point added with --points has the same data in every run.
  t.c.seed = key_seed(spec, fnv1a(t.point, 1469598103934665603ull));
  ix::DimValues dims;
  for (std::size_t i = 0; i < d.dims.size(); ++i) dims[d.dims[i].name] = p.dims[i];
  const ix::Cost cost = ix::default_cost(*sc.program, dims);
  t.bytes = sc.cost.bytes ? evaluate(*sc.cost.bytes, sc, p) : cost.bytes;
  t.flops = sc.cost.flops ? evaluate(*sc.cost.flops, sc, p) : cost.flops;
  return t;
}

}  // namespace

std::string TimedPoint::where() const {
  return point.empty() ? std::to_string(size) + " elements" : point;
}

std::vector<TimedPoint> timed_points(const Spec& spec, const std::vector<std::int64_t>& sizes) {
  std::vector<TimedPoint> out;
  if (!spec.shaped) {
    for (std::int64_t n : sizes.empty() ? spec.timing.sizes : sizes)
      out.push_back(elementwise(spec, n));
    return out;
  }
  const auto& points = spec.shaped->timing_points;
  for (std::int64_t n : sizes)
    if (n < 1 || n > static_cast<std::int64_t>(points.size()))
      throw std::invalid_argument(spec.op.op + " has no timing point " + std::to_string(n));
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto number = static_cast<std::int64_t>(i + 1);
    if (sizes.empty() || std::find(sizes.begin(), sizes.end(), number) != sizes.end())
      out.push_back(shaped(spec, points[i], number));
  }
  return out;
}

std::int64_t smallest_timing_point(const Spec& spec) {
  std::int64_t best = 1;
  double least = -1;
  for (const TimedPoint& p : timed_points(spec))
    if (least < 0 || p.bytes < least) least = p.bytes, best = p.size;
  return best;
}

}  // namespace kq
