#include "qualify/shared_cases.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "qualify/case_data.hpp"
#include "util/env_number.hpp"
#include "util/fd_passing.hpp"
#include "util/host_memory.hpp"

namespace kq {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void log_line(const std::filesystem::path& log, const std::string& line) {
  if (!log.empty()) std::ofstream(log, std::ios::app) << line << "\n";
}

// One case's data in sealed memory, computed now, with its line in `log`; nullopt (and the
// reason in `log`) when it cannot be made, so that each worker computes its own.
std::optional<SealedMemory> seal_case(const Spec& spec, const Case& c, const CaseDataLayout& layout,
                                      const std::filesystem::path& log, const char* when) {
  const auto t0 = Clock::now();
  std::optional<SealedMemory> m;
  std::string line;
  try {
    m.emplace(c.name, layout.total_bytes(),
              [&](unsigned char* dst) { compute_case_data(spec, c, layout, dst); });
    char buf[200];
    std::snprintf(buf, sizeof buf, "case %s: %zu bytes in %.2f ms%s", c.name.c_str(),
                  layout.total_bytes(), 1e3 * seconds_since(t0), when);
    line = buf;
  } catch (const std::exception& e) {
    line = "case " + c.name + ": not shared (" + e.what() + "): each worker computes its own";
  }
  log_line(log, line);
  return m;
}

// Calls `take` for each case of `cases` with data, once per name, in order, while the total
// stays within `budget_bytes`; a case past it is named in `log` and left to the workers.
void within_budget(const Spec& spec, const std::vector<Case>& cases, std::uint64_t budget_bytes,
                   const std::filesystem::path& log,
                   const std::function<void(const Case&, const CaseDataLayout&)>& take) {
  std::set<std::string> seen;
  std::uint64_t used = 0;
  for (const Case& c : cases) {
    if (!seen.insert(c.name).second) continue;
    const CaseDataLayout layout(spec, c);
    if (layout.total_bytes() == 0) continue;  // no elements: nothing to share
    if (used + layout.total_bytes() > budget_bytes) {
      log_line(log, "case " + c.name + ": " + std::to_string(layout.total_bytes()) +
                        " bytes, past the budget: each worker computes its own");
      continue;
    }
    used += layout.total_bytes();
    take(c, layout);
  }
}

// Between the items of a --case-data argument. Case names hold commas (the points of format-2
// specs: "point/M=127,N=65,K=257"), never a semicolon.
constexpr const char* kItemSeparator = ";";

// What the feed tells a worker of a case that became ready ("name\nbytes", the descriptor
// attached) or will not be ("name\nnone").
std::string message(const std::string& name, const SealedMemory* m) {
  return name + "\n" + (m != nullptr ? std::to_string(m->size()) : "none");
}

}  // namespace

std::uint64_t shared_cases_budget() {
  return env_number("KQ_SHARED_CASES_BYTES").value_or(available_host_bytes() / 2);
}

std::uint64_t late_case_bytes() {
  return env_number("KQ_LATE_CASE_BYTES").value_or(kLateCaseBytes);
}

// ---- the cases held, and a worker's view of them

SharedCases SharedCases::compute(const Spec& spec, const std::vector<Case>& cases,
                                 std::uint64_t budget_bytes, const std::filesystem::path& log) {
  SharedCases s;
  within_budget(spec, cases, budget_bytes, log, [&](const Case& c, const CaseDataLayout& layout) {
    if (auto m = seal_case(spec, c, layout, log, "")) s.cases_.emplace(c.name, std::move(*m));
  });
  return s;
}

SharedCases::SharedCases(SharedCases&& o) noexcept
    : cases_(std::move(o.cases_)), coming_(std::move(o.coming_)), socket_(o.socket_) {
  o.socket_ = -1;
}

SharedCases& SharedCases::operator=(SharedCases&& o) noexcept {
  if (this != &o) {
    if (socket_ >= 0) ::close(socket_);
    cases_ = std::move(o.cases_);
    coming_ = std::move(o.coming_);
    socket_ = o.socket_;
    o.socket_ = -1;
  }
  return *this;
}

SharedCases::~SharedCases() {
  if (socket_ >= 0) ::close(socket_);
}

std::string SharedCases::argument() const {
  std::string a;
  for (const auto& [name, m] : cases_)
    a += (a.empty() ? "" : kItemSeparator) + name + "=" + std::to_string(m.fd()) + ":" +
         std::to_string(m.size());
  return a;
}

