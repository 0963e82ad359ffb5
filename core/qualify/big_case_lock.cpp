#include "qualify/big_case_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace kq {

void name_big_case_turns(const std::filesystem::path& log_dir) {
  std::filesystem::create_directories(log_dir);
  ::setenv(kBigCaseLockEnv, (log_dir / "big-case.lock").c_str(), 1);
}

BigCaseLock::BigCaseLock(Device device, const std::function<void()>& heartbeat) {
  const char* base = std::getenv(kBigCaseLockEnv);
  if (base == nullptr || *base == '\0') return;
  const char* gpu = std::getenv(kBigCaseGpuEnv);
  const std::string path =
      std::string(base) + (device != Device::cuda   ? ".cpu"
                           : gpu != nullptr && *gpu ? ".cuda-" + std::string(gpu)
                                                    : ".cuda");
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw std::runtime_error("cannot open the big-case lock " + path + ": " + std::strerror(errno));
  auto last = std::chrono::steady_clock::now();
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      const int e = errno;
      ::close(fd_);
      fd_ = -1;
      throw std::runtime_error("cannot lock " + path + ": " + std::strerror(e));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (std::chrono::steady_clock::now() - last > std::chrono::seconds(3)) {
      last = std::chrono::steady_clock::now();
      heartbeat();
    }
  }
}

BigCaseLock::~BigCaseLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the file releases the lock
}

}  // namespace kq
