#include "util/sealed_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace kq {
namespace {

constexpr int kSeals = F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

// A read-only shared mapping of `bytes` of `fd` (nullptr for none).
const unsigned char* map_read_only(int fd, std::size_t bytes, const std::string& what) {
  if (bytes == 0) return nullptr;
  void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) fail("mmap of " + what);
  return static_cast<const unsigned char*>(p);
}

}  // namespace

SealedMemory::SealedMemory(const std::string& name, std::size_t bytes,
                           const std::function<void(unsigned char*)>& fill)
    : bytes_(bytes) {
  // Close-on-exec until it is sealed: a process started meanwhile (by another thread) must not
  // get a descriptor to it.
  fd_ = ::memfd_create(("kq-" + name).c_str(), MFD_ALLOW_SEALING | MFD_CLOEXEC);
  if (fd_ < 0) fail("memfd_create for " + name);
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
    release();
    fail("ftruncate of " + name);
  }
  void* w = nullptr;
  if (bytes > 0) {
    w = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (w == MAP_FAILED) {
      release();
      fail("mmap of " + name);
    }
  }
  // From here on only the mapping above can write, while it fills: a process that reaches the
  // descriptor meanwhile (through /proc/<kq>/fd) can neither write(2) nor map it writable.
  if (::fcntl(fd_, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_GROW | F_SEAL_SHRINK) != 0) {
    if (w != nullptr) ::munmap(w, bytes);
    release();
    fail("sealing " + name + " against other writers");
  }
  if (w != nullptr) {
    fill(static_cast<unsigned char*>(w));
    ::munmap(w, bytes);  // F_SEAL_WRITE needs no writable mapping left
  }
  // Fails (EBUSY) if anyone else still holds a writable mapping, made before the seal above.
  if (::fcntl(fd_, F_ADD_SEALS, kSeals) != 0) {
    release();
    fail("sealing " + name);
  }
  // Sealed: from now on the workers kq starts inherit it.
  if (::fcntl(fd_, F_SETFD, 0) != 0) {
    release();
    fail("making " + name + " inheritable");
  }
  data_ = map_read_only(fd_, bytes, name);
}

SealedMemory SealedMemory::adopt(int fd, std::size_t bytes) {
  const std::string what = "shared case data (descriptor " + std::to_string(fd) + ")";
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & (F_SEAL_WRITE | F_SEAL_SHRINK)) != (F_SEAL_WRITE | F_SEAL_SHRINK))
    throw std::runtime_error(what + " is not sealed against writes");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) != bytes)
    throw std::runtime_error(what + " does not hold " + std::to_string(bytes) + " bytes");
  SealedMemory m;
  m.data_ = map_read_only(fd, bytes, what);
  m.fd_ = fd;  // ours from here on
  m.bytes_ = bytes;
  return m;
}

SealedMemory::SealedMemory(SealedMemory&& o) noexcept
    : fd_(o.fd_), data_(o.data_), bytes_(o.bytes_) {
  o.fd_ = -1;
  o.data_ = nullptr;
  o.bytes_ = 0;
}

SealedMemory& SealedMemory::operator=(SealedMemory&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = o.fd_;
    data_ = o.data_;
    bytes_ = o.bytes_;
    o.fd_ = -1;
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

SealedMemory::~SealedMemory() { release(); }

void SealedMemory::release() {
  if (data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), bytes_);
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  fd_ = -1;
}

}  // namespace kq
