#include "device/reference_copy.hpp"

#include <algorithm>
#include <utility>

#include "device/cuda_check.hpp"
#include "device/staged_copy.hpp"

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
#endif

}  // namespace

ReferenceCopy::ReferenceCopy(ReferenceCopy&& o) noexcept
    : host_(std::exchange(o.host_, nullptr)),
      bytes_(std::exchange(o.bytes_, 0)),
      dtype_(o.dtype_),
      device_(std::move(o.device_)),
      pinned_(std::exchange(o.pinned_, false)) {}

ReferenceCopy& ReferenceCopy::operator=(ReferenceCopy&& o) noexcept {
  if (this != &o) {
    release();
    host_ = std::exchange(o.host_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    dtype_ = o.dtype_;
    device_ = std::move(o.device_);
    pinned_ = std::exchange(o.pinned_, false);
  }
  return *this;
}

ReferenceCopy::~ReferenceCopy() { release(); }

void ReferenceCopy::release() {
#if KQ_HAVE_CUDA
  // The host array stays the caller's: only its registration ends here.
  if (pinned_) cudaHostUnregister(const_cast<unsigned char*>(host_));
#endif
  pinned_ = false;
  host_ = nullptr;
  device_ = DeviceMemory();
}

ReferenceCopy ReferenceCopy::make(const unsigned char* host, std::size_t bytes, DType dtype,
                                  std::string* why, const ReferenceCopyShape& shape) {
  ReferenceCopy r;
#if KQ_HAVE_CUDA
  if (shape.whole) r.device_ = try_alloc(bytes);
  if (r.device_.data()) {
    r.device_.upload(host, 0, bytes);
  } else {
    // A chunk is a whole number of elements, and no larger than the array.
    const std::size_t es = dtype_size(dtype);
    std::size_t chunk = std::min(shape.chunk, bytes) / es * es;
    const std::size_t least = std::max(std::min(shape.least_chunk, chunk) / es * es, es);
    for (; chunk >= least && !r.device_.data(); chunk /= 2) r.device_ = try_alloc(chunk / es * es);
    if (!r.device_.data()) {
      if (why)
        *why = "no device memory for the reference's " + megabytes(bytes) + ", nor a " +
               megabytes(least) + " chunk of it";
      return r;
    }
    // Pinned, each chunk is one DMA; where it cannot be (a locked-memory limit), the chunks go
    // through the staging ring. The failed call's error is cleared, or an arm's next launch
    // check would report it.
    r.pinned_ = cudaHostRegister(const_cast<unsigned char*>(host), bytes,
                                 cudaHostRegisterDefault) == cudaSuccess;
    if (!r.pinned_) (void)cudaGetLastError();
  }
  r.host_ = host;
  r.bytes_ = bytes;
  r.dtype_ = dtype;
#else
  (void)host, (void)bytes, (void)dtype, (void)shape;
  if (why) *why = "this kq was built without CUDA";
#endif
  return r;
}

std::string ReferenceCopy::how() const {
  if (!usable()) return "none";
  if (!streamed()) return "whole";
  return "streamed in " + megabytes(device_.size()) + " chunks " +
         (pinned_ ? "from pinned memory" : "through the staging ring");
}

void ReferenceCopy::changed(std::size_t offset, std::size_t bytes) {
  if (usable() && !streamed()) device_.upload(host_ + offset, offset, bytes);
}

devcheck::Scan ReferenceCopy::compare(const void* got, std::int64_t n, const CompareRule& rule,
                                      void* stream) const {
  devcheck::Scan total;
#if KQ_HAVE_CUDA
  if (!streamed()) return devcheck::compare_elements(got, device_.data(), n, dtype_, rule, stream);
  const std::size_t es = dtype_size(dtype_);
  const auto per_chunk = static_cast<std::int64_t>(device_.size() / es);
  auto st = static_cast<cudaStream_t>(stream);
  for (std::int64_t at = 0; at < n; at += per_chunk) {
    const std::int64_t count = std::min(per_chunk, n - at);
    const std::size_t offset = static_cast<std::size_t>(at) * es;
    const std::size_t bytes = static_cast<std::size_t>(count) * es;
    // compare_elements waits for its result: the buffer is free again when it returns.
    if (pinned_)
      cuda_check(cudaMemcpyAsync(device_.data(), host_ + offset, bytes, cudaMemcpyHostToDevice, st),
                 "a streamed reference chunk's upload");
    else
      staged_upload(device_.data(), host_ + offset, bytes, st);
    const devcheck::Scan s =
        devcheck::compare_elements(static_cast<const unsigned char*>(got) + offset, device_.data(),
                                   count, dtype_, rule, stream);
    if (s.count > 0 && total.first < 0) total.first = at + s.first;
    total.count += s.count;
  }
#else
  (void)got, (void)n, (void)rule, (void)stream;
#endif
  return total;
}

}  // namespace kq
