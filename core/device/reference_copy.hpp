// A reference (a dense host array) made comparable with outputs on a CUDA device, so that the
// timing loop checks a large output where it lies. Whole where device memory allows: one upload,
// then each check is a kernel. Where the arms' buffers leave no room for it (a 6.4 GB output
// beside four arms' sets), it is streamed through a small device buffer at each check, a chunk
// at a time, from the host array pinned once (cudaHostRegister): a chunk is then one DMA at
// PCIe speed, where downloading the output through the staging ring and comparing it on the
// host took ~3 s a check at 6.4 GB on the H100.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "device/check_kernels.hpp"
#include "device/memory.hpp"
#include "kq/op_spec.hpp"
#include "kq/tensor.hpp"

namespace kq {

struct ReferenceCopyShape {
  bool whole = true;                                // try a whole copy first
  std::size_t chunk = std::size_t{256} << 20;       // the streaming buffer's bytes, at most
  std::size_t least_chunk = std::size_t{16} << 20;  // ... and at least (tests make both small)
};

class ReferenceCopy {
 public:
  ReferenceCopy() = default;
  ReferenceCopy(ReferenceCopy&&) noexcept;
  ReferenceCopy& operator=(ReferenceCopy&&) noexcept;
  ~ReferenceCopy();

  // The copy of `host` (`bytes` of elements of `dtype`, read again at each streamed check: it
  // must stay where it is, and outlive the copy). Empty where the device has no memory even for
  // the smallest chunk; `why` then says so. Throws a sticky CudaError.
  static ReferenceCopy make(const unsigned char* host, std::size_t bytes, DType dtype,
                            std::string* why, const ReferenceCopyShape& shape = {});

  bool usable() const { return host_ != nullptr; }
  bool streamed() const { return usable() && device_.size() < bytes_; }
  bool pinned() const { return pinned_; }
  // "whole", "streamed in 256 MB chunks from pinned memory" or "... through the staging ring".
  std::string how() const;

  // The host array's bytes [offset, offset + bytes) changed: a whole copy takes them again.
  void changed(std::size_t offset, std::size_t bytes);

  // Elements [0, n) of `got` (dense, on the device) against the reference by `rule`, on
  // `stream`: the same scan as devcheck::compare_elements over a whole copy.
  devcheck::Scan compare(const void* got, std::int64_t n, const CompareRule& rule,
                         void* stream) const;

 private:
  void release();
  const unsigned char* host_ = nullptr;
  std::size_t bytes_ = 0;
  DType dtype_ = DType::f32;
  DeviceMemory device_;  // the whole copy, or the streaming buffer
  bool pinned_ = false;  // host_ registered with CUDA (streamed copies only)
};

}  // namespace kq
