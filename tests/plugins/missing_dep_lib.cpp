// libkq_missing_dep.so: built into a folder that neither the loader, the test's RUNPATH nor
// LD_LIBRARY_PATH knows, so a plugin that needs it cannot be loaded.
extern "C" __attribute__((visibility("default"))) int kq_missing_dep_value() { return 7; }
