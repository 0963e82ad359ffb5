// GPU tests of the pinned staging of big copies (core/device/staged_copy.hpp): every size around
// the threshold and the chunk boundaries comes back byte for byte, staged or plain either way,
// from and to misaligned host memory and at an odd device offset, without writing past its
// range; a read-only source (a sealed memfd mapped PROT_READ, as the shared case data is) is
// copied without being written; copies from several threads at once each get their own bytes.
// Small chunks (4 KiB) make many chunks cheap. The speed of a 1 GiB copy each way and each path
// is printed for the GPU host's log, never checked. Without a usable CUDA device the test's
// main skips, saying why.
#include <doctest/doctest.h>

#ifndef KQ_HAVE_CUDA
TEST_CASE("staged copies") { MESSAGE("skipped: no CUDA device (kq was built without CUDA)"); }
#else
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "device/memory.hpp"
#include "device/staged_copy.hpp"
#include "device/stream.hpp"

namespace {

constexpr std::size_t kChunk = 4096;
constexpr std::size_t kThreshold = 4 * kChunk;
const kq::StagingShape kSmallChunks{kThreshold, kChunk};
const kq::StagingShape kPlain{std::numeric_limits<std::size_t>::max(), kChunk};
constexpr std::size_t kGuard = 4096;
constexpr unsigned char kGuardByte = 0x5c;
constexpr std::size_t kDeviceOffset = 7;

std::vector<unsigned char> random_bytes(std::size_t n, std::uint64_t seed) {
  std::vector<unsigned char> v(n);
  std::mt19937_64 g(seed);
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t x = g();
    std::memcpy(v.data() + i, &x, std::min<std::size_t>(8, n - i));
  }
  return v;
}

// The index of the first differing byte, or n.
std::size_t first_difference(const unsigned char* a, const unsigned char* b, std::size_t n) {
  return static_cast<std::size_t>(std::mismatch(a, a + n, b).first - a);
}

bool all_bytes(const unsigned char* p, std::size_t n, unsigned char value) {
  return std::all_of(p, p + n, [&](unsigned char c) { return c == value; });
}

cudaStream_t handle(const kq::Stream& s) { return static_cast<cudaStream_t>(s.handle()); }

