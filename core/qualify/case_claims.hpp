// The cases of one arm shared by several workers side by side (qualify_stage's shards), taken
// a group at a time as each worker gets to them. A group is the plan's cases of one shape: an
// arm that compiles per shape (torch.compile, Triton's JIT, max-autotune's tuning) compiles
// each shape in one worker, where a case-by-case split had every worker compile the shapes
// that many cases share; and a worker that ends its groups early takes more, where a fixed
// split waited for the slowest. The workers count through the groups with one atomic counter
// in a small file that each maps.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "plan/case.hpp"

namespace kq {

// The plan's cases by shape (a format-2 case's dims, else its shape), each group in the plan's
// order and the groups in the order of their first case.
std::vector<std::vector<std::size_t>> shape_groups(const std::vector<Case>& cases);

class CaseClaims {
 public:
  // Makes the counter file, at zero, before the workers that share it start.
  static void create(const std::filesystem::path& file);
  // How many groups the workers have taken so far (past the last group: every one).
  static std::uint64_t taken(const std::filesystem::path& file);

  // One worker's view; every worker sharing the file must be given the same cases.
  CaseClaims(const std::filesystem::path& file, const std::vector<Case>& cases);
  ~CaseClaims();
  CaseClaims(const CaseClaims&) = delete;
  CaseClaims& operator=(const CaseClaims&) = delete;

  // The position in `cases` of this worker's next case: the rest of its group, then the first
  // of the next group no worker has taken; none once every group is taken.
  std::optional<std::size_t> next();

 private:
  std::vector<std::vector<std::size_t>> groups_;
  std::uint64_t* counter_ = nullptr;  // in the mapped file
  std::size_t group_ = 0;             // the group being worked through
  std::size_t taken_ = 0;             // of its cases
  bool holding_ = false;
};

}  // namespace kq
