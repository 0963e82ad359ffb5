#include "kq/half.hpp"
#include <cstdio>
template <typename F> long check() {
  long bad = 0;
  #pragma omp parallel for reduction(+:bad) schedule(dynamic, 256)
  for (long a = 0; a < 65536; ++a) {
    double x = F::to_double((uint16_t)a); if (std::isnan(x)) continue;
    for (long b = 0; b < 65536; ++b) {
      double y = F::to_double((uint16_t)b); if (std::isnan(y)) continue;
      float s = (float)x + (float)y;  // f32 compute
      double r = (double)s > 0 ? (double)s : 0.0; if (std::isnan(s)) r = s;
      double rr = x + y; double want = rr > 0 ? rr : 0.0; if (std::isnan(rr)) want = rr;
      uint16_t g = F::from_double(r), w = F::from_double(want);
      if (g != w && !(std::isnan(r) && std::isnan(want))) ++bad;
    }
  }
  return bad;
}
int main() { printf("f16 bad %ld\n", check<kq::HalfFormat>()); printf("bf16 bad %ld\n", check<kq::BFloat16Format>()); }
