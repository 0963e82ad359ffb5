// Stream discipline: every kernel, copy and set that one call of an arm launches must run on
// the stream kq gave it, or on a stream the call forks from that stream and joins back to it
// (with events) before returning. Work anywhere else (the legacy default stream, the per-thread
// stream, the arm's own stream not joined back) escapes the events that time the call and the
// synchronisation that checks it.
//
// CUPTI names each activity's stream. Where some ran elsewhere, one call is captured into a CUDA
// graph from kq's stream: a fork joined back is captured whole, work left on another stream is
// not, so a capture holding fewer work nodes than the call launched convicts it. Work another
// thread launched meanwhile is told apart, and judged by the caller.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace kq {

struct StreamCheck {
  nlohmann::json profile;  // profile_call's record for the call
  std::string problem;     // empty when the call kept to its stream (or CUPTI cannot tell)
  // Work other threads launched while the call ran (empty when none, or CUPTI cannot tell):
  // not the call's, so never its problem; the process's (device/kernel_profile.hpp).
  std::string other_threads;
};

// Profiles one call (CUPTI stays attached: the caller detaches it with detach_profiler()) and,
// where activities ran on other streams, captures one more call to see whether they are joined.
StreamCheck check_stream_discipline(void* stream, const std::function<void()>& call);

}  // namespace kq
