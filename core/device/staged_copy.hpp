// Big copies between pageable host memory and a CUDA allocation, through a small ring of pinned
// staging buffers. A pageable cudaMemcpy runs at a fraction of PCIe speed, and a case's inputs
// and outputs are gigabytes; the source may be read-only (a sealed memfd's mapping), so it can
// be neither written nor registered with CUDA. Here the host copies one chunk between the caller's
// memory and a pinned buffer, on several cores at once, while the previous chunk's DMA runs.
#pragma once
#include <cstddef>

#if KQ_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "util/copy_blocks.hpp"

namespace kq {

struct StagingShape {
  // Copies of at most this many bytes go straight (one cudaMemcpyAsync): staging them would
  // gain little and cost the ring's setup.
  std::size_t threshold = std::size_t{32} << 20;
  // Bytes per DMA; at most the staging buffers' size (kStagingBufferBytes), smaller for tests.
  std::size_t chunk = std::size_t{16} << 20;
};

inline constexpr std::size_t kStagingBufferBytes = std::size_t{16} << 20;
inline constexpr int kStagingBuffers = 4;

// Copies `bytes` to the device and waits for them. `host` is only read. Where no pinned memory
// can be had, or the copy is small, it is one plain cudaMemcpyAsync on `stream`. Throws
// CudaError naming the failed call. Thread-safe: one staged copy at a time per process.
void staged_upload(void* dev, const void* host, std::size_t bytes, cudaStream_t stream,
                   const StagingShape& shape = {});
// The same, from the device to the host.
void staged_download(void* host, const void* dev, std::size_t bytes, cudaStream_t stream,
                     const StagingShape& shape = {});

// A block's rows (util/copy_blocks.hpp) of elements of `element_bytes`, at the same positions
// of `host` and `dev` (arrays of one layout): one pitched copy (cudaMemcpy2D), or a staged one
// where the block is one row. Both wait for the copy and throw CudaError naming it.
void block_upload(void* dev, const void* host, const CopyBlock& block, std::size_t element_bytes,
                  cudaStream_t stream);
// The block's rows from `dev` to `dense`, laid end to end there (CopyBlock::dense_index).
void block_download(void* dense, const void* dev, const CopyBlock& block, std::size_t element_bytes,
                    cudaStream_t stream);

}  // namespace kq
#endif
