#include "device/staged_copy.hpp"

#if KQ_HAVE_CUDA
#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <string>

#include "device/cuda_check.hpp"
#include "util/parallel_copy.hpp"

namespace kq {
namespace {

constexpr const char* kToDevice = "cudaMemcpy to the device";
constexpr const char* kFromDevice = "cudaMemcpy from the device";

// A buffer is touched (filled, drained, or given to a DMA) only once its event, recorded after
// its last DMA, has completed; that holds even after a copy that an error cut short.
struct Ring {
  std::array<void*, kStagingBuffers> buffer{};
  std::array<cudaEvent_t, kStagingBuffers> done{};
};

std::mutex ring_mutex;

void release(Ring& r) {
  for (void* p : r.buffer)
    if (p) cudaFreeHost(p);
  for (cudaEvent_t e : r.done)
    if (e) cudaEventDestroy(e);
}

// nullptr where the pinned memory cannot be had (a locked-memory limit, say): the copies are
// then plain ones, slower but the same bytes. The failed allocation's error is cleared, or the
// next cudaGetLastError (after an arm's launch) would report it as the arm's.
Ring* make_ring() {
  auto* r = new Ring;
  for (void*& p : r->buffer) {
    if (cudaHostAlloc(&p, kStagingBufferBytes, cudaHostAllocPortable) != cudaSuccess) {
      p = nullptr;
      (void)cudaGetLastError();
      release(*r);
      delete r;
      return nullptr;
    }
  }
  try {
    for (cudaEvent_t& e : r->done)
      cuda_check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
                 "cudaEventCreate (staging buffers)");
  } catch (...) {
    release(*r);
    delete r;
    throw;
  }
  return r;
}

// Made at the first big copy and kept for the process: pinning takes milliseconds per buffer,
// and freeing at exit would race the CUDA runtime's own teardown. Call with ring_mutex held.
Ring* the_ring() {
  static Ring* ring = make_ring();
  return ring;
}

void plain_copy(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind,
                cudaStream_t stream, const char* what) {
  cuda_check(cudaMemcpyAsync(to, from, bytes, kind, stream), what);
  cuda_check(cudaStreamSynchronize(stream), what);
}

void check_chunk(cudaError_t e, const char* what, std::size_t at, std::size_t bytes) {
  if (e == cudaSuccess) return;
  cuda_check(e, (std::string(what) + " (staged, the chunk at byte " + std::to_string(at) + " of " +
                 std::to_string(bytes) + ")")
                    .c_str());
}

std::size_t chunk_bytes(const StagingShape& shape) {
  return std::clamp<std::size_t>(shape.chunk, 1, kStagingBufferBytes);
}

// The ring for a copy of `bytes`, held in `lock`; nullptr, with nothing held, where the copy
// goes plain: it is at most shape.threshold bytes, or there is no pinned memory.
Ring* staging_ring(std::size_t bytes, const StagingShape& shape,
                   std::unique_lock<std::mutex>& lock) {
  if (bytes <= shape.threshold) return nullptr;
  lock = std::unique_lock(ring_mutex);
  Ring* ring = the_ring();
  if (!ring) lock.unlock();
  return ring;
}

}  // namespace

void staged_upload(void* dev, const void* host, std::size_t bytes, cudaStream_t stream,
                   const StagingShape& shape) {
  std::unique_lock<std::mutex> lock;
  Ring* ring = staging_ring(bytes, shape, lock);
  if (!ring) return plain_copy(dev, host, bytes, cudaMemcpyHostToDevice, stream, kToDevice);
  const std::size_t chunk = chunk_bytes(shape);
  auto* to = static_cast<char*>(dev);
  const auto* from = static_cast<const char*>(host);
  // Filling chunk k's buffer overlaps the DMAs of the chunks before it, still queued.
  for (std::size_t at = 0, k = 0; at < bytes; at += chunk, ++k) {
    const std::size_t n = std::min(chunk, bytes - at);
    const std::size_t b = k % kStagingBuffers;
    check_chunk(cudaEventSynchronize(ring->done[b]), kToDevice, at, bytes);
    parallel_memcpy(ring->buffer[b], from + at, n);
    check_chunk(cudaMemcpyAsync(to + at, ring->buffer[b], n, cudaMemcpyHostToDevice, stream),
                kToDevice, at, bytes);
    check_chunk(cudaEventRecord(ring->done[b], stream), kToDevice, at, bytes);
  }
  cuda_check(cudaStreamSynchronize(stream), kToDevice);
}

