// Two passes over the text. The first feeds yaml-cpp's parser an event handler that counts and
// refuses (throwing out of the parser stops it at once, so its recursion never goes deeper than
// kMaxYamlDepth); the second, YAML::Load, builds the nodes of the first document.
//
// YAML::LoadAll is not used: on a token that cannot start a node (a stray ',' as in ", 1"),
// yaml-cpp 0.7's parser emits an empty document without consuming the token, and LoadAll keeps
// appending empty documents until memory runs out. Here at most two documents are asked for, and
// one that starts where the previous one did is reported as the stray token it is.
#include "spec/yaml_document.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <optional>
#include <sstream>

namespace kq::spec_detail {
namespace {

class StructureCheck : public YAML::EventHandler {
 public:
  explicit StructureCheck(const Source& src) : src_(src) {}

  int documents() const { return documents_; }
  const YAML::Mark& first_start() const { return first_start_; }

  // The parser is stopped at the first node of a second document: all that matters is where it
  // is, and whether that document started where the first one did (having consumed nothing).
  struct SecondDocument {
    YAML::Mark node;
    bool stuck;
  };

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ == 1) first_start_ = mark;
    stuck_ = documents_ > 1 && mark.pos == first_start_.pos;
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { node(mark, anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    stop_in_second_document(mark);
    src_.fail(mark, "",
              "YAML aliases (*name) are not supported in a spec; write the value out in full");
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    node(mark, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { --depth_; }
  void OnAnchor(const YAML::Mark& mark, const std::string& name) override {
    stop_in_second_document(mark);
    fail_anchor(mark, "&" + name);
  }

 private:
  void stop_in_second_document(const YAML::Mark& mark) const {
    if (documents_ > 1) throw SecondDocument{mark, stuck_};
  }
  void node(const YAML::Mark& mark, YAML::anchor_t anchor) {
    stop_in_second_document(mark);
    if (anchor != YAML::NullAnchor) fail_anchor(mark, "&name");
    if (++nodes_ > kMaxYamlNodes) {
      src_.fail(
          mark, "",
          "more than " + std::to_string(kMaxYamlNodes) + " YAML nodes; a spec needs far fewer");
    }
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    node(mark, anchor);
    if (++depth_ > kMaxYamlDepth) {
      src_.fail(mark, "",
                "lists and maps nest deeper than " + std::to_string(kMaxYamlDepth) + " levels");
    }
  }
  [[noreturn]] void fail_anchor(const YAML::Mark& mark, const std::string& spelled) const {
    src_.fail(mark, "",
              "YAML anchors (" + spelled + ") and aliases are not supported in a spec; write " +
                  "each value out in full");
  }

  const Source& src_;
  int documents_ = 0;
  int depth_ = 0;
  int nodes_ = 0;
  YAML::Mark first_start_;
  bool stuck_ = false;
};

// The character at `mark`, or '\0'.
char char_at(const Source& src, const YAML::Mark& mark) {
  const auto pos = static_cast<std::size_t>(mark.pos);
  return mark.pos >= 0 && pos < src.text.size() ? src.text[pos] : '\0';
}

// A second document is either one, or yaml-cpp's reading of a token that cannot begin a value
// (a document that starts where the first did, or on a flow indicator that closes nothing).
[[noreturn]] void fail_second_document(const Source& src, const StructureCheck::SecondDocument& d) {
  const char c = char_at(src, d.node);
  if (!d.stuck && c != ',' && c != ']' && c != '}') {
    src.fail(d.node, "", "a spec file holds one YAML document; this is a second one");
  }
  if (c > ' ' && c < 0x7F) {
    src.fail(d.node, "",
             std::string("YAML syntax error: unexpected '") + c + "' where a value should start");
  }
  src.fail(d.node, "", "YAML syntax error: no value can start here");
}

// The first pass; returns where the first document starts, if there is one.
std::optional<YAML::Mark> check_structure(const Source& src) {
  std::istringstream in{std::string(src.text)};
  YAML::Parser parser(in);
  StructureCheck check(src);
  try {
    // A second document stops the parser as it starts (SecondDocument).
    if (parser.HandleNextDocument(check)) parser.HandleNextDocument(check);
  } catch (const StructureCheck::SecondDocument& second) {
    fail_second_document(src, second);
  } catch (const YAML::Exception& e) {
    src.fail(e.mark, "", "YAML syntax error: " + e.msg);
  }
  if (check.documents() == 0) return std::nullopt;
  return check.first_start();
}

}  // namespace

Document load_document(const Source& src) {
  const std::optional<YAML::Mark> start = check_structure(src);
  if (!start) src.fail(YAML::Mark(), "", "no spec in the file (it is empty or all comments)");
  try {
    return Document{YAML::Load(std::string(src.text)), *start};
  } catch (const YAML::Exception& e) {
    src.fail(e.mark, "", "YAML syntax error: " + e.msg);
  }
}

}  // namespace kq::spec_detail
