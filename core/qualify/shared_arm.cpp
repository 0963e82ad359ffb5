#include "qualify/shared_arm.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "qualify/case_claims.hpp"

namespace kq {

using nlohmann::json;

bool more_workers_pay(const ShardPace& pace, std::size_t plan_cases, int running) {
  if (pace.rest_n < 3 || running < 1) return false;
  const double left = static_cast<double>(plan_cases) - pace.done;
  const double mean = pace.rest_s / pace.rest_n;
  return left * mean / (running + 1) > 2.0 * pace.first_max_s;
}

rec::VerdictRecord merge_shards(const std::vector<rec::VerdictRecord>& shards,
                                const std::vector<std::string>& case_order) {
  auto position = [&](const rec::VerdictRecord& v) {
    auto it = std::find(case_order.begin(), case_order.end(), v.case_name.value_or(""));
    return it - case_order.begin();
  };
  auto rank = [](rec::Verdict v) {
    return v == rec::Verdict::crashed || v == rec::Verdict::hung ? 0
           : v == rec::Verdict::rejected                         ? 1
           : v == rec::Verdict::qualified                        ? 3
                                                                 : 2;
  };
  const rec::VerdictRecord* pick = &shards.front();
  for (const rec::VerdictRecord& v : shards)
    if (rank(v.verdict) < rank(pick->verdict) ||
        (rank(v.verdict) == 1 && rank(pick->verdict) == 1 && position(v) < position(*pick)))
      pick = &v;
  rec::VerdictRecord out = *pick;
  out.counts.reset();
  out.stages.reset();
  auto sum = [](auto& into, const auto& part) {
    if (!part) return;
    if (!into) into.emplace();
    *into += *part;
  };
  for (const rec::VerdictRecord& v : shards) {
    sum(out.counts, v.counts);
    sum(out.stages, v.stages);
  }
  // Each worker counts the cases it took; a worker that crashed left the rest to the others,
  // or untaken: the arm's total is the plan's.
  if (out.counts) out.counts->total = static_cast<int>(case_order.size());
  return out;
}

rec::VerdictRecord run_shared_arm(const SharedArmOptions& opt, const RunShard& run,
                                  const Emit& record) {
  std::mutex mu;
  std::condition_variable cv;
  bool began = false;  // the first worker has begun a case
  int ended = 0;       // workers ended
  ShardPace pace;
  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> started;  // by worker, until its first case ended
  std::vector<bool> had_first;             // by worker
  // Each worker's slot; a deque, so that joining workers never move the others'.
  std::deque<rec::VerdictRecord> verdicts;
  std::deque<std::exception_ptr> failures;
  std::vector<std::thread> threads;

  auto watch = [&](int k, const json& j) {  // (mu held)
    if (rec::is<rec::CaseStart>(j)) began = true;
    if (!rec::is<rec::CaseResult>(j)) return;
    const double s = j.value("seconds", 0.0);
    ++pace.done;
    const auto w = static_cast<std::size_t>(k);
    if (!had_first[w]) {  // what a new worker costs: its start (process, plugin) and first case
      had_first[w] = true;
      const double since = std::chrono::duration<double>(Clock::now() - started[w]).count();
      pace.first_max_s = std::max(pace.first_max_s, std::max(since, s));
    } else {
      pace.rest_s += s;
      ++pace.rest_n;
    }
  };
  auto start = [&](int k) {  // (mu held)
    verdicts.emplace_back();
    failures.emplace_back();
    had_first.push_back(false);
    started.push_back(Clock::now());
    threads.emplace_back([&, k] {
      const Emit mine = [&, k](const json& j) {
        {
          std::lock_guard lock(mu);
          watch(k, j);
          cv.notify_all();
        }
        if (!rec::is<rec::VerdictRecord>(j)) record(j);
      };
      rec::VerdictRecord v;
      std::exception_ptr failure;
      try {
        v = run(k, opt.claims, mine);
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard lock(mu);
      verdicts[static_cast<std::size_t>(k)] = std::move(v);
      failures[static_cast<std::size_t>(k)] = failure;
      ++ended;
      cv.notify_all();
    });
  };
  auto groups_left = [&] { return CaseClaims::taken(opt.claims) < opt.shape_groups; };

  CaseClaims::create(opt.claims);
  std::exception_ptr stopped;  // no more workers: the ones running end as they would
  try {
    std::unique_lock lock(mu);
    start(0);
    cv.wait(lock, [&] { return began || ended == 1; });
    if (began)
      for (int k = 1; k < opt.workers; ++k) start(k);
    const auto every = std::chrono::duration<double>(opt.check_every_s);
    while (ended < static_cast<int>(threads.size())) {
      cv.wait_for(lock, every);
      const int running = static_cast<int>(threads.size()) - ended;
      if (began && running > 0 && static_cast<int>(threads.size()) < opt.max_workers && opt.room &&
          more_workers_pay(pace, opt.case_order.size(), running) && groups_left() && opt.room())
        start(static_cast<int>(threads.size()));
    }
  } catch (...) {
    stopped = std::current_exception();
  }
  for (std::thread& t : threads) t.join();
  std::filesystem::remove(opt.claims);
  if (stopped) std::rethrow_exception(stopped);
  for (const std::exception_ptr& f : failures)
    if (f) std::rethrow_exception(f);
  rec::VerdictRecord merged = merge_shards(
      std::vector<rec::VerdictRecord>(verdicts.begin(), verdicts.end()), opt.case_order);
  record(merged);
  return merged;
}

}  // namespace kq
