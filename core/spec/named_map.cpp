#include "spec/shaped_sections.hpp"

#include "spec/sections.hpp"

namespace kq::spec_detail {

std::vector<Named> read_named_map(const Field& f, std::string_view what) {
  const YAML::Node& n = f.node();
  if (!n.IsDefined() || n.IsNull()) return {};
  if (!n.IsMap()) f.fail("expected a map of " + std::string(what) + "s, got " + describe(n));
  std::vector<Named> out;
  for (const auto& entry : n) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) {
      f.source().fail(key.Mark(), f.path(), "keys must be plain names, got " + describe(key));
    }
    const std::string& name = key.Scalar();
    Field key_field = f.child(name, key, key.Mark());
    read_identifier(key_field, std::string(what) + " name");
    for (const Named& seen : out) {
      if (seen.name == name) {
        key_field.fail("duplicate " + std::string(what) + " '" + name + "' (first given on line " +
                       std::to_string(seen.key.mark().line + 1) + ")");
      }
    }
    out.push_back(Named{name, key_field, f.child(name, entry.second, key.Mark())});
  }
  return out;
}

}  // namespace kq::spec_detail
