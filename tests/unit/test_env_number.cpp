// kq's numeric KQ_* settings (util/env_number.hpp): digits only, else as if unset.
#include <doctest/doctest.h>

#include <cstdlib>

#include "util/env_number.hpp"

TEST_CASE("a setting is a whole number from 0 up, or it is not set") {
  const char* name = "KQ_TEST_ENV_NUMBER";
  ::unsetenv(name);
  CHECK_FALSE(kq::env_number(name).has_value());
  for (const char* bad : {"", "-1", " 1", "1 ", "12ab", "0x10", "1e3", "99999999999999999999999"}) {
    ::setenv(name, bad, 1);
    CHECK_MESSAGE(!kq::env_number(name).has_value(), "'" << bad << "'");
  }
  ::setenv(name, "0", 1);
  CHECK(kq::env_number(name) == 0u);
  ::setenv(name, "1048576", 1);
  CHECK(kq::env_number(name) == 1048576u);
  ::setenv(name, "18446744073709551615", 1);
  CHECK(kq::env_number(name) == 18446744073709551615ull);
  ::unsetenv(name);
}
