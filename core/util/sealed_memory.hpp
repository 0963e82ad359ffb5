// Memory that nobody can change once it is written: a memfd, filled once and then sealed
// against writes, growing and shrinking (F_SEAL_WRITE, F_SEAL_GROW, F_SEAL_SHRINK, F_SEAL_SEAL).
// While it is filled, only kq's own mapping can write it (F_SEAL_FUTURE_WRITE), and no process
// kq starts inherits it.
// The kernel enforces it for every process that holds the descriptor, inherited or not: a write
// through any descriptor or a writable mapping fails. kq shares each qualification case's
// inputs and references this way, so that a worker (and the arm inside it) cannot alter what
// the other workers check against.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

namespace kq {

class SealedMemory {
 public:
  SealedMemory() = default;
  // `bytes` filled by `fill(dst)`, then sealed; throws std::runtime_error naming `name`.
  SealedMemory(const std::string& name, std::size_t bytes,
               const std::function<void(unsigned char*)>& fill);
  // Maps an inherited descriptor read-only, after checking that it is sealed against writes
  // and has `bytes` bytes; throws std::runtime_error otherwise, leaving `fd` alone. Takes
  // ownership of `fd` when it returns.
  static SealedMemory adopt(int fd, std::size_t bytes);
  SealedMemory(SealedMemory&& o) noexcept;
  SealedMemory& operator=(SealedMemory&& o) noexcept;
  SealedMemory(const SealedMemory&) = delete;
  SealedMemory& operator=(const SealedMemory&) = delete;
  ~SealedMemory();

  const unsigned char* data() const { return data_; }
  std::size_t size() const { return bytes_; }
  int fd() const { return fd_; }  // inheritable by the processes kq starts

 private:
  void release();
  int fd_ = -1;
  const unsigned char* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace kq
