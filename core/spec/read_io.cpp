// inputs and outputs: the named tensors of the operation.
#include <algorithm>

#include "spec/map_fields.hpp"
#include "spec/sections.hpp"

namespace kq::spec_detail {
namespace {

// A tensor name: an identifier the semantics language can refer to.
std::string read_tensor_name(const Field& f, std::string_view what) {
  std::string name = read_identifier(f, what);
  if (is_reserved_name(name)) {
    f.fail(std::string(what) + " '" + name +
           "' is a function or constant of the semantics language; choose another name");
  }
  return name;
}

std::string index_note(const std::string& path) { return " (already " + path + ")"; }

}  // namespace

std::vector<std::string> read_inputs(const Field& f, std::vector<Field>& input_fields) {
  const std::vector<Field> items = read_list(f);
  if (items.empty()) f.fail("at least one input is required");
  std::vector<std::string> names;
  for (const Field& item : items) {
    // Either a bare name or {name: x}, for symmetry with outputs.
    Field name_field = item;
    if (item.node().IsMap()) name_field = MapFields(item, {"name"}).require("name");
    std::string name = read_tensor_name(name_field, "input name");
    for (std::size_t j = 0; j < names.size(); ++j) {
      if (names[j] == name) {
        name_field.fail("duplicate input name '" + name + "'" + index_note(input_fields[j].path()));
      }
    }
    names.push_back(std::move(name));
    input_fields.push_back(name_field);
  }
  return names;
}

std::vector<OutputSpec> read_outputs(const Field& f, const std::vector<std::string>& inputs) {
  const std::vector<Field> items = read_list(f);
  if (items.empty()) f.fail("exactly one output is required");
  if (items.size() > 1) {
    items[1].fail("only one output is supported: the semantics expression defines outputs[0]");
  }
  std::vector<OutputSpec> outputs;
  for (const Field& item : items) {
    OutputSpec out;
    Field name_field = item;
    if (item.node().IsMap()) {
      MapFields m(item, {"name", "ownership", "may_alias"});
      name_field = m.require("name");
      if (auto own = m.get("ownership")) {
        const std::string s = read_string(*own);
        if (s != "caller") {
          own->fail("unsupported ownership '" + excerpt(s) +
                    "'; only 'caller' is supported (the caller allocates the output, the arm "
                    "never allocates or frees it)");
        }
      }
      if (auto alias = m.get("may_alias")) {
        for (const Field& a : read_list(*alias)) {
          std::string name = read_string(a);
          if (std::find(inputs.begin(), inputs.end(), name) == inputs.end()) {
            a.fail("may_alias names '" + excerpt(name) + "', which is not an input");
          }
          if (std::find(out.may_alias.begin(), out.may_alias.end(), name) != out.may_alias.end()) {
            a.fail("'" + name + "' is listed twice");
          }
          out.may_alias.push_back(std::move(name));
        }
      }
    }
    out.name = read_tensor_name(name_field, "output name");
    if (std::find(inputs.begin(), inputs.end(), out.name) != inputs.end()) {
      name_field.fail("output name '" + out.name + "' is also an input name");
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

}  // namespace kq::spec_detail
