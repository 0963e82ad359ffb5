// semantics (format 2): indexed statements, parsed by kq::ix against the declarations. Its
// errors carry a line and column inside the program; they are reported at the file's line and
// column of that character (a literal block `|` keeps the program's lines as the file's).
#include "indexed/parser.hpp"
#include "spec/sections.hpp"
#include "spec/shaped_sections.hpp"

namespace kq::spec_detail {
namespace {

[[noreturn]] void fail_at(const Field& f, const std::string& text, const ix::ParseError& e) {
  std::string message = e.message;
  if (!e.statement.empty()) message += " (in `" + excerpt(e.statement) + "`)";
  if (e.line > 0) {
    if (auto at = scalar_position(f, text, e.line, e.column)) {
      f.source().fail(*at, f.path(), message);
    }
    message +=
        " (at " + std::to_string(e.line) + ":" + std::to_string(e.column) + " of the statements)";
  }
  f.fail(message);
}

const Named* find_declared(const std::vector<Named>& declared, const std::string& name) {
  for (const Named& n : declared)
    if (n.name == name) return &n;
  return nullptr;
}

// Every input read by some statement, every dim in some tensor's shape: anything else is a
// declaration the operation does not use, most likely a mistake.
void check_used(const ix::Program& p, const std::vector<Named>& declared) {
  const ix::Declarations& d = p.decls;
  std::vector<bool> read(d.tensors.size(), false);
  for (const ix::Node& n : p.nodes)
    if (n.kind == ix::NodeKind::access) read[static_cast<std::size_t>(n.ref)] = true;
  for (std::size_t t = 0; t < d.tensors.size(); ++t) {
    if (d.tensors[t].role == ix::Role::input && !read[t]) {
      if (const Named* n = find_declared(declared, d.tensors[t].name))
        n->key.fail("input '" + d.tensors[t].name + "' is not read by the semantics");
    }
  }
  std::vector<bool> shaped(d.dims.size(), false);
  for (const ix::TensorDecl& t : d.tensors)
    for (const ix::Extent& e : t.shape)
      if (e.dim >= 0) shaped[static_cast<std::size_t>(e.dim)] = true;
  for (std::size_t i = 0; i < d.dims.size(); ++i) {
    if (shaped[i]) continue;
    if (const Named* n = find_declared(declared, d.dims[i].name))
      n->key.fail("dim '" + d.dims[i].name +
                  "' is in no tensor's shape; every dim sizes an input, output or temporary");
  }
}

}  // namespace

ix::Program read_statements(const Field& f, const ix::Declarations& decls,
                            const std::vector<Named>& declared) {
  const std::string text = read_string(f);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) f.fail("the statements are empty");
  ix::ParseResult parsed = ix::parse_program(text, decls);
  if (!parsed.program) {
    fail_at(f, text, parsed.error.value_or(ix::ParseError{0, 0, "cannot parse", ""}));
  }
  check_used(*parsed.program, declared);
  return std::move(*parsed.program);
}

}  // namespace kq::spec_detail
