// Typed reading of one YAML node of a spec, with the position and dotted path every error needs.
// Internal to the spec loader (yaml-cpp is a private dependency of kq_core).
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kq::spec_detail {

// The spec being read: its name for messages and its text, to locate scalars inside lines.
struct Source {
  std::string file;
  std::string_view text;

  // Throws SpecError at `at` (yaml-cpp's 0-based mark, reported 1-based).
  [[noreturn]] void fail(const YAML::Mark& at, const std::string& field,
                         const std::string& message) const;
};

// A node of the spec and the dotted path that names it ("timing.sizes[2]"). Errors about it
// point at the node itself, or at its key when the value is empty (yaml-cpp places an empty
// value at whatever token follows it, often the next key).
class Field {
 public:
  Field(const Source& src, YAML::Node node, std::string path, const YAML::Mark& key_mark);

  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  const YAML::Mark& mark() const { return mark_; }
  const Source& source() const { return *src_; }

  [[noreturn]] void fail(const std::string& message) const;
  // The field named `key` inside this one, or element `i` of it.
  Field child(const std::string& key, YAML::Node node, const YAML::Mark& key_mark) const;
  Field element(std::size_t i, YAML::Node node) const;

 private:
  const Source* src_;
  YAML::Node node_;
  std::string path_;
  YAML::Mark mark_;
};

// A value as messages quote it: at most kExcerptChars characters, then "...", so that a huge
// scalar does not make a huge message.
inline constexpr std::size_t kExcerptChars = 60;
std::string excerpt(std::string_view s);
// "a map", "a list", "no value", "'abc'" (plain) or "the string \"abc\"" (quoted).
std::string describe(const YAML::Node& node);
// True for a scalar written without quotes (yaml-cpp tags those "?"; quoted ones "!").
bool is_plain_scalar(const YAML::Node& node);

std::string read_string(const Field& f);  // any scalar
std::int64_t read_int(const Field& f);    // a plain decimal integer: 268435456, -3
double read_number(const Field& f);       // a plain number: 1, 0.5, 1e-6, .inf, .nan
// The value of a scalar field as messages quote it: excerpt(node.Scalar()).
std::string shown(const Field& f);
bool read_bool(const Field& f);                // true or false
std::vector<Field> read_list(const Field& f);  // a sequence; elements are named path[i]
// A scalar that must be one of `names`; returns its index. `what` names the kind in messages
// ("dtype", "l2 policy").
std::size_t read_choice(const Field& f, std::string_view what,
                        const std::vector<std::string_view>& names);

}  // namespace kq::spec_detail
