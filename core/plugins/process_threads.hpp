// The process's threads (Linux: /proc/self/task), to see what loading a plugin left running. A
// plugin whose load starts a thread runs code beside every arm of every worker that loads it.
#pragma once
#include <set>
#include <string>

namespace kq {

std::set<long> process_threads();

// "N thread(s) still running (name, name)": those of `now` not in `before`; "" for none.
std::string threads_started(const std::set<long>& before, const std::set<long>& now);

}  // namespace kq
