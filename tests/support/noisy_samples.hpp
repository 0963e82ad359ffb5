// Synthetic timing samples for the tests of the statistics, the stopping rule and the decision.
#pragma once
#include <random>
#include <vector>

namespace kq::test {

// n samples uniformly within +-rel of center, from a seeded generator.
inline std::vector<double> noisy(double center, double rel, int n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-rel, rel);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * (1 + u(g)));
  return v;
}

}  // namespace kq::test
