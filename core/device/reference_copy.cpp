#include "device/reference_copy.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "device/cuda_check.hpp"
#include "device/staged_copy.hpp"
#include "device/stream.hpp"

namespace kq {

namespace {

std::string megabytes(std::size_t bytes) { return std::to_string(bytes / 1000000) + " MB"; }

#if KQ_HAVE_CUDA
// An allocation of `bytes`, or an empty one where the device has no memory for it.
DeviceMemory try_alloc(std::size_t bytes) {
  try {
    return DeviceMemory(Device::cuda, bytes);
  } catch (const CudaError& e) {
    if (e.sticky()) throw;
    return DeviceMemory();
  }
}

// Registers `bytes` at `p` with CUDA; false (the error cleared, or an arm's next launch check
// would report it) where it cannot be (a locked-memory limit, say).
bool pin(const void* p, std::size_t bytes) {
  if (cudaHostRegister(const_cast<void*>(p), bytes, cudaHostRegisterDefault) == cudaSuccess)
    return true;
  (void)cudaGetLastError();
  return false;
}

// `bytes` from the host to the device on `stream`, waited for: one DMA from pinned memory, else
// through the staging ring.
void put(void* dev, const void* host, std::size_t bytes, bool pinned, cudaStream_t stream) {
  if (!pinned) return staged_upload(dev, host, bytes, stream);
  cuda_check(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, stream),
             "a streamed reference chunk's upload");
  cuda_check(cudaStreamSynchronize(stream), "a streamed reference chunk's upload");
}
#endif

}  // namespace

ReferenceCopy::ReferenceCopy(ReferenceCopy&& o) noexcept { *this = std::move(o); }

ReferenceCopy& ReferenceCopy::operator=(ReferenceCopy&& o) noexcept {
  if (this != &o) {
    release();
    host_ = std::exchange(o.host_, nullptr);
    bounds_ = std::exchange(o.bounds_, nullptr);
    n_ = std::exchange(o.n_, 0);
    per_chunk_ = std::exchange(o.per_chunk_, 0);
    dtype_ = o.dtype_;
    values_ = std::move(o.values_);
    bound_values_ = std::move(o.bound_values_);
    pinned_ = std::exchange(o.pinned_, false);
  }
  return *this;
}

ReferenceCopy::~ReferenceCopy() { release(); }

void ReferenceCopy::release() {
#if KQ_HAVE_CUDA
  // The host arrays stay the caller's: only their registration ends here.
  if (pinned_) {
    cudaHostUnregister(const_cast<unsigned char*>(host_));
    if (bounds_) cudaHostUnregister(const_cast<double*>(bounds_));
  }
#endif
  pinned_ = false;
  host_ = nullptr;
  bounds_ = nullptr;
  values_ = DeviceMemory();
  bound_values_ = DeviceMemory();
}