void staged_download(void* host, const void* dev, std::size_t bytes, cudaStream_t stream,
                     const StagingShape& shape) {
  std::unique_lock<std::mutex> lock;
  Ring* ring = staging_ring(bytes, shape, lock);
  if (!ring) return plain_copy(host, dev, bytes, cudaMemcpyDeviceToHost, stream, kFromDevice);
  const std::size_t chunk = chunk_bytes(shape);
  const std::size_t chunks = (bytes + chunk - 1) / chunk;
  auto* to = static_cast<char*>(host);
  const auto* from = static_cast<const char*>(dev);
  auto dma = [&](std::size_t k) {
    const std::size_t at = k * chunk, b = k % kStagingBuffers;
    check_chunk(cudaEventSynchronize(ring->done[b]), kFromDevice, at, bytes);
    check_chunk(cudaMemcpyAsync(ring->buffer[b], from + at, std::min(chunk, bytes - at),
                                cudaMemcpyDeviceToHost, stream),
                kFromDevice, at, bytes);
    check_chunk(cudaEventRecord(ring->done[b], stream), kFromDevice, at, bytes);
  };
  // Before chunk k is drained, the DMAs of the next ones are queued into the other buffers
  // (chunk k + buffers - 1 into the one drained just before), so the bus never waits for us.
  std::size_t queued = 0;
  for (std::size_t k = 0; k < chunks; ++k) {
    for (; queued < chunks && queued < k + kStagingBuffers; ++queued) dma(queued);
    const std::size_t at = k * chunk, b = k % kStagingBuffers;
    check_chunk(cudaEventSynchronize(ring->done[b]), kFromDevice, at, bytes);
    parallel_memcpy(to + at, ring->buffer[b], std::min(chunk, bytes - at));
  }
}

void block_upload(void* dev, const void* host, const CopyBlock& block, std::size_t element_bytes,
                  cudaStream_t stream) {
  const std::size_t es = element_bytes, at = block.first * es;
  auto* to = static_cast<char*>(dev) + at;
  const auto* from = static_cast<const char*>(host) + at;
  if (block.rows == 1) return staged_upload(to, from, block.width * es, stream);
  const std::size_t pitch = block.pitch * es;
  cuda_check(cudaMemcpy2DAsync(to, pitch, from, pitch, block.width * es, block.rows,
                               cudaMemcpyHostToDevice, stream),
             "a pitched cudaMemcpy2D to the device");
  cuda_check(cudaStreamSynchronize(stream), "a pitched cudaMemcpy2D to the device");
}

void block_download(void* dense, const void* dev, const CopyBlock& block, std::size_t element_bytes,
                    cudaStream_t stream) {
  const std::size_t es = element_bytes;
  const auto* from = static_cast<const char*>(dev) + block.first * es;
  if (block.rows == 1) return staged_download(dense, from, block.width * es, stream);
  cuda_check(cudaMemcpy2DAsync(dense, block.width * es, from, block.pitch * es, block.width * es,
                               block.rows, cudaMemcpyDeviceToHost, stream),
             "a pitched cudaMemcpy2D from the device");
  cuda_check(cudaStreamSynchronize(stream), "a pitched cudaMemcpy2D from the device");
}

}  // namespace kq
#endif
