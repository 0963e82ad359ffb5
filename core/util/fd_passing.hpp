// A short message with at most one open descriptor attached, over a Unix socket (SCM_RIGHTS):
// how a process hands another one a descriptor it did not have when it started.
#pragma once
#include <optional>
#include <string>

namespace kq {

// Sends `text` (one datagram on a SOCK_SEQPACKET socket) with `fd` attached when fd >= 0;
// without `wait`, fails rather than wait for room in the peer's queue. Returns false when the
// peer is gone or the send fails; never raises SIGPIPE.
bool send_with_fd(int socket, const std::string& text, int fd = -1, bool wait = true);

struct ReceivedFd {
  std::string text;
  int fd = -1;            // the attached descriptor (close-on-exec, the receiver's to close), or -1
  bool none_yet = false;  // without `wait`: no message was queued (text empty, fd -1)
};

// The next message: waits for one, or without `wait` returns at once (none_yet) when none is
// queued; nullopt when the peer has closed its end or on an error.
std::optional<ReceivedFd> receive_with_fd(int socket, bool wait = true);

}  // namespace kq