// Uploads `n` bytes from `src` with `up` to an odd offset of a guarded device buffer, downloads
// them with `down` into misaligned host memory, and checks the bytes and both sides' guards.
void round_trip(const unsigned char* src, std::size_t n, const kq::StagingShape& up,
                const kq::StagingShape& down, cudaStream_t stream) {
  kq::DeviceMemory m(kq::Device::cuda, kDeviceOffset + n + kGuard);
  m.fill_byte(kGuardByte);
  char* dev = static_cast<char*>(m.data()) + kDeviceOffset;
  kq::staged_upload(dev, src, n, stream, up);

  std::vector<unsigned char> back(n + 3 + kGuard, 0xee);
  kq::staged_download(back.data() + 3, dev, n, stream, down);
  CHECK(first_difference(back.data() + 3, src, n) == n);
  CHECK(all_bytes(back.data(), 3, 0xee));
  CHECK(all_bytes(back.data() + 3 + n, kGuard, 0xee));

  std::vector<unsigned char> whole(m.size());
  REQUIRE(cudaMemcpy(whole.data(), m.data(), m.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(all_bytes(whole.data(), kDeviceOffset, kGuardByte));
  CHECK(all_bytes(whole.data() + kDeviceOffset + n, kGuard, kGuardByte));
}

// A sealed memfd holding `bytes`, mapped read-only: any write through the mapping faults.
struct ReadOnlyBytes {
  int fd = -1;
  void* map = MAP_FAILED;
  std::size_t size = 0;
  explicit ReadOnlyBytes(const std::vector<unsigned char>& bytes) : size(bytes.size()) {
    fd = memfd_create("kq_test_staged_copy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    REQUIRE(fd >= 0);
    std::size_t done = 0;
    while (done < size) {
      const ssize_t w = ::write(fd, bytes.data() + done, size - done);
      REQUIRE(w > 0);
      done += static_cast<std::size_t>(w);
    }
    REQUIRE(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK) == 0);
    map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    REQUIRE(map != MAP_FAILED);
  }
  ~ReadOnlyBytes() {
    if (map != MAP_FAILED) munmap(map, size);
    if (fd >= 0) close(fd);
  }
  const unsigned char* data() const { return static_cast<const unsigned char*>(map); }
};

}  // namespace

TEST_CASE("every size around the threshold and the chunks comes back exactly, either path") {
  kq::Stream stream(kq::Device::cuda);
  const std::size_t sizes[] = {0,
                               1,
                               kChunk - 1,
                               kChunk,
                               kChunk + 1,
                               kThreshold - 1,
                               kThreshold,
                               kThreshold + 1,
                               7 * kChunk + 123,
                               1000 * kChunk + 4095};  // round the ring many times
  const kq::StagingShape* shapes[] = {&kSmallChunks, &kPlain};
  std::uint64_t seed = 1;
  for (std::size_t n : sizes) {
    // One byte in: a misaligned source.
    const std::vector<unsigned char> src = random_bytes(n + 1, seed++);
    for (const kq::StagingShape* up : shapes) {
      for (const kq::StagingShape* down : shapes) {
        CAPTURE(n);
        const bool up_staged = up == &kSmallChunks, down_staged = down == &kSmallChunks;
        CAPTURE(up_staged);
        CAPTURE(down_staged);
        round_trip(src.data() + 1, n, *up, *down, handle(stream));
      }
    }
  }
}

TEST_CASE("a read-only source is copied without being written") {
  kq::Stream stream(kq::Device::cuda);
  // The default shape too: its real chunks, round the ring more than once.
  const std::size_t n = kq::StagingShape{}.threshold +
                        std::size_t{kq::kStagingBuffers + 1} * kq::kStagingBufferBytes + 12345;
  const std::vector<unsigned char> bytes = random_bytes(n + 1, 77);
  ReadOnlyBytes ro(bytes);
  round_trip(ro.data() + 1, 37 * kChunk + 11, kSmallChunks, kPlain, handle(stream));
  round_trip(ro.data() + 1, n, kq::StagingShape{}, kq::StagingShape{}, handle(stream));
  CHECK(first_difference(ro.data(), bytes.data(), bytes.size()) == bytes.size());
}

TEST_CASE("DeviceMemory's big copies come back exactly and agree with plain ones") {
  const std::size_t n = kq::StagingShape{}.threshold + 3 * kq::kStagingBufferBytes + 4097;
  const std::vector<unsigned char> src = random_bytes(n + 5, 5);
  kq::DeviceMemory m(kq::Device::cuda, n + 16);
  m.fill_byte(kGuardByte);
  m.upload(src.data() + 5, 3, n);
  std::vector<unsigned char> staged(n), plain(n);
  m.download(staged.data(), 3, n);
  REQUIRE(cudaMemcpy(plain.data(), static_cast<char*>(m.data()) + 3, n, cudaMemcpyDeviceToHost) ==
          cudaSuccess);
  CHECK(first_difference(staged.data(), src.data() + 5, n) == n);
  CHECK(first_difference(plain.data(), src.data() + 5, n) == n);
}

TEST_CASE("copies from several threads at once each get their own bytes") {
  constexpr int kThreads = 4;
  const std::size_t n = 300 * kChunk + 17;
  std::vector<std::vector<unsigned char> > src, back(kThreads, std::vector<unsigned char>(n));
  for (int t = 0; t < kThreads; ++t) src.push_back(random_bytes(n, 100 + t));
  std::vector<kq::DeviceMemory> dev;
  for (int t = 0; t < kThreads; ++t) dev.emplace_back(kq::Device::cuda, n);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      kq::Stream stream(kq::Device::cuda);
      for (int k = 0; k < 5; ++k) {
        kq::staged_upload(dev[t].data(), src[t].data(), n, handle(stream), kSmallChunks);
        kq::staged_download(back[t].data(), dev[t].data(), n, handle(stream), kSmallChunks);
      }
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    CAPTURE(t);
    CHECK(first_difference(back[t].data(), src[t].data(), n) == n);
  }
}

TEST_CASE("the speed of a 1 GiB copy each way, staged and plain (printed, not checked)") {
  constexpr std::size_t n = std::size_t{1} << 30;
  kq::Stream stream(kq::Device::cuda);
  kq::DeviceMemory m(kq::Device::cuda, n);
  std::vector<unsigned char> host = random_bytes(n, 9), staged(n), plain(n);
  const kq::StagingShape def{};
  const kq::StagingShape straight{std::numeric_limits<std::size_t>::max(), def.chunk};
  // The best of three, after a first copy that pins the ring and warms the pages.
  auto gbps = [&](auto copy) {
    copy();
    double best = 1e30;
    for (int k = 0; k < 3; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      copy();
      best = std::min(best,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return static_cast<double>(n) / best / 1e9;
  };
  auto s = handle(stream);
  const double up_staged = gbps([&] { kq::staged_upload(m.data(), host.data(), n, s, def); });
  const double up_plain = gbps([&] { kq::staged_upload(m.data(), host.data(), n, s, straight); });
  const double down_staged = gbps([&] { kq::staged_download(staged.data(), m.data(), n, s, def); });
  const double down_plain =
      gbps([&] { kq::staged_download(plain.data(), m.data(), n, s, straight); });
  MESSAGE("1 GiB upload: staged " << up_staged << " GB/s, plain " << up_plain << " GB/s");
  MESSAGE("1 GiB download: staged " << down_staged << " GB/s, plain " << down_plain << " GB/s");
  CHECK(first_difference(staged.data(), host.data(), n) == n);
  CHECK(first_difference(plain.data(), host.data(), n) == n);
}
#endif