ReferenceCopy ReferenceCopy::make(const unsigned char* host, const double* bounds, std::int64_t n,
                                  DType dtype, std::string* why, const ReferenceCopyShape& shape) {
  ReferenceCopy r;
#if KQ_HAVE_CUDA
  const std::size_t es = dtype_size(dtype);
  const std::size_t per_element = es + (bounds ? sizeof(double) : 0);
  const auto count = static_cast<std::size_t>(std::max<std::int64_t>(n, 1));  // allocated
  // Whole, else the largest chunk from shape.chunk down to shape.least_chunk (halving) that fits.
  auto fit = [&](std::size_t elements) {
    r.values_ = try_alloc(elements * es);
    if (r.values_.data() && bounds) r.bound_values_ = try_alloc(elements * sizeof(double));
    if (r.values_.data() && (!bounds || r.bound_values_.data())) return true;
    r.values_ = DeviceMemory();
    r.bound_values_ = DeviceMemory();
    return false;
  };
  std::size_t free = 0, total = 0;
  cuda_check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo for the reference's copy");
  std::size_t elements = count;
  bool fits = shape.whole && count * per_element + shape.headroom <= free && fit(elements);
  const std::size_t least = std::clamp<std::size_t>(shape.least_chunk / per_element, 1, count);
  for (elements = std::clamp<std::size_t>(shape.chunk / per_element, least, count);
       !fits && elements >= least; elements /= 2)
    fits = fit(elements);
  if (!fits) {
    if (why)
      *why = "no device memory for the reference's " + megabytes(count * per_element) + ", nor a " +
             megabytes(least * per_element) + " chunk of it";
    return r;
  }
  r.host_ = host;
  r.bounds_ = bounds;
  r.n_ = n;
  r.per_chunk_ = static_cast<std::int64_t>(r.values_.size() / es);
  r.dtype_ = dtype;
  if (!r.streamed()) {
    r.changed(0, static_cast<std::size_t>(n));
    return r;
  }
  // Pinned, each chunk is one DMA; where either array cannot be, the chunks are staged.
  const auto all = static_cast<std::size_t>(n);
  r.pinned_ = pin(host, all * es);
  if (r.pinned_ && bounds && !pin(bounds, all * sizeof(double))) {
    cudaHostUnregister(const_cast<unsigned char*>(host));
    r.pinned_ = false;
  }
#else
  (void)host, (void)bounds, (void)n, (void)dtype, (void)shape;
  if (why) *why = "this kq was built without CUDA";
#endif
  return r;
}

std::string ReferenceCopy::how() const {
  if (!usable()) return "none";
  if (!streamed()) return "whole";
  return "streamed in chunks of " + std::to_string(per_chunk_) + " elements " +
         (pinned_ ? "from pinned memory" : "through the staging ring");
}

void ReferenceCopy::changed(std::size_t first, std::size_t count) {
  changed(CopyBlock{first, count, 1, count, {}});
}

void ReferenceCopy::changed(const CopyBlock& block) {
  if (!usable() || streamed()) return;  // streamed: read from the host at each check
  if (block.first + (block.rows - 1) * block.pitch + block.width > static_cast<std::size_t>(n_))
    throw std::out_of_range("a reference copy's change past its end");
#if KQ_HAVE_CUDA
  auto stream = static_cast<cudaStream_t>(host_copy_stream());
  block_upload(values_.data(), host_, block, dtype_size(dtype_), stream);
  if (bounds_) block_upload(bound_values_.data(), bounds_, block, sizeof(double), stream);
#endif
}

devcheck::Scan ReferenceCopy::compare(const void* got, std::int64_t n, const CompareRule& rule,
                                      const devcheck::BoundRule* by_bound, void* stream) const {
  if (by_bound && !bounds_)
    throw std::logic_error("a reference compared by the bound was copied without its bounds");
  devcheck::Scan total;
#if KQ_HAVE_CUDA
  const std::size_t es = dtype_size(dtype_);
  auto st = static_cast<cudaStream_t>(stream);
  auto scan = [&](std::int64_t at, std::int64_t count) {
    const void* g = static_cast<const unsigned char*>(got) + static_cast<std::size_t>(at) * es;
    if (by_bound)
      return devcheck::compare_bounded(g, values_.data(),
                                       static_cast<const double*>(bound_values_.data()), count,
                                       dtype_, *by_bound, stream);
    return devcheck::compare_elements(g, values_.data(), count, dtype_, rule, stream);
  };
  if (!streamed()) return scan(0, n);
  for (std::int64_t at = 0; at < n; at += per_chunk_) {
    const std::int64_t count = std::min(per_chunk_, n - at);
    const auto from = static_cast<std::size_t>(at), k = static_cast<std::size_t>(count);
    // Each scan waits for its result: the buffers are free again when it returns.
    put(values_.data(), host_ + from * es, k * es, pinned_, st);
    if (by_bound) put(bound_values_.data(), bounds_ + from, k * sizeof(double), pinned_, st);
    const devcheck::Scan s = scan(at, count);
    if (s.count > 0 && total.first < 0) total.first = at + s.first;
    total.count += s.count;
  }
#else
  (void)got, (void)n, (void)rule, (void)stream;
#endif
  return total;
}

}  // namespace kq
