// The plan an earlier search chose, remembered on disk so that another process (the timing
// worker after qualification, the next run) tries it first instead of searching again: each
// plan finalize is an NVRTC compile, and a search at a large size took 7 to 10 s on the H200.
// The entry is only a hint: the search still runs and checks the remembered plan, and searches
// as before when it no longer builds, runs or checks out. Pure standard library.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace kq::cudnn_graph {

struct PlanChoice {
  std::string shaping;
  std::int64_t engine = -1;
  std::string knobs;
  bool operator==(const PlanChoice&) const = default;
};

// The folder: $KQ_CACHE_DIR/cudnn, else $XDG_CACHE_HOME/kq/cudnn, else ~/.cache/kq/cudnn; empty
// when none of them is set.
std::string plan_memo_dir();

// The file of one problem in `dir`: its name hashes `key` (every input of the search: the
// spec's fingerprint, the element count, the alignment, the cuDNN version, the GPU).
std::string plan_memo_path(const std::string& dir, const std::string& key);

// The choice stored at `path` for exactly `key`; nullopt when absent, unreadable or another
// key's.
std::optional<PlanChoice> load_plan_choice(const std::string& path, const std::string& key);

// Writes the choice (to a temporary name, then renamed); false when it could not.
bool store_plan_choice(const std::string& path, const std::string& key, const PlanChoice& c);

}  // namespace kq::cudnn_graph
