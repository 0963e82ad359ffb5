#include "spec/map_fields.hpp"

#include <algorithm>

#include "spec/suggest.hpp"

namespace kq::spec_detail {

MapFields::MapFields(const Field& map, std::vector<std::string_view> keys) : map_(map) {
  const YAML::Node& n = map.node();
  if (!n.IsMap()) map.fail("expected a map, got " + describe(n));
  // Each entry by value: yaml-cpp's iterators hand out temporaries (`it->first` would dangle).
  for (const auto& entry : n) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) {
      map.source().fail(key.Mark(), map.path(), "keys must be plain names, got " + describe(key));
    }
    const std::string& name = key.Scalar();
    Field value = map.child(name, entry.second, key.Mark());
    if (std::find(keys.begin(), keys.end(), name) == keys.end()) {
      std::string message = "unknown key '" + excerpt(name) + "'; ";
      if (name == "<<") {
        message += "YAML merge keys are not supported in a spec; write the keys out in full";
      } else if (auto near = closest_match(name, keys)) {
        message += "did you mean '" + *near + "'?";
      } else {
        message += "expected one of: " + join_names(keys);
      }
      map.source().fail(key.Mark(), value.path(), message);
    }
    for (const Entry& seen : entries_) {
      if (seen.name == name) {
        map.source().fail(key.Mark(), value.path(),
                          "duplicate key '" + name + "' (first given on line " +
                              std::to_string(seen.key_mark.line + 1) + ")");
      }
    }
    entries_.push_back(Entry{name, key.Mark(), std::move(value)});
  }
}

std::optional<Field> MapFields::get(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.name == key) return e.value;
  }
  return std::nullopt;
}

Field MapFields::require(std::string_view key) const {
  if (auto f = get(key)) return *f;
  const std::string path =
      map_.path().empty() ? std::string(key) : map_.path() + "." + std::string(key);
  map_.source().fail(map_.mark(), path, "missing required key '" + std::string(key) + "'");
}

std::optional<Field> peek(const Field& map, std::string_view key) {
  if (!map.node().IsMap()) return std::nullopt;
  for (const auto& entry : map.node()) {
    if (entry.first.IsScalar() && entry.first.Scalar() == key) {
      return map.child(std::string(key), entry.second, entry.first.Mark());
    }
  }
  return std::nullopt;
}

}  // namespace kq::spec_detail
