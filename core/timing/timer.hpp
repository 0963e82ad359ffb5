// Times one call of an arm: device events around it on the arm's stream (CUDA), or a steady
// clock (CPU, whose run() returns when done). A CUDA timer can hold its stream with a blocking
// kernel while a sample is enqueued (timing/blocking_kernel.hpp), so that the events see the
// GPU's work without the host's enqueue, which is measured apart.
#pragma once
#include <functional>
#include <memory>

#include "kq/tensor.hpp"

namespace kq {

class BlockingKernel;

class SampleTimer {
 public:
  // hold: hold the stream while each sample is enqueued (CUDA only). A held sample whose
  // enqueue outlasts hold_timeout_s is let go by the GPU and reported by last_held().
  SampleTimer(Device device, void* stream, bool hold = false, double hold_timeout_s = 0.5);
  SampleTimer(const SampleTimer&) = delete;
  SampleTimer& operator=(const SampleTimer&) = delete;
  ~SampleTimer();
  // Seconds `call` took (it must enqueue its work on the stream given at construction).
  double time(const std::function<void()>& call);
  // Whether the stream is held while samples are enqueued, and whether the last sample's hold
  // lasted until its stop event was enqueued.
  bool holding() const { return hold_ != nullptr; }
  bool last_held() const { return last_held_; }
  // For a call that waits for the GPU itself: it would run into every hold's timeout.
  void stop_holding();

 private:
  Device device_;
  void* stream_;
  void* start_ = nullptr;
  void* stop_ = nullptr;
  std::unique_ptr<BlockingKernel> hold_;
  bool last_held_ = false;
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
