#include "worker/roster.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace kq {

std::vector<std::string> read_roster(int fd, const std::function<void()>& alive,
                                     double interval_s) {
  std::string text;
  char chunk[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(interval_s * 1e3));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw std::runtime_error(std::string("roster: poll failed: ") + std::strerror(errno));
    if (n == 0) {
      alive();
      continue;
    }
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw std::runtime_error(std::string("roster: read failed: ") + std::strerror(errno));
    if (got == 0) break;
    text.append(chunk, static_cast<std::size_t>(got));
  }
  ::close(fd);
  std::vector<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) names.push_back(line);
  return names;
}

bool send_roster(int fd, const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += n + "\n";
  bool ok = true;
  for (std::size_t done = 0; done < text.size();) {
    // A worker that died leaves no reader: EPIPE, not a SIGPIPE that would end kq.
    const ssize_t w = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      ok = false;
      break;
    }
    done += static_cast<std::size_t>(w);
  }
  ::close(fd);
  return ok;
}

}  // namespace kq
