// Scattered positions of an array grouped into few copies between the host and a device. A
// timed check patches its reference where fresh inputs changed it: a scan's rest of a row is one
// run of positions, but a product's changed column is M positions N apart, and a random part of
// it where the column costs more than a check evaluates. One copy per run meant thousands of
// calls of a few bytes (some microseconds each) a check; one pitched copy (cudaMemcpy2D) takes
// them all.
//
// A block covers positions nobody asked for (short gaps in a row, rows between wanted ones):
// a call costs about what 64 KiB take to cross the bus, so a few spare bytes are cheaper than
// another call. Spare positions must be safe to copy: the caller's two sides agree there (a
// reference and its device copy), or the caller picks its positions out of what came.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kq {

struct CopyBlock {
  // Rows r = 0 .. rows - 1 of `width` positions from first + r * pitch (pitch == width where
  // rows == 1), all within the array.
  std::size_t first = 0;
  std::size_t width = 0;
  std::size_t rows = 1;
  std::size_t pitch = 0;
  // The positions it takes: at[j] for each j here, increasing.
  std::vector<std::size_t> members;

  std::size_t covered() const { return rows * width; }
  // Where position `i` (first <= i, inside a row) lands in the block's rows laid end to end.
  std::size_t dense_index(std::size_t i) const {
    const std::size_t off = i - first;
    return (off / pitch) * width + off % pitch;
  }
};

struct CopyBlockShape {
  std::size_t spare_bytes = std::size_t{64} << 10;  // a call's worth of bytes
  std::size_t max_pitch_bytes = 2147483647;         // cudaMemcpy2D's (cudaDevAttrMaxPitch)
  // Pitches worth trying, in elements: the array's strides (a row, a plane). Positions are
  // grouped by their remainder modulo each, so that interleaved patterns (two changed columns,
  // and a row across them) keep a block each; the grouping with the fewest blocks is taken.
  std::vector<std::size_t> pitches;
};

// `at`: sorted, distinct positions below `n` (else std::invalid_argument), of elements of
// `element_bytes` each. Every position is one block's member; each block covers at most twice
// its members' bytes plus shape.spare_bytes.
std::vector<CopyBlock> copy_blocks(const std::vector<std::size_t>& at, std::size_t n,
                                   std::size_t element_bytes, const CopyBlockShape& shape = {});

// The strides of a dense row-major array of `shape` above 1, innermost first: the pitches
// worth trying for it.
std::vector<std::size_t> row_major_pitches(const std::vector<std::int64_t>& shape);

}  // namespace kq
