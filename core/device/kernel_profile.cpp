#include "device/kernel_profile.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "device/cuda_check.hpp"
#include "device/toolkit_library.hpp"

#if KQ_HAVE_CUDA
#include <cupti_activity.h>
#endif

namespace kq {

#if KQ_HAVE_CUDA
namespace {

// The CUPTI entry points kq uses, resolved once.
struct Cupti {
  CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                    CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*enable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*disable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*flush_all)(uint32_t) = nullptr;
  CUptiResult (*next_record)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*finalize)() = nullptr;  // optional: without it CUPTI stays attached
  // Optional: without it the profile cannot say which stream each activity ran on.
  CUptiResult (*stream_id)(CUcontext, CUstream, uint8_t, uint32_t*) = nullptr;
  // Optional: without it the profile cannot tell which thread launched each activity.
  CUptiResult (*thread_id_type)(CUpti_ActivityThreadIdType) = nullptr;
  std::string missing;
};

const Cupti& cupti() {
  static const Cupti c = [] {
    Cupti x;
    if (const char* off = std::getenv("KQ_NO_CUPTI"); off != nullptr && *off != '\0') {
      // Another profiler (ncu, tools/crosscheck.py) owns the device's counters.
      x.missing = "KQ_NO_CUPTI is set";
      return x;
    }
    ToolkitLibrary lib("CUPTI",
                       {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/lib64/libcupti.so.13",
                        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"});
    lib.require(x.register_callbacks, "cuptiActivityRegisterCallbacks");
    lib.require(x.enable, "cuptiActivityEnable");
    lib.require(x.disable, "cuptiActivityDisable");
    lib.require(x.flush_all, "cuptiActivityFlushAll");
    lib.require(x.next_record, "cuptiActivityGetNextRecord");
    lib.optional(x.finalize, "cuptiFinalize");
    lib.optional(x.stream_id, "cuptiGetStreamIdEx");
    lib.optional(x.thread_id_type, "cuptiSetThreadIdType");
    x.missing = lib.missing();
    return x;
  }();
  return c;
}

std::mutex g_mu;
std::vector<nlohmann::json> g_records;
std::map<std::uint32_t, std::uint32_t> g_thread_of;  // API call's correlation id -> thread (gettid)
bool g_attached = false;  // callbacks registered since the last cuptiFinalize

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 1 << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  std::lock_guard lock(g_mu);
  while (cupti().next_record(buffer, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      // The record is packed: copy each field out before use.
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
      const int gx = k->gridX, gy = k->gridY, gz = k->gridZ;
      const int bx = k->blockX, by = k->blockY, bz = k->blockZ;
      const int regs = k->registersPerThread;
      const int shared = k->staticSharedMemory + k->dynamicSharedMemory;
      const std::uint64_t t0 = k->start, t1 = k->end;
      const std::uint32_t stream = k->streamId, correlation = k->correlationId;
      const char* name = k->name;
      g_records.push_back({{"kind", "kernel"},
                           {"stream", stream},
                           {"correlation", correlation},
                           {"name", name ? name : "?"},
                           {"grid", {gx, gy, gz}},
                           {"block", {bx, by, bz}},
                           {"registers", regs},
                           {"shared_bytes", shared},
                           {"seconds", static_cast<double>(t1 - t0) * 1e-9}});
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
      const std::uint32_t stream = m->streamId, correlation = m->correlationId;
      g_records.push_back({{"kind", "memcpy"}, {"stream", stream}, {"correlation", correlation}});
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(r);
      const std::uint32_t stream = m->streamId, correlation = m->correlationId;
      g_records.push_back({{"kind", "memset"}, {"stream", stream}, {"correlation", correlation}});
    } else if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME || r->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(r);
      const std::uint32_t correlation = a->correlationId, thread = a->threadId;
      g_thread_of[correlation] = thread;
    }
  }
  std::free(buffer);
}

// The work, then the API calls that launched it (for their threads).
const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                     CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                     CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

}  // namespace

double theoretical_occupancy(int threads, int regs, int shared) {
  int dev = 0;
  cudaDeviceProp p{};
  if (threads <= 0 || cudaGetDevice(&dev) != cudaSuccess ||
      cudaGetDeviceProperties(&p, dev) != cudaSuccess)
    return 0;
  const int warps = (threads + 31) / 32;
  const int max_warps = p.maxThreadsPerMultiProcessor / 32;
  int blocks = std::min(p.maxBlocksPerMultiProcessor, max_warps / warps);
  if (regs > 0) {
    const int regs_per_warp = (regs * 32 + 255) / 256 * 256;  // allocated per warp, 256 at a time
    blocks = std::min(blocks, p.regsPerMultiprocessor / (regs_per_warp * warps));
  }
  if (shared > 0)
    blocks = std::min(
        blocks, static_cast<int>(p.sharedMemPerMultiprocessor /
                                 (static_cast<std::size_t>(shared) + p.reservedSharedMemPerBlock)));
  return static_cast<double>(std::max(blocks, 0) * warps) / max_warps;
}

