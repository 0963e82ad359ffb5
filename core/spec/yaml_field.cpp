#include "spec/yaml_field.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "spec/spec.hpp"
#include "spec/suggest.hpp"

namespace kq::spec_detail {
namespace {

bool is_decimal_integer(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

enum class Number { ok, malformed, out_of_range };

// YAML's spellings of the special floats, plus what std::from_chars reads.
Number parse_number(std::string_view s, double& out) {
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "+.Inf" || s == "+.INF") {
    out = kInf;
    return Number::ok;
  }
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") {
    out = -kInf;
    return Number::ok;
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") {
    out = std::numeric_limits<double>::quiet_NaN();
    return Number::ok;
  }
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return Number::malformed;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  if (r.ptr != s.data() + s.size()) return Number::malformed;
  if (r.ec == std::errc::result_out_of_range) return Number::out_of_range;
  return r.ec == std::errc() ? Number::ok : Number::malformed;
}

}  // namespace

void Source::fail(const YAML::Mark& at, const std::string& field,
                  const std::string& message) const {
  const bool known = !at.is_null();
  throw SpecError(file, known ? at.line + 1 : 1, known ? at.column + 1 : 1, field, message);
}

Field::Field(const Source& src, YAML::Node node, std::string path, const YAML::Mark& key_mark)
    : src_(&src), node_(std::move(node)), path_(std::move(path)) {
  const bool own = node_.IsDefined() && !node_.IsNull() && !node_.Mark().is_null();
  mark_ = own ? node_.Mark() : key_mark;
}

void Field::fail(const std::string& message) const { src_->fail(mark_, path_, message); }

Field Field::child(const std::string& key, YAML::Node node, const YAML::Mark& key_mark) const {
  return Field(*src_, std::move(node), path_.empty() ? key : path_ + "." + key, key_mark);
}

Field Field::element(std::size_t i, YAML::Node node) const {
  return Field(*src_, std::move(node), path_ + "[" + std::to_string(i) + "]", mark_);
}

std::string excerpt(std::string_view s) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // inside a character
    if (++chars > kExcerptChars) return std::string(s.substr(0, i)) + "...";
  }
  return std::string(s);
}

std::string shown(const Field& f) {
  return f.node().IsScalar() ? excerpt(f.node().Scalar()) : describe(f.node());
}

bool is_plain_scalar(const YAML::Node& node) { return node.IsScalar() && node.Tag() == "?"; }

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "no value";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  if (is_plain_scalar(node)) return "'" + excerpt(node.Scalar()) + "'";
  return "the string \"" + excerpt(node.Scalar()) + "\"";
}

std::string read_string(const Field& f) {
  if (!f.node().IsScalar()) f.fail("expected a string, got " + describe(f.node()));
  return f.node().Scalar();
}

std::int64_t read_int(const Field& f) {
  const YAML::Node& n = f.node();
  if (!is_plain_scalar(n)) f.fail("expected an integer, got " + describe(n));
  std::string_view s = n.Scalar();
  if (!is_decimal_integer(s)) {
    double d = 0;
    if (parse_number(s, d) == Number::ok && std::isfinite(d) && d == std::trunc(d) &&
        std::fabs(d) < 1e18) {
      f.fail("expected an integer, got '" + excerpt(s) +
             "' (write it out in digits: " + std::to_string(static_cast<std::int64_t>(d)) + ")");
    }
    f.fail("expected an integer, got '" + excerpt(s) + "'");
  }
  if (s[0] == '+') s.remove_prefix(1);
  std::int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) {
    f.fail("integer '" + excerpt(n.Scalar()) + "' is out of range (at most " +
           std::to_string(std::numeric_limits<std::int64_t>::max()) + " in magnitude)");
  }
  return v;
}

double read_number(const Field& f) {
  const YAML::Node& n = f.node();
  if (!is_plain_scalar(n)) f.fail("expected a number, got " + describe(n));
  double v = 0;
  switch (parse_number(n.Scalar(), v)) {
    case Number::ok:
      break;
    case Number::out_of_range:
      f.fail("number '" + shown(f) + "' is outside the float64 range (write .inf for infinity)");
    case Number::malformed:
      f.fail("expected a number, got '" + shown(f) + "'");
  }
  return v;
}

bool read_bool(const Field& f) {
  const YAML::Node& n = f.node();
  if (is_plain_scalar(n)) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  f.fail("expected true or false, got " + describe(n));
}

std::vector<Field> read_list(const Field& f) {
  if (!f.node().IsSequence()) f.fail("expected a list, got " + describe(f.node()));
  std::vector<Field> out;
  out.reserve(f.node().size());
  for (std::size_t i = 0; i < f.node().size(); ++i) out.push_back(f.element(i, f.node()[i]));
  return out;
}

std::size_t read_choice(const Field& f, std::string_view what,
                        const std::vector<std::string_view>& names) {
  const YAML::Node& n = f.node();
  if (!n.IsScalar()) {
    f.fail("expected a " + std::string(what) + " (one of: " + join_names(names) + "), got " +
           describe(n));
  }
  const std::string& s = n.Scalar();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (s == names[i]) return i;
  }
  const std::string message = "unknown " + std::string(what) + " '" + excerpt(s) + "'; ";
  if (auto near = closest_match(s, names)) {
    f.fail(message + "did you mean '" + *near + "'? (expected one of: " + join_names(names) + ")");
  }
  f.fail(message + "expected one of: " + join_names(names));
}

}  // namespace kq::spec_detail
