#include "device/memory.hpp"

#include <cstring>
#include <stdexcept>
#include <utility>

#include "device/cuda_check.hpp"
#include "device/staged_copy.hpp"
#include "device/stream.hpp"
#include "util/host_buffer.hpp"
#include "util/parallel_copy.hpp"

namespace kq {

DeviceMemory::DeviceMemory(Device device, std::size_t bytes) : device_(device), bytes_(bytes) {
  std::size_t n = bytes == 0 ? 256 : (bytes + 255) / 256 * 256;
  if (device == Device::cpu) {
    try {
      data_ = host_alloc(n);  // large ones in huge pages: util/host_buffer.hpp
    } catch (const std::bad_alloc&) {
      throw std::runtime_error("cannot allocate " + std::to_string(bytes) +
                               " bytes of host memory");
    }
    return;
  }
#if KQ_HAVE_CUDA
  if (const cudaError_t e = cudaMalloc(&data_, n); e != cudaSuccess) {
    // Reported by the exception: cleared, or the next check of the last error (after an arm's
    // launch) would report it as that launch's. A sticky error stays.
    cudaGetLastError();
    data_ = nullptr;
    cuda_check(e, ("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str());
  }
#else
  throw std::runtime_error("this kq was built without CUDA");
#endif
}

DeviceMemory::DeviceMemory(Device device, std::size_t bytes, Fence fence)
    : device_(device), bytes_(bytes) {
  if (fence == Fence::none) {
    *this = DeviceMemory(device, bytes);
    return;
  }
  fenced_ = fenced_alloc(device, bytes, fence);
  data_ = fenced_.data;
}

DeviceMemory::DeviceMemory(DeviceMemory&& o) noexcept
    : device_(o.device_),
      data_(std::exchange(o.data_, nullptr)),
      bytes_(std::exchange(o.bytes_, 0)),
      fenced_(std::exchange(o.fenced_, {})) {}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& o) noexcept {
  if (this != &o) {
    release();
    device_ = o.device_;
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    fenced_ = std::exchange(o.fenced_, {});
  }
  return *this;
}

DeviceMemory::~DeviceMemory() { release(); }

void DeviceMemory::release() {
  if (!data_) return;
  if (fenced_.reserved) {
    fenced_free(device_, fenced_);
    data_ = nullptr;
    return;
  }
  if (device_ == Device::cpu) {
    host_free(data_);
  } else {
#if KQ_HAVE_CUDA
    cudaFree(data_);  // errors here are reported by the next checked call
#endif
  }
  data_ = nullptr;
}

void DeviceMemory::upload(const void* host, std::size_t offset, std::size_t bytes) {
  if (offset + bytes > bytes_) throw std::out_of_range("upload past the end of an allocation");
  if (device_ == Device::cpu) {
    parallel_memcpy(static_cast<char*>(data_) + offset, host, bytes);
    return;
  }
#if KQ_HAVE_CUDA
  staged_upload(static_cast<char*>(data_) + offset, host, bytes,
                static_cast<cudaStream_t>(host_copy_stream()));
#endif
}

void DeviceMemory::download(void* host, std::size_t offset, std::size_t bytes) const {
  if (offset + bytes > bytes_) throw std::out_of_range("download past the end of an allocation");
  if (device_ == Device::cpu) {
    parallel_memcpy(host, static_cast<const char*>(data_) + offset, bytes);
    return;
  }
#if KQ_HAVE_CUDA
  staged_download(host, static_cast<const char*>(data_) + offset, bytes,
                  static_cast<cudaStream_t>(host_copy_stream()));
#endif
}

void DeviceMemory::fill(std::size_t offset, std::size_t bytes, unsigned char value) {
  if (offset + bytes > bytes_) throw std::out_of_range("fill past the end of an allocation");
  if (device_ == Device::cpu) {
    parallel_memset(static_cast<char*>(data_) + offset, value, bytes);
    return;
  }
#if KQ_HAVE_CUDA
  auto s = static_cast<cudaStream_t>(host_copy_stream());
  cuda_check(cudaMemsetAsync(static_cast<char*>(data_) + offset, value, bytes, s), "cudaMemset");
  cuda_check(cudaStreamSynchronize(s), "cudaMemset");
#endif
}

void DeviceMemory::fill_async(std::size_t offset, std::size_t bytes, unsigned char value,
                              void* stream) {
  if (offset + bytes > bytes_) throw std::out_of_range("fill past the end of an allocation");
  if (device_ == Device::cpu) {
    std::memset(static_cast<char*>(data_) + offset, value, bytes);
    return;
  }
#if KQ_HAVE_CUDA
  cuda_check(cudaMemsetAsync(static_cast<char*>(data_) + offset, value, bytes,
                             static_cast<cudaStream_t>(stream)),
             "cudaMemsetAsync (output poison)");
#else
  (void)stream;
#endif
}

bool cuda_usable(std::string* why) {
#if KQ_HAVE_CUDA
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = std::string("no CUDA device (") + cudaGetErrorString(e) + ")";
    return false;
  }
  if (n == 0) {
    if (why) *why = "no CUDA device";
    return false;
  }
  return true;
#else
  if (why) *why = "this kq was built without CUDA";
  return false;
#endif
}

void device_synchronize(Device device, const char* what) {
  if (device == Device::cpu) return;
#if KQ_HAVE_CUDA
  cuda_check(cudaDeviceSynchronize(), what);
  cuda_check(cudaGetLastError(), what);
#else
  (void)what;
#endif
}

}  // namespace kq
