// Without CUDA there is no SM clock to read.
#if !KQ_HAVE_CUDA
#include "timing/clock_probe.hpp"

namespace kq {
ClockProbe::ClockProbe() = default;
ClockProbe::~ClockProbe() = default;
double ClockProbe::measure_mhz(void*) { return 0; }
}  // namespace kq
#endif
