// A loaded, validated spec: the operation contract handed to arms (kq::OpSpec) plus what the
// host alone needs (comparison rule, qualification extras, timing policy, decision).
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kq/op_spec.hpp"
#include "spec/shaped.hpp"

namespace kq {

struct QualificationExtras {
  std::uint64_t seed = 20261129;
  std::vector<std::int64_t> extra_sizes;  // element counts added to the built-in case sizes
  double hang_timeout_s = 60.0;           // a worker silent this long is killed: verdict hung
  // When > 0: the accuracy the compare rule states is claimed for inputs within
  // [-max_abs_input, max_abs_input] only; qualification draws no larger inputs (no "huge" or
  // "overflow" value cases). 0: no bound.
  double max_abs_input = 0.0;
};

struct TimingPolicy {
  enum class L2 { flush, rotate, warm };
  std::vector<std::int64_t> sizes;  // element counts
  L2 l2 = L2::flush;
  std::vector<std::string> modes{"single"};  // single, graph
  int min_rounds = 10;
  int max_rounds = 200;
  double max_seconds = 30.0;  // per size, all arms together
  double warmup_ms = 50.0;    // per arm and size
  // Hold the stream with a blocking kernel while each CUDA sample is enqueued (kq run
  // --no-blocking-kernel turns it off; not a spec field).
  bool blocking_kernel = true;
  // Where a CUDA arm is timed beside them, CPU arms are timed only at sizes whose call is
  // expected within this budget (kq run --cpu-budget; 0: every size). Not a spec field.
  double cpu_call_budget_s = 0.05;
};

struct DecisionRule {
  // The arms to compare against, in order of preference (`baseline: a` or `baseline: [a, b]`):
  // the first that qualified and was timed is the run's baseline.
  std::vector<std::string> baselines;
  // The eager arms (`eager: torch_eager` or a list, the same way; optional, [] when absent):
  // each candidate's speed-up is also stated against the first that qualified and was timed,
  // beside its speed-up against the baseline. A win over eager execution alone may disappear
  // against the compiled baseline; the decision says both.
  std::vector<std::string> eager;
  double min_speedup = 1.03;  // a win smaller than this, or inside the noise, is no win
};

// "nvrtc_jit", or "torch_compile, else nvrtc_jit".
inline std::string baseline_text(const DecisionRule& d) {
  std::string t;
  for (const auto& b : d.baselines) t += (t.empty() ? "" : ", else ") + b;
  return t;
}

// "torch_eager", or "" when the spec names none.
inline std::string eager_text(const DecisionRule& d) {
  std::string t;
  for (const auto& e : d.eager) t += (t.empty() ? "" : ", else ") + e;
  return t;
}

struct Spec {
  OpSpec op;  // op.compare: how outputs are compared with the reference
  QualificationExtras qualification;
  TimingPolicy timing;
  DecisionRule decision;
  // Format 2 (`kq_spec: 2`, shaped operations): the contract over dims. Then `op` holds the
  // name, description, the tensors' names, the program (op.program, shared with shaped), compute,
  // domain and layouts; `timing` the policy without sizes and `qualification` no extra sizes.
  std::optional<ShapedContract> shaped;
  std::string path;    // the file it was read from
  std::string text;    // its exact contents
  std::string sha256;  // of `text`
};

// Every spec problem is reported as one of these; what() is "file:line:column: field: message".
class SpecError : public std::runtime_error {
 public:
  SpecError(std::string file, int line, int column, std::string field, std::string message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }                   // 1-based
  int column() const { return column_; }               // 1-based
  const std::string& field() const { return field_; }  // dotted path, e.g. "timing.sizes[2]"
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string field_;
  std::string message_;
};

// A spec file larger than this is refused before it is read or parsed.
inline constexpr std::size_t kMaxSpecBytes = std::size_t{1} << 20;

// Reads and validates a spec file. Throws SpecError (also for an unreadable file, at 0:0).
// Hostile text is refused with a position, in bounded time and memory: see parse_spec.
Spec load_spec(const std::filesystem::path& file);
// The same from text; `file` is used in error messages only. Before YAML parses it, the text
// must be at most kMaxSpecBytes of UTF-8 without NUL or other control characters (tab, CR and
// LF aside); the YAML must be one document, nest at most 32 levels, hold at most 10000 nodes and
// no anchors or aliases. Only then is it read as a spec.
Spec parse_spec(const std::string& text, const std::string& file);

}  // namespace kq
