// Holds a stream while the host enqueues one sample (start event, the call, stop event), so that
// the events time the GPU's work and not the host's enqueue: nvbench's blocking kernel. Without
// it, a call whose host side outlasts the L2 flush before it (cuDNN's enqueue takes 20-60 us)
// is timed with part of that enqueue in, by a margin that changes from run to run.
//
// A one-thread kernel spins on a flag in mapped host memory until release() sets it. It gives up
// after a timeout: a call that waits for the GPU itself (a stream synchronize inside run())
// would otherwise deadlock against it. held() says whether the last block lasted until release.
#pragma once

namespace kq {

class BlockingKernel {
 public:
  explicit BlockingKernel(double timeout_s);
  BlockingKernel(const BlockingKernel&) = delete;
  BlockingKernel& operator=(const BlockingKernel&) = delete;
  ~BlockingKernel();

  bool usable() const { return flags_ != nullptr; }  // mapped host memory was available
  void block(void* stream);                          // enqueues the spin kernel
  void release();                                    // lets it finish
  // After the stream has been synchronised: false when the last block gave up on its timeout.
  bool held() const;

 private:
  volatile int* flags_ = nullptr;  // [0] released (host writes), [1] timed out (device writes)
  int* device_flags_ = nullptr;
  unsigned long long timeout_ns_;
};

}  // namespace kq
