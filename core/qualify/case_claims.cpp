#include "qualify/case_claims.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

namespace kq {

namespace {

using Counter = std::atomic_ref<std::uint64_t>;
static_assert(Counter::is_always_lock_free, "the counter is shared by processes: lock-free only");

std::runtime_error file_error(const char* what, const std::filesystem::path& file) {
  return std::runtime_error(std::string("case claims: cannot ") + what + " " + file.string() +
                            ": " + std::strerror(errno));
}

}  // namespace

std::vector<std::vector<std::size_t>> shape_groups(const std::vector<Case>& cases) {
  std::vector<std::vector<std::size_t>> groups;
  std::map<std::vector<std::int64_t>, std::size_t> group_of;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const auto [it, added] = group_of.emplace(c.dims.empty() ? c.shape : c.dims, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

void CaseClaims::create(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw file_error("create", file);
  const bool sized = ::ftruncate(fd, sizeof(std::uint64_t)) == 0;  // zero-filled
  ::close(fd);
  if (!sized) throw file_error("size", file);
}

std::uint64_t CaseClaims::taken(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw file_error("open", file);
  void* p = ::mmap(nullptr, sizeof(std::uint64_t), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw file_error("map", file);
  const std::uint64_t n = Counter(*static_cast<std::uint64_t*>(p)).load();
  ::munmap(p, sizeof(std::uint64_t));
  return n;
}

CaseClaims::CaseClaims(const std::filesystem::path& file, const std::vector<Case>& cases)
    : groups_(shape_groups(cases)) {
  const int fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw file_error("open", file);
  void* p = ::mmap(nullptr, sizeof(std::uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);  // the mapping stays
  if (p == MAP_FAILED) throw file_error("map", file);
  counter_ = static_cast<std::uint64_t*>(p);
}

CaseClaims::~CaseClaims() { ::munmap(counter_, sizeof(std::uint64_t)); }

std::optional<std::size_t> CaseClaims::next() {
  if (holding_ && taken_ < groups_[group_].size()) return groups_[group_][taken_++];
  const std::uint64_t g = Counter(*counter_).fetch_add(1);
  holding_ = g < groups_.size();
  if (!holding_) return std::nullopt;
  group_ = static_cast<std::size_t>(g);
  taken_ = 1;
  return groups_[group_].front();
}

}  // namespace kq
