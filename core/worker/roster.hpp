// The roster of a timing worker started before qualification ends (timing/early_worker.hpp):
// the parent writes the names of the arms to time, one a line, into a socket and closes it; the
// worker, having warmed every arm it might time, reads them up to end of file. A parent that
// closes the pipe without a name sends an empty roster: nothing to time.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace kq {

// Worker side: blocks until end of file; while it waits, calls `alive` every `interval_s`
// (the parent's silence deadline keeps running). Throws std::runtime_error on a read error.
std::vector<std::string> read_roster(int fd, const std::function<void()>& alive,
                                     double interval_s = 60.0);

// Parent side: writes `names` and closes `fd` (a socket: socketpair(2)). Returns false when the
// worker is gone (its end closed); fd is closed either way.
bool send_roster(int fd, const std::vector<std::string>& names);

}  // namespace kq
