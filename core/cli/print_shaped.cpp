#include "cli/print_shaped.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "indexed/cost.hpp"
#include "kq/indexed_text.hpp"

namespace kq::cli {
namespace {

// Whole numbers in full (byte and FLOP counts), others to six digits.
std::string number(double v) {
  char buf[32];
  const bool whole = v == std::floor(v) && std::fabs(v) < 1e15;
  std::snprintf(buf, sizeof buf, whole ? "%.0f" : "%.6g", v);
  return buf;
}

std::string shape_text(const ix::TensorDecl& t) {
  std::string s = "[";
  for (std::size_t i = 0; i < t.shape.size(); ++i)
    s += (i ? ", " : "") + ix::extent_text(t.shape[i]);
  return s + "]";
}

std::string point_text(const ix::Declarations& d, const Point& p) {
  std::string s = "{";
  for (std::size_t i = 0; i < d.dims.size(); ++i)
    s += (i ? ", " : "") + d.dims[i].name + ": " + std::to_string(p.dims[i]);
  return s + "}";
}

std::string rule_text(const ShapedCompare& r) {
  switch (r.kind) {
    case ShapedCompare::Kind::bitwise:
      return "bitwise";
    case ShapedCompare::Kind::ulp:
      return "ulp " + std::to_string(r.max_ulp);
    case ShapedCompare::Kind::accumulation_bound:
      return r.max_ulp > 1 ? "bound: accumulation, ulp " + std::to_string(r.max_ulp)
                           : "bound: accumulation";
    case ShapedCompare::Kind::tolerance:
      break;
  }
  std::string s;
  if (r.atol) s += "atol " + r.atol->text;
  if (r.rtol) s += std::string(s.empty() ? "" : ", ") + "rtol " + r.rtol->text;
  return s;
}

// Bytes and FLOPs at a point: the spec's overrides where it gives them, else kq::ix's count.
std::string cost_text(const ShapedContract& c, const Point& p) {
  ix::DimValues dims;
  for (std::size_t i = 0; i < c.program->decls.dims.size(); ++i)
    dims[c.program->decls.dims[i].name] = p.dims[i];
  const ix::Cost cost = ix::default_cost(*c.program, dims);
  const double bytes = c.cost.bytes ? evaluate(*c.cost.bytes, c, p) : cost.bytes;
  const double flops = c.cost.flops ? evaluate(*c.cost.flops, c, p) : cost.flops;
  return number(bytes) + " bytes, " + number(flops) + " FLOPs";
}

void print_points(std::ostream& out, const char* what, const ShapedContract& c,
                  const std::vector<Point>& points) {
  if (points.empty()) return;
  out << "  " << what << " points:\n";
  for (const Point& p : points)
    out << "    " << point_text(c.program->decls, p) << ": " << cost_text(c, p) << "\n";
}

}  // namespace

void print_shaped_summary(std::ostream& out, const Spec& spec) {
  const ShapedContract& c = *spec.shaped;
  const ix::Declarations& d = c.program->decls;
  out << "  dims:";
  for (std::size_t i = 0; i < d.dims.size(); ++i)
    out << (i ? ", " : " ") << d.dims[i].name << " "
        << (d.dims[i].is_derived()                ? "= " + d.dims[i].derived
            : d.dims[i].kind == ix::DimKind::free ? std::string("free")
                                                  : std::string("reduced"));
  out << "\n";
  if (!d.params.empty()) {
    out << "  params:";
    for (std::size_t i = 0; i < d.params.size(); ++i)
      out << (i ? ", " : " ") << d.params[i].name << " = " << number(d.params[i].value);
    out << "\n";
  }
  for (const ix::TensorDecl& t : d.tensors)
    out << "  " << ix::to_string(t.role) << " " << t.name << ": " << to_string(t.dtype) << " "
        << shape_text(t) << (t.pad ? ", padded with " + number(*t.pad) : "") << "\n";
  out << "  statements:\n";
  for (const ix::Statement& s : c.program->statements) out << "    " << s.text << "\n";
  // What an arm compares to recognise the computation (kq/indexed_text.hpp).
  out << "  canonical form (names by place, for arms to match):\n";
  std::istringstream canonical(ix::canonical_text(*c.program));
  for (std::string line; std::getline(canonical, line);) out << "    " << line << "\n";
  out << "  compare:";
  for (std::size_t i = 0; i < c.compare.size(); ++i)
    out << (i ? "; " : " ") << d.tensors[static_cast<std::size_t>(c.compare[i].output)].name << ": "
        << rule_text(c.compare[i]);
  out << "\n";
  print_points(out, "qualification", c, c.qualification_points);
  print_points(out, "timing", c, c.timing_points);
}

}  // namespace kq::cli
