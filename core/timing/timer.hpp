// Times one call of an arm: device events around it on the arm's stream (CUDA), or a steady
// clock (CPU, whose run() returns when done).
#pragma once
#include <functional>

#include "kq/tensor.hpp"

namespace kq {

class SampleTimer {
 public:
  SampleTimer(Device device, void* stream);
  SampleTimer(const SampleTimer&) = delete;
  SampleTimer& operator=(const SampleTimer&) = delete;
  ~SampleTimer();
  // Seconds `call` took (it must enqueue its work on the stream given at construction).
  double time(const std::function<void()>& call);

 private:
  Device device_;
  void* stream_;
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

// Evicts the device's L2 (writes a buffer twice its size); a no-op on the host.
class L2Flusher {
 public:
  explicit L2Flusher(Device device);
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  ~L2Flusher();
  void flush(void* stream);
  std::size_t bytes() const { return bytes_; }

 private:
  Device device_;
  void* buffer_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace kq
