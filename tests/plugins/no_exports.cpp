// A plain shared library: it loads, but exports neither kq alias.
extern "C" __attribute__((visibility("default"))) int kq_test_plain_function() { return 42; }
