// device/device_state.hpp on the GPU: each setting an arm could change for the arms after it
// (the persisting-L2 set-aside, the L2 fetch granularity, the cache configuration, the stream's
// access-policy window and priority) is seen, named and put back; nothing is read while the
// stream is being captured. Without a usable CUDA device the test's main skips, saying why.
#include <doctest/doctest.h>

#ifndef KQ_HAVE_CUDA
TEST_CASE("device state") { MESSAGE("skipped: no CUDA device (kq was built without CUDA)"); }
#else
#include <cuda_runtime.h>

#include <string>

#include "device/device_state.hpp"

namespace {

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess); }
  ~Stream() { cudaStreamDestroy(s); }
};

int attribute(cudaDeviceAttr a) {
  int dev = 0, v = 0;
  REQUIRE(cudaGetDevice(&dev) == cudaSuccess);
  REQUIRE(cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess);
  return v;
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a fresh stream on an untouched device passes, and keeps passing") {
  Stream st;
  CHECK(kq::check_device_state(st.s) == "");
  kq::reset_persisting_l2();
  CHECK(kq::check_device_state(st.s) == "");
  CHECK(kq::check_device_state(nullptr) == "");
}

TEST_CASE("a persisting-L2 set-aside is named and put back to zero") {
  const int most = attribute(cudaDevAttrMaxPersistingL2CacheSize);
  if (most <= 0) {
    MESSAGE("skipped: this device has no persisting L2 (MIG, or before sm_80)");
    return;
  }
  Stream st;
  const size_t kept = kq::expected_device_state().persisting_l2;  // after kq set it to zero
  MESSAGE("the set-aside kq holds arms to: " << kept << " bytes, of at most " << most);
  REQUIRE(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, static_cast<size_t>(most)) ==
          cudaSuccess);
  size_t now = 0;
  REQUIRE(cudaDeviceGetLimit(&now, cudaLimitPersistingL2CacheSize) == cudaSuccess);
  if (now == kept) {
    MESSAGE("skipped: the device keeps its set-aside at " << kept << " bytes whatever is asked");
    return;
  }
  const std::string changed = kq::check_device_state(st.s);
  INFO(changed);
  CHECK(contains(changed, "cudaLimitPersistingL2CacheSize"));
  CHECK(contains(changed, ("from " + std::to_string(kept) + " bytes to ").c_str()));
  REQUIRE(cudaDeviceGetLimit(&now, cudaLimitPersistingL2CacheSize) == cudaSuccess);
  CHECK(now == kept);
  CHECK(kq::check_device_state(st.s) == "");
}

TEST_CASE("the stream's access-policy window and priority are named and put back") {
  Stream st;
  void* buf = nullptr;
  REQUIRE(cudaMalloc(&buf, 1 << 20) == cudaSuccess);
  cudaStreamAttrValue v{};
  v.accessPolicyWindow.base_ptr = buf;
  v.accessPolicyWindow.num_bytes = 1 << 20;
  v.accessPolicyWindow.hitRatio = 1.0f;
  v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  REQUIRE(cudaStreamSetAttribute(st.s, cudaStreamAttributeAccessPolicyWindow, &v) == cudaSuccess);
  std::string changed = kq::check_device_state(st.s);
  INFO(changed);
  CHECK(contains(changed, "access-policy window of kq's stream from none to 1048576 bytes"));
  cudaStreamAttrValue after{};
  REQUIRE(cudaStreamGetAttribute(st.s, cudaStreamAttributeAccessPolicyWindow, &after) ==
          cudaSuccess);
  CHECK(after.accessPolicyWindow.num_bytes == 0);
  CHECK(kq::check_device_state(st.s) == "");

  int least = 0, greatest = 0;
  REQUIRE(cudaDeviceGetStreamPriorityRange(&least, &greatest) == cudaSuccess);
  if (least != greatest) {
    cudaStreamAttrValue p{};
    p.priority = greatest;
    REQUIRE(cudaStreamSetAttribute(st.s, cudaStreamAttributePriority, &p) == cudaSuccess);
    changed = kq::check_device_state(st.s);
    CHECK(contains(changed, "the priority of kq's stream"));
    CHECK(kq::check_device_state(st.s) == "");
  }
  cudaFree(buf);
}

TEST_CASE("the cache configuration and the L2 fetch granularity are named and put back") {
  Stream st;
  cudaFuncCache was = cudaFuncCachePreferNone;
  REQUIRE(cudaDeviceGetCacheConfig(&was) == cudaSuccess);
  const cudaFuncCache other =
      was == cudaFuncCachePreferShared ? cudaFuncCachePreferL1 : cudaFuncCachePreferShared;
  REQUIRE(cudaDeviceSetCacheConfig(other) == cudaSuccess);
  CHECK(contains(kq::check_device_state(st.s), "cache configuration"));
  cudaFuncCache now = cudaFuncCachePreferNone;
  REQUIRE(cudaDeviceGetCacheConfig(&now) == cudaSuccess);
  CHECK(now == was);

  size_t granularity = 0;
  if (cudaDeviceGetLimit(&granularity, cudaLimitMaxL2FetchGranularity) == cudaSuccess) {
    const size_t changed_to = granularity == 32 ? 128 : 32;
    REQUIRE(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, changed_to) == cudaSuccess);
    size_t read = 0;
    REQUIRE(cudaDeviceGetLimit(&read, cudaLimitMaxL2FetchGranularity) == cudaSuccess);
    if (read != granularity) {  // the driver may round it back to what it had
      CHECK(contains(kq::check_device_state(st.s), "cudaLimitMaxL2FetchGranularity"));
      REQUIRE(cudaDeviceGetLimit(&read, cudaLimitMaxL2FetchGranularity) == cudaSuccess);
      CHECK(read == granularity);
    }
  }
  cudaGetLastError();
  CHECK(kq::check_device_state(st.s) == "");
}

TEST_CASE("nothing is read while the stream is being captured") {
  Stream st;
  cudaGraph_t g = nullptr;
  REQUIRE(cudaStreamBeginCapture(st.s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  CHECK(kq::check_device_state(st.s) == "");
  REQUIRE(cudaStreamEndCapture(st.s, &g) == cudaSuccess);
  cudaGraphDestroy(g);
}
#endif
