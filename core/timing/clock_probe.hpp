// The SM clock a sample ran at, read as nvbench does: a one-thread kernel enqueued right after
// the sample reads clock64() and %globaltimer at both ends of a short spin; cycles over
// nanoseconds is the clock. Without CUDA, or where the probe cannot run, it reports 0.
#pragma once

namespace kq {

class ClockProbe {
 public:
  ClockProbe();
  ClockProbe(const ClockProbe&) = delete;
  ClockProbe& operator=(const ClockProbe&) = delete;
  ~ClockProbe();
  // Enqueues the probe on `stream`, waits for it, and returns the SM clock in MHz (0 if unknown).
  double measure_mhz(void* stream);

 private:
  unsigned long long* host_ = nullptr;  // mapped pinned memory the kernel writes
};

}  // namespace kq