SharedCases SharedCases::adopt(const std::string& argument) {
  SharedCases s;
  std::istringstream items(argument);
  std::string item;
  while (std::getline(items, item, kItemSeparator[0])) {
    const auto eq = item.rfind('='), colon = item.rfind(':');
    if (eq == std::string::npos || colon == std::string::npos || colon < eq)
      throw std::runtime_error("--case-data: malformed item '" + item + "'");
    const std::string name = item.substr(0, eq), where = item.substr(eq + 1, colon - eq - 1);
    const auto bytes = static_cast<std::size_t>(std::stoull(item.substr(colon + 1)));
    if (name == "@socket") {
      s.socket_ = std::stoi(where);
    } else if (where == "late") {
      s.coming_.emplace(name, bytes);
    } else {
      s.cases_.emplace(name, SealedMemory::adopt(std::stoi(where), bytes));
    }
  }
  if (s.socket_ < 0) s.coming_.clear();  // nothing can come: the worker computes those
  return s;
}

std::uint64_t SharedCases::bytes() const {
  std::uint64_t n = 0;
  for (const auto& [name, m] : cases_) n += m.size();
  return n;
}

const unsigned char* SharedCases::find(const std::string& case_name) const {
  auto it = cases_.find(case_name);
  return it == cases_.end() ? nullptr : it->second.data();
}

void SharedCases::await(const std::string& case_name, const std::function<void()>& waiting) {
  if (coming_.count(case_name) == 0) return;
  const auto t0 = Clock::now();
  const bool asked = send_with_fd(socket_, case_name);
  while (asked && coming_.count(case_name) != 0 && seconds_since(t0) < kAwaitLimitS) {
    pollfd p{socket_, POLLIN, 0};
    const int n = ::poll(&p, 1, 5000);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      if (waiting) waiting();
      continue;
    }
    if (n < 0 || !receive(case_name)) break;
  }
  coming_.erase(case_name);  // arrived, refused, or not coming: the worker computes its own
}

bool SharedCases::receive(const std::string& case_name) {
  const std::optional<ReceivedFd> r = receive_with_fd(socket_);
  if (!r) return false;
  const auto nl = r->text.find('\n');
  const bool ours = nl != std::string::npos && r->text.substr(0, nl) == case_name;
  if (!ours || r->fd < 0) {  // "none", or not an answer to this question
    if (r->fd >= 0) ::close(r->fd);
    if (ours) coming_.erase(case_name);
    return true;
  }
  try {
    cases_.emplace(case_name, SealedMemory::adopt(r->fd, coming_.at(case_name)));
  } catch (const std::exception& e) {
    ::close(r->fd);
    std::cerr << "shared case " << case_name << " not usable (" << e.what()
              << "): this worker computes its own\n";
  }
  coming_.erase(case_name);
  return true;
}

// ---- the stage's side

SharedCaseFeed::SharedCaseFeed(const Spec& spec, const std::vector<Case>& cases,
                               std::uint64_t budget_bytes, const std::filesystem::path& log)
    : spec_(spec), log_(log) {
  const auto t0 = Clock::now();
  const std::uint64_t late_from = late_case_bytes();
  within_budget(spec, cases, budget_bytes, log, [&](const Case& c, const CaseDataLayout& layout) {
    if (layout.total_bytes() >= late_from)
      late_.push_back({c, layout.total_bytes()});
    else if (auto m = seal_case(spec, c, layout, log, ""))
      ready_.cases_.emplace(c.name, std::move(*m));
  });
  early_s_ = seconds_since(t0);
  if (!late_.empty() && ::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error(std::string("pipe for the shared cases' feed: ") +
                             std::strerror(errno));
}

void SharedCaseFeed::start() {
  if (late_.empty() || computer_.joinable()) return;
  computer_ = std::thread([this] { compute_late(); });
  server_ = std::thread([this] { serve(); });
}

SharedCaseFeed::~SharedCaseFeed() {
  finish();
  if (server_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake();
    server_.join();
  }
  for (const auto& [fd, feed] : feeds_) ::close(fd);
  for (int fd : wake_)
    if (fd >= 0) ::close(fd);
}

void SharedCaseFeed::finish() {
  if (computer_.joinable()) computer_.join();
}

void SharedCaseFeed::wake() {
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_[1], &byte, 1);  // full: a wake is pending
}