nlohmann::json profile_call(void* stream, const std::function<void()>& call) {
  const Cupti& c = cupti();
  if (!c.missing.empty()) return {{"unavailable", c.missing}};
  if (!g_attached) {
    if (CUptiResult reg = c.register_callbacks(buffer_requested, buffer_completed);
        reg != CUPTI_SUCCESS)
      return {
          {"unavailable", "cuptiActivityRegisterCallbacks failed (" + std::to_string(reg) + ")"}};
    g_attached = true;
  }
  // Threads as the system names them, so that the caller's is known.
  const bool know_threads = c.thread_id_type != nullptr &&
                            c.thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) == CUPTI_SUCCESS;
  const auto caller = static_cast<std::uint32_t>(syscall(SYS_gettid));
  {
    std::lock_guard lock(g_mu);
    g_records.clear();
    g_thread_of.clear();
  }
  for (auto k : kKinds)
    if (c.enable(k) != CUPTI_SUCCESS) return {{"unavailable", "cuptiActivityEnable failed"}};
  // The stream kq gave the arm, as CUPTI names it in its records.
  std::uint32_t given = 0;
  const bool know_stream =
      c.stream_id != nullptr &&
      c.stream_id(nullptr, static_cast<CUstream>(stream), 0, &given) == CUPTI_SUCCESS;
  {
    // Recording stops however the call ends.
    struct Stop {
      const Cupti& c;
      ~Stop() {
        for (auto k : kKinds) c.disable(k);
        c.flush_all(1);  // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
      }
    } stop{c};
    call();
    // The whole device: work the call put on other streams must be recorded too.
    cuda_check(cudaDeviceSynchronize(), "the profiled call");
  }
  std::vector<nlohmann::json> recs;
  std::map<std::uint32_t, std::uint32_t> thread_of;
  {
    std::lock_guard lock(g_mu);
    recs.swap(g_records);
    thread_of.swap(g_thread_of);
  }
  nlohmann::json out = {{"kernels", 0},
                        {"kernel_seconds", 0.0},
                        {"memcpys", 0},
                        {"memsets", 0},
                        {"list", nlohmann::json::array()}};
  if (know_stream) {
    out["stream_id"] = given;
    out["off_stream"] = 0;
    out["off_stream_kinds"] = nlohmann::json::array();
  }
  if (know_threads) {
    out["other_threads"] = 0;
    out["other_thread_kinds"] = nlohmann::json::array();
  }
  for (auto& r : recs) {
    const std::string kind = r["kind"];
    // Work another thread launched while the call ran is not the call's.
    const auto launcher = thread_of.find(r.value("correlation", 0u));
    r.erase("correlation");
    if (know_threads && launcher != thread_of.end() && launcher->second != caller) {
      out["other_threads"] = out["other_threads"].get<int>() + 1;
      if (out["other_thread_kinds"].size() < 8)
        out["other_thread_kinds"].push_back(
            kind + (kind == "kernel" ? " " + r.value("name", std::string("?")) : "") +
            " from thread " + std::to_string(launcher->second) + " on stream " +
            std::to_string(r.value("stream", 0u)));
      continue;
    }
    if (know_stream && r.value("stream", given) != given) {
      out["off_stream"] = out["off_stream"].get<int>() + 1;
      if (out["off_stream_kinds"].size() < 8)
        out["off_stream_kinds"].push_back(kind + " on stream " +
                                          std::to_string(r.value("stream", 0u)));
    }
    r.erase("stream");
    if (kind == "kernel") {
      out["kernels"] = out["kernels"].get<int>() + 1;
      out["kernel_seconds"] = out["kernel_seconds"].get<double>() + r["seconds"].get<double>();
      const int threads =
          r["block"][0].get<int>() * r["block"][1].get<int>() * r["block"][2].get<int>();
      r["occupancy"] =
          theoretical_occupancy(threads, r["registers"].get<int>(), r["shared_bytes"].get<int>());
      r.erase("kind");
      if (out["list"].size() < 16) out["list"].push_back(r);
    } else if (kind == "memcpy") {
      out["memcpys"] = out["memcpys"].get<int>() + 1;
    } else {
      out["memsets"] = out["memsets"].get<int>() + 1;
    }
  }
  return out;
}

std::string detach_profiler() {
  if (!g_attached) return "";
  const Cupti& c = cupti();
  if (c.finalize == nullptr) return "CUPTI lacks cuptiFinalize: it stays attached";
  c.flush_all(1);
  if (CUptiResult r = c.finalize(); r != CUPTI_SUCCESS)
    return "cuptiFinalize failed (" + std::to_string(r) + "): CUPTI stays attached";
  g_attached = false;
  return "";
}

#else
double theoretical_occupancy(int, int, int) { return 0; }
std::string detach_profiler() { return ""; }
nlohmann::json profile_call(void*, const std::function<void()>&) {
  return {{"unavailable", "this kq was built without CUDA"}};
}
#endif

}  // namespace kq
