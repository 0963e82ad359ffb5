// The stream a CUDA arm runs on (nullptr for CPU arms). Non-blocking, so that it never waits
// for work an arm left on another stream: the host's copies use their own stream too, and a
// result that an arm is still computing elsewhere shows up as wrong values, as it would for a
// caller.
#pragma once
#include "kq/tensor.hpp"

namespace kq {

class Stream {
 public:
  explicit Stream(Device device);
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  void* handle() const { return handle_; }
  Device device() const { return device_; }
  // Waits for the stream and reports the last launch error (throws CudaError).
  void synchronize(const char* what) const;

 private:
  Device device_;
  void* handle_ = nullptr;
};

// The host's own non-blocking stream for copies and fills (created on first use).
void* host_copy_stream();

}  // namespace kq
