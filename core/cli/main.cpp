#include <cstdio>
#include "util/version.hpp"
int main() { std::printf("kq %s\n", kq::kq_version()); }
