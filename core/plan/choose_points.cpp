#include "plan/choose_points.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "indexed/derived_dims.hpp"
#include "indexed/subscript_range.hpp"
#include "plan/shape_points.hpp"
#include "spec/suggest.hpp"

namespace kq {
namespace {

// Each dim's name and value, as written.
using Written = std::vector<std::pair<std::string, std::string>>;

[[noreturn]] void fail(const std::string& text, const std::string& why) {
  throw PointsError("--points '" + text + "': " + why);
}

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return std::string(s.substr(first, s.find_last_not_of(" \t") - first + 1));
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t at = s.find(sep); at != std::string_view::npos; at = s.find(sep, start)) {
    out.push_back(trim(s.substr(start, at - start)));
    start = at + 1;
  }
  out.push_back(trim(s.substr(start)));
  return out;
}

std::optional<std::int64_t> whole_number(std::string_view t) {
  std::int64_t v = 0;
  const char* end = t.data() + t.size();
  auto [at, ec] = std::from_chars(t.data(), end, v);
  if (t.empty() || ec != std::errc() || at != end) return std::nullopt;
  return v;
}

// "4096" or "2^12"; nullopt for anything else or beyond int64.
std::optional<std::int64_t> parse_count(std::string_view s) {
  const auto caret = s.find('^');
  if (caret == std::string_view::npos) return whole_number(s);
  const auto base = whole_number(s.substr(0, caret)), e = whole_number(s.substr(caret + 1));
  if (!base || !e || *base < 1 || *e < 0 || *e > 62) return std::nullopt;
  std::int64_t v = 1;
  for (std::int64_t i = 0; i < *e; ++i) {
    if (v > std::numeric_limits<std::int64_t>::max() / *base) return std::nullopt;
    v *= *base;
  }
  return v;
}

// "{M: 32768, N: 4096}" or the label form "M=32768,N=4096".
bool is_map(const std::string& text) {
  return text.find('{') != std::string::npos || text.find('=') != std::string::npos;
}

Written parse_map(const std::string& text) {
  std::string body = trim(text);
  const bool braces = body.front() == '{';
  if (braces) {
    if (body.size() < 2 || body.back() != '}') fail(text, "a flow map ends with '}'");
    body = body.substr(1, body.size() - 2);
  }
  const char sep = braces ? ':' : '=';
  if (trim(body).empty()) fail(text, "no dim given");
  Written out;
  for (const std::string& item : split(body, ',')) {
    const auto at = item.find(sep);
    if (at == std::string::npos || trim(item.substr(0, at)).empty())
      fail(text, "'" + item + "' is not " + (braces ? "NAME: VALUE" : "NAME=VALUE"));
    out.emplace_back(trim(item.substr(0, at)), trim(item.substr(at + 1)));
  }
  return out;
}

std::vector<std::string_view> dim_names(const Spec& spec) {
  if (!spec.shaped) return {kFormat1Dim};
  std::vector<std::string_view> names;
  for (const ix::DimDecl& d : spec.shaped->program->decls.dims) names.push_back(d.name);
  return names;
}

// The dims a point gives: all but the derived ones.
std::vector<std::string_view> given_dims(const Spec& spec) {
  std::vector<std::string_view> names = dim_names(spec);
  if (!spec.shaped) return names;
  const auto& dims = spec.shaped->program->decls.dims;
  std::vector<std::string_view> given;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (!dims[i].is_derived()) given.push_back(names[i]);
  return given;
}

std::string no_such_dim(const Spec& spec, const std::string& name) {
  const auto names = dim_names(spec);
  if (!spec.shaped)
    return spec.op.op + " is a format-1 spec: its one dim is " + kFormat1Dim +
           ", the element count, not " + name;
  std::string why = spec.op.op + " has no dim " + name;
  // Dims are often one letter, each one edit from any other: only a case slip or a longer
  // name's typo is worth a suggestion.
  if (auto near = closest_match(name, names);
      near && (name.size() >= 3 || edit_distance(name, *near) == 0))
    why += " (did you mean " + *near + "?)";
  return why + "; its dims: " + join_names(names);
}

