#include "device/stream_discipline.hpp"

#include "device/cuda_check.hpp"
#include "device/graph_replay.hpp"
#include "device/kernel_profile.hpp"

namespace kq {

StreamCheck check_stream_discipline(void* stream, const std::function<void()>& call) {
  StreamCheck c;
  c.profile = profile_call(stream, call);
  if (const int other = c.profile.value("other_threads", 0); other > 0) {
    std::string what;
    for (const auto& k : c.profile.value("other_thread_kinds", nlohmann::json::array()))
      what += (what.empty() ? "" : ", ") + k.get<std::string>();
    c.other_threads = std::to_string(other) +
                      " kernels, copies or sets launched by another thread of the process ran "
                      "while the call did (" +
                      what + ")";
  }
  const int off = c.profile.value("off_stream", 0);
  if (off == 0) return c;
  const int launched =
      c.profile.value("kernels", 0) + c.profile.value("memcpys", 0) + c.profile.value("memsets", 0);
  std::string where;
  for (const auto& k : c.profile.value("off_stream_kinds", nlohmann::json::array()))
    where += (where.empty() ? "" : ", ") + k.get<std::string>();
  const std::string ran = std::to_string(off) + " of the " + std::to_string(launched) +
                          " kernels, copies and sets of one call ran off the stream kq gave it (" +
                          where + ")";
  std::string capture;
  try {
    GraphReplay g(stream, call, 1);
    if (g.work_nodes() >= launched) return c;  // forked from kq's stream and joined back
    capture = "a capture of the call from that stream holds " + std::to_string(g.work_nodes()) +
              " of them: that work is not joined back to the caller's stream";
  } catch (const std::exception& e) {
    rethrow_if_sticky(e);
    capture = std::string(
                  "the call cannot be captured from that stream to see whether it is "
                  "joined back (") +
              e.what() + ")";
  }
#if KQ_HAVE_CUDA
  // Work left on other streams by the capture's call runs eagerly: let it finish.
  cuda_check(cudaDeviceSynchronize(), "the captured call's stray work");
#endif
  c.problem = ran + "; " + capture;
  return c;
}

}  // namespace kq
