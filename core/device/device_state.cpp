#include "device/device_state.hpp"

#include <cstdio>

#include "device/cuda_check.hpp"

namespace kq {

#if KQ_HAVE_CUDA
namespace {

std::size_t limit(cudaLimit l) {
  std::size_t v = 0;
  // A limit the device does not have reads as 0 both times: never a change.
  if (cudaDeviceGetLimit(&v, l) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return v;
}

}  // namespace
#endif

DeviceState read_device_state(void* stream) {
  DeviceState s;
#if KQ_HAVE_CUDA
  s.persisting_l2 = limit(cudaLimitPersistingL2CacheSize);
  s.l2_fetch_granularity = limit(cudaLimitMaxL2FetchGranularity);
  cudaFuncCache cache = cudaFuncCachePreferNone;
  cuda_check(cudaDeviceGetCacheConfig(&cache), "cudaDeviceGetCacheConfig");
  s.cache_config = static_cast<int>(cache);
  if (!stream) return s;
  auto st = static_cast<cudaStream_t>(stream);
  cudaStreamAttrValue p{};
  cuda_check(cudaStreamGetAttribute(st, cudaStreamAttributePriority, &p),
             "cudaStreamGetAttribute (priority)");
  s.priority = p.priority;
  cudaStreamAttrValue v{};
  cuda_check(cudaStreamGetAttribute(st, cudaStreamAttributeAccessPolicyWindow, &v),
             "cudaStreamGetAttribute (access-policy window)");
  s.window_bytes = v.accessPolicyWindow.num_bytes;
  s.window_base = v.accessPolicyWindow.base_ptr;
  s.hit_ratio = v.accessPolicyWindow.hitRatio;
  s.hit_property = static_cast<int>(v.accessPolicyWindow.hitProp);
  s.miss_property = static_cast<int>(v.accessPolicyWindow.missProp);
#else
  (void)stream;
#endif
  return s;
}

const DeviceState& expected_device_state() {
  static const DeviceState want = [] {
#if KQ_HAVE_CUDA
    // A context may start with a set-aside (11.25 MiB on the H200 with driver 580): kq wants
    // none, and then holds every arm to what the device keeps.
    if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0) != cudaSuccess) cudaGetLastError();
    cudaStream_t s = nullptr;
    cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    DeviceState d = read_device_state(s);
    cudaStreamDestroy(s);
#else
    DeviceState d = read_device_state(nullptr);
#endif
    return d;
  }();
  return want;
}

namespace {

std::string text(std::size_t v) { return std::to_string(v); }

void clause(std::string& out, const char* what, const std::string& from, const std::string& to) {
  if (from == to) return;
  out += (out.empty() ? "" : "; ") + std::string(what) + " from " + from + " to " + to;
}

std::string window(const DeviceState& s) {
  if (s.window_bytes == 0) return "none";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%zu bytes at %p, hit ratio %.2f, hit property %d, miss %d",
                s.window_bytes, s.window_base, static_cast<double>(s.hit_ratio), s.hit_property,
                s.miss_property);
  return buf;
}

}  // namespace

std::string device_state_changes(const DeviceState& want, const DeviceState& got) {
  std::string out;
  clause(out, "the persisting-L2 set-aside (cudaLimitPersistingL2CacheSize)",
         text(want.persisting_l2) + " bytes", text(got.persisting_l2) + " bytes");
  clause(out, "the L2 fetch granularity (cudaLimitMaxL2FetchGranularity)",
         text(want.l2_fetch_granularity) + " bytes", text(got.l2_fetch_granularity) + " bytes");
  clause(out, "the device's cache configuration (cudaDeviceSetCacheConfig)",
         std::to_string(want.cache_config), std::to_string(got.cache_config));
  clause(out, "the priority of kq's stream", std::to_string(want.priority),
         std::to_string(got.priority));
  clause(out, "the access-policy window of kq's stream", window(want), window(got));
  return out;
}

void reset_persisting_l2() {
#if KQ_HAVE_CUDA
  cuda_check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
#endif
}

void restore_device_state(const DeviceState& want, void* stream) {
#if KQ_HAVE_CUDA
  const DeviceState got = read_device_state(stream);
  if (got.persisting_l2 != want.persisting_l2)
    cuda_check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, want.persisting_l2),
               "restoring the persisting-L2 set-aside");
  if (got.l2_fetch_granularity != want.l2_fetch_granularity)
    cuda_check(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, want.l2_fetch_granularity),
               "restoring the L2 fetch granularity");
  if (got.cache_config != want.cache_config)
    cuda_check(cudaDeviceSetCacheConfig(static_cast<cudaFuncCache>(want.cache_config)),
               "restoring the cache configuration");
  if (stream) {
    auto st = static_cast<cudaStream_t>(stream);
    cudaStreamAttrValue v{};
    v.accessPolicyWindow.base_ptr = const_cast<void*>(want.window_base);
    v.accessPolicyWindow.num_bytes = want.window_bytes;
    v.accessPolicyWindow.hitRatio = want.hit_ratio;
    v.accessPolicyWindow.hitProp = static_cast<cudaAccessProperty>(want.hit_property);
    v.accessPolicyWindow.missProp = static_cast<cudaAccessProperty>(want.miss_property);
    cuda_check(cudaStreamSetAttribute(st, cudaStreamAttributeAccessPolicyWindow, &v),
               "restoring the stream's access-policy window");
    if (got.priority != want.priority) {
      cudaStreamAttrValue p{};
      p.priority = want.priority;
      cuda_check(cudaStreamSetAttribute(st, cudaStreamAttributePriority, &p),
                 "restoring the stream's priority");
    }
  }
  reset_persisting_l2();
#else
  (void)want;
  (void)stream;
#endif
}

std::string check_device_state(void* stream) {
#if KQ_HAVE_CUDA
  // Under capture (a graph being recorded from the call) the next call's check will tell.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (stream)
    cuda_check(cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture),
               "cudaStreamIsCapturing");
  if (capture != cudaStreamCaptureStatusNone) return {};
  const DeviceState& want = expected_device_state();
  std::string changed = device_state_changes(want, read_device_state(stream));
  if (!changed.empty()) restore_device_state(want, stream);
  return changed;
#else
  (void)stream;
  return {};
#endif
}

}  // namespace kq
