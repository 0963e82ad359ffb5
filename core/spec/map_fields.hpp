// A YAML map of a spec read against a fixed set of keys: unknown keys (with a "did you mean"),
// duplicate keys and non-name keys are rejected when it is built; fields are then looked up.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/yaml_field.hpp"

namespace kq::spec_detail {

class MapFields {
 public:
  // Fails unless `map` is a map whose keys are distinct plain names taken from `keys`.
  MapFields(const Field& map, std::vector<std::string_view> keys);

  // The field under `key`, if the map has it.
  std::optional<Field> get(std::string_view key) const;
  // The field under `key`; its absence is reported at the map's position.
  Field require(std::string_view key) const;
  const Field& field() const { return map_; }

 private:
  struct Entry {
    std::string name;
    YAML::Mark key_mark;
    Field value;
  };
  Field map_;
  std::vector<Entry> entries_;
};

// The value under `key` in `map` if `map` is a map that has it, without any checking: for the
// few fields that decide how the rest is read (kq_spec).
std::optional<Field> peek(const Field& map, std::string_view key);

}  // namespace kq::spec_detail
