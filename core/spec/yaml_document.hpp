// The one YAML document of a spec, read only once its structure is known to be safe to build:
// a first pass over yaml-cpp's parse events refuses a second document, nesting deeper than
// kMaxYamlDepth, more than kMaxYamlNodes nodes, and anchors and aliases, before any node exists.
// Internal to the spec loader.
#pragma once
#include <yaml-cpp/yaml.h>

#include "spec/yaml_field.hpp"

namespace kq::spec_detail {

// A spec nests four levels (the top map, outputs, an output, its may_alias list); these bound
// the parser's recursion and the memory of the node tree, far above any real spec.
inline constexpr int kMaxYamlDepth = 32;
inline constexpr int kMaxYamlNodes = 10000;

struct Document {
  YAML::Node root;
  YAML::Mark start;  // where the document starts: errors about an empty root point here
};

// The document; fails through src.fail() on a YAML syntax error, on an empty file and on any of
// the above.
Document load_document(const Source& src);

}  // namespace kq::spec_detail
