// A reference (a dense host array, with its accumulation bounds where the output is compared by
// them) made comparable with outputs on a CUDA device, so that the timing loop checks a large
// output where it lies. Whole where device memory allows: one upload, then each check is a
// kernel. Where the arms' buffers leave no room for it (a 6.4 GB output beside four arms' sets),
// it is streamed through a small device buffer at each check, a chunk at a time, from the host
// arrays pinned once (cudaHostRegister): a chunk is then one DMA at PCIe speed, where
// downloading the output through the staging ring and comparing it on the host took ~3 s a
// check at 6.4 GB on the H100.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "device/check_kernels.hpp"
#include "device/memory.hpp"
#include "kq/op_spec.hpp"
#include "kq/tensor.hpp"
#include "util/copy_blocks.hpp"

namespace kq {

struct ReferenceCopyShape {
  bool whole = true;  // try a whole copy first, where it leaves `headroom` free on the device
  // for the arms' calls after their warm-up (a caching allocator that grows, say)
  std::size_t headroom = std::size_t{1} << 30;
  std::size_t chunk = std::size_t{256} << 20;       // the streaming buffers' bytes, at most
  std::size_t least_chunk = std::size_t{16} << 20;  // ... and at least (tests make both small)
};

class ReferenceCopy {
 public:
  ReferenceCopy() = default;
  ReferenceCopy(ReferenceCopy&&) noexcept;
  ReferenceCopy& operator=(ReferenceCopy&&) noexcept;
  ~ReferenceCopy();

  // The copy of `n` elements of `dtype` at `host`, and of their bounds at `bounds` (one double
  // each) where given. Both are read again at each streamed check: they must stay where they
  // are and outlive the copy. Empty where the device has no memory even for the smallest chunk;
  // `why` then says so. Throws a sticky CudaError.
  static ReferenceCopy make(const unsigned char* host, const double* bounds, std::int64_t n,
                            DType dtype, std::string* why, const ReferenceCopyShape& shape = {});

  bool usable() const { return host_ != nullptr; }
  bool streamed() const { return usable() && per_chunk_ < n_; }
  bool has_bounds() const { return bounds_ != nullptr; }
  // "whole", or "streamed in chunks of 22369621 elements from pinned memory" (or "through the
  // staging ring", where the host arrays could not be pinned).
  std::string how() const;

  // Elements [first, first + count) of the host arrays changed: a whole copy takes them again.
  void changed(std::size_t first, std::size_t count);
  // The same for a block's rows (one pitched copy); what else it covers is copied unchanged.
  void changed(const CopyBlock& block);

  // Elements [0, n) of `got` (dense, on the device) against the reference, on `stream`: by
  // `by_bound` where given (the copy must hold bounds), else by `rule`. The same scan as
  // devcheck's over a whole copy.
  devcheck::Scan compare(const void* got, std::int64_t n, const CompareRule& rule,
                         const devcheck::BoundRule* by_bound, void* stream) const;

 private:
  void release();
  const unsigned char* host_ = nullptr;
  const double* bounds_ = nullptr;
  std::int64_t n_ = 0;
  std::int64_t per_chunk_ = 0;  // elements the device arrays hold: n_ where whole
  DType dtype_ = DType::f32;
  DeviceMemory values_, bound_values_;  // on the device: whole, or the streaming buffers
  bool pinned_ = false;                 // the host arrays registered with CUDA (streamed only)
};

}  // namespace kq