// The values of every dim, in the spec's order.
std::vector<std::int64_t> dim_values(const Spec& spec, const Written& written,
                                     const std::string& text) {
  const auto names = dim_names(spec);
  std::vector<std::optional<std::int64_t>> values(names.size());
  for (const auto& [name, value] : written) {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) fail(text, no_such_dim(spec, name));
    auto& slot = values[static_cast<std::size_t>(it - names.begin())];
    if (slot) fail(text, name + " is given twice");
    slot = parse_count(value);
    if (!slot || *slot < 1)
      fail(text, name + " must be a positive integer (4096 or 2^12), not '" + value + "'");
  }
  std::vector<std::int64_t> dims;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const ix::DimDecl* decl = spec.shaped ? &spec.shaped->program->decls.dims[i] : nullptr;
    if (decl && decl->is_derived()) {  // computed below; a label's value must agree
      dims.push_back(1);
      continue;
    }
    if (!values[i])
      fail(text, std::string(names[i]) +
                     " is not given (every dim is: " + join_names(given_dims(spec)) + ")");
    dims.push_back(*values[i]);
  }
  if (!spec.shaped) return dims;
  const auto& decls = spec.shaped->program->decls;
  if (auto bad = ix::complete_dims(decls, dims)) fail(text, "no input is valid there: " + *bad);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (values[i] && *values[i] != dims[i]) {
      fail(text, decls.dims[i].name + " is derived (" + decls.dims[i].derived + "), " +
                     std::to_string(dims[i]) + " there, not " + std::to_string(*values[i]));
    }
  }
  return dims;
}

class Chooser {
 public:
  explicit Chooser(const Spec& spec) : spec_(spec) {}

  void add_map(const std::string& text) {
    const std::vector<std::int64_t> dims = dim_values(spec_, parse_map(text), text);
    if (largest_elements(dims) > kMaxPointElements)
      fail(text, "a tensor would hold more than 2^40 elements there");
    if (!spec_.shaped) return add_key(dims[0]);
    if (auto bad = ix::subscript_out_of_range(*spec_.shaped->program, dims))
      fail(text, "no input is valid there: " + *bad);
    const Point p{dims};
    const auto& own = spec_.shaped->timing_points;
    if (auto it = std::find(own.begin(), own.end(), p); it != own.end())
      return add_key(it - own.begin() + 1);
    auto it = std::find(choice_.added.begin(), choice_.added.end(), p);
    if (it == choice_.added.end()) it = choice_.added.insert(it, p);
    add_key(static_cast<std::int64_t>(own.size()) + (it - choice_.added.begin()) + 1);
  }

  void add_numbers(const std::string& text) {
    for (const std::string& item : split(text, ',')) {
      const auto n = parse_count(item);
      if (!spec_.shaped) {
        if (!n || *n < 1) fail(text, "'" + item + "' is not an element count (4096 or 2^12)");
        if (*n > kMaxPointElements) fail(text, item + " is above 2^40 elements");
        add_key(*n);
        continue;
      }
      const auto count = static_cast<std::int64_t>(spec_.shaped->timing_points.size());
      if (!n || *n < 1 || *n > count)
        fail(text, "'" + item + "' is not a timing point's number: " + spec_.op.op + " has " +
                       std::to_string(count) + " (1 to " + std::to_string(count) +
                       "); a point of any dim values is written " + example_point(spec_));
      add_key(*n);
    }
  }

  TimingChoice take() { return std::move(choice_); }

 private:
  void add_key(std::int64_t k) {
    if (std::find(choice_.keys.begin(), choice_.keys.end(), k) == choice_.keys.end())
      choice_.keys.push_back(k);
  }

  std::int64_t largest_elements(const std::vector<std::int64_t>& dims) const {
    return spec_.shaped ? largest_tensor_elements(*spec_.shaped, dims) : dims[0];
  }

  const Spec& spec_;
  TimingChoice choice_;
};

}  // namespace

std::string example_point(const Spec& spec) {
  if (!spec.shaped)
    return std::string("{") + kFormat1Dim + ": " +
           std::to_string(spec.timing.sizes.empty() ? 4096 : spec.timing.sizes.front()) + "}";
  const ShapedContract& c = *spec.shaped;
  const auto& dims = c.program->decls.dims;
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].is_derived()) continue;
    s += (s.empty() ? "" : ", ") + dims[i].name + ": " + std::to_string(c.timing_points[0].dims[i]);
  }
  return "{" + s + "}";
}

TimingChoice choose_points(const Spec& spec, const std::vector<std::string>& texts) {
  Chooser chooser(spec);
  for (const std::string& text : texts) {
    if (trim(text).empty()) fail(text, "no point given");
    if (is_map(text))
      chooser.add_map(text);
    else
      chooser.add_numbers(text);
  }
  return chooser.take();
}

void add_timing_points(Spec& spec, const std::vector<Point>& added) {
  if (!spec.shaped) return;
  auto& points = spec.shaped->timing_points;
  points.insert(points.end(), added.begin(), added.end());
}

}  // namespace kq
