// One arm's qualification shared by several workers side by side (qualify_stage's shards_for),
// for the arms that compile as they go: torch.compile builds every static shape anew,
// max-autotune tunes each, Triton JITs each kernel. The workers take the plan's cases a shape
// at a time (case_claims.hpp) and their verdicts merge into one.
//
// The arm starts with a few workers; while it runs, one more joins where the machine has room
// (the other arms done) and the cases left would outlast the new worker's start twice over. A
// new worker's start, to the end of its first case, costs what it cost the others
// (torch.compile's first case: 15 to 30 s in a new process on the H100's host), its later
// cases what theirs did: both are measured in the run.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "qualify/qualify_arm.hpp"
#include "record/records.hpp"

namespace kq {

// How an arm's cases have gone so far, from its workers' case records.
struct ShardPace {
  double first_max_s = 0;  // the longest from a worker's start to its first case's end
  double rest_s = 0;       // the cases after each worker's first: their seconds, their count
  int rest_n = 0;
  int done = 0;  // every case ended
};

// Whether one more worker would end the arm sooner: the cases left, at the mean seconds of a
// case after a worker's first, shared by one more than the `running` workers, outlast twice
// the longest time a worker took from its start to its first case's end (the process, the
// plugin, the first compile). Three cases after a first at least, before anything is
// concluded.
bool more_workers_pay(const ShardPace& pace, std::size_t plan_cases, int running);

// Starts worker `number` (0 the first) on the arm, taking its cases through `claims`, and
// returns its verdict, its records passed to `record` (verdicts included) as they come.
using RunShard = std::function<rec::VerdictRecord(int number, const std::filesystem::path& claims,
                                                  const Emit& record)>;

struct SharedArmOptions {
  int workers = 2;       // at the start: the first alone, the others once it has begun a case
  int max_workers = 16;  // with those that join
  std::vector<std::string> case_order;  // the plan's cases in order
  std::size_t shape_groups = 0;         // shape_groups(plan).size()
  std::filesystem::path claims;         // the counter file (made here, removed at the end)
  // Whether the machine has room for one more worker now; empty: none joins.
  std::function<bool()> room;
  double check_every_s = 1.0;  // how often joining is considered
};

// Runs the arm's workers and returns the merged verdict (also passed to `record`). An arm that
// declines the spec (most of a plugin's arms, for most specs) costs one worker. Rethrows a
// worker's failure to start.
rec::VerdictRecord run_shared_arm(const SharedArmOptions& opt, const RunShard& run,
                                  const Emit& record);

// The verdict of an arm whose cases were shared: a crash or hang first, then the rejection by
// the case that comes first in the plan, then a worker's verdict never judged (unsupported,
// tampering...), else qualified; the counts and stages summed, the total the plan's.
rec::VerdictRecord merge_shards(const std::vector<rec::VerdictRecord>& shards,
                                const std::vector<std::string>& case_order);

}  // namespace kq