void SharedCaseFeed::compute_late() {
  const auto t0 = Clock::now();
  for (const Late& l : late_) {
    std::optional<SealedMemory> m =
        seal_case(spec_, l.c, CaseDataLayout(spec_, l.c), log_, ", beside the workers");
    std::lock_guard lock(mu_);
    late_done_[l.c.name] = m.has_value();
    if (m) ready_.cases_.emplace(l.c.name, std::move(*m));
    for (auto& [fd, feed] : feeds_)  // those who asked for it already
      if (std::erase(feed.questions, l.c.name) > 0) answer(fd, l.c.name);
  }
  late_s_ = seconds_since(t0);
}

void SharedCaseFeed::answer(int feed, const std::string& name) {
  const SealedMemory* m = nullptr;
  if (auto it = ready_.cases_.find(name); it != ready_.cases_.end()) m = &it->second;
  // A worker that does not read its answers fills its own socket only: never wait for one.
  send_with_fd(feed, message(name, m), m != nullptr ? m->fd() : -1, /*wait=*/false);
}

void SharedCaseFeed::serve() {
  std::vector<pollfd> polled;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
      polled.assign(1, pollfd{wake_[0], POLLIN, 0});
      for (const auto& [fd, feed] : feeds_)
        if (feed.open) polled.push_back(pollfd{fd, POLLIN, 0});
    }
    if (::poll(polled.data(), polled.size(), -1) < 0 && errno != EINTR) return;
    char drain[64];
    while (::read(wake_[0], drain, sizeof drain) > 0) {
    }
    // What was polled may have been unsubscribed since and its number taken by a new worker's
    // socket, which then has nothing to read yet: a socket subscribed now is read under the
    // lock that subscribe and unsubscribe take, and never waited on, since the lock held here
    // would then stall every worker. What it holds is its own worker's question.
    std::lock_guard lock(mu_);
    for (std::size_t i = 1; i < polled.size(); ++i) {
      const int fd = polled[i].fd;
      auto it = feeds_.find(fd);
      if (polled[i].revents == 0 || it == feeds_.end() || !it->second.open) continue;
      const std::optional<ReceivedFd> q = receive_with_fd(fd, /*wait=*/false);
      if (q && q->none_yet) continue;
      if (!q) {  // the worker is gone: nothing more to answer
        it->second.open = false;
        continue;
      }
      if (q->fd >= 0) ::close(q->fd);  // a question carries no descriptor
      const bool known = std::any_of(late_.begin(), late_.end(),
                                     [&](const Late& l) { return l.c.name == q->text; });
      std::vector<std::string>& asked = it->second.questions;
      if (known && late_done_.count(q->text) == 0) {  // answered when computed, once
        if (std::find(asked.begin(), asked.end(), q->text) == asked.end()) asked.push_back(q->text);
      } else {
        answer(fd, q->text);  // ready, given up, or not one of the stage's cases: "none"
      }
    }
  }
}

std::string SharedCaseFeed::subscribe(int feed_socket, int worker_socket) {
  std::lock_guard lock(mu_);
  std::string a = ready_.argument();
  bool coming = false;
  for (const Late& l : late_) {
    if (late_done_.count(l.c.name)) continue;  // ready (in the argument) or given up
    a += (a.empty() ? "" : kItemSeparator) + l.c.name + "=late:" + std::to_string(l.bytes);
    coming = true;
  }
  if (feed_socket < 0) return a;           // no socket: the worker computes the late cases itself
  feeds_[feed_socket] = Feed{{}, coming};  // held until unsubscribe, asked on only if coming
  if (coming) {
    a += kItemSeparator + std::string("@socket=") + std::to_string(worker_socket) + ":0";
    wake();
  }
  return a;
}

void SharedCaseFeed::unsubscribe(int feed_socket) {
  std::lock_guard lock(mu_);
  if (feeds_.erase(feed_socket) > 0) ::close(feed_socket);
  wake();
}

std::size_t SharedCaseFeed::size() const {
  std::lock_guard lock(mu_);
  return ready_.size();
}

std::uint64_t SharedCaseFeed::bytes() const {
  std::lock_guard lock(mu_);
  return ready_.bytes();
}

std::uint64_t SharedCaseFeed::late_bytes() const {
  std::uint64_t n = 0;
  for (const Late& l : late_) n += l.bytes;
  return n;
}

}  // namespace kq
