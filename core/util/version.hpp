// The kq version and the git commit the binary was built from (generated at build time).
#pragma once

namespace kq {
const char* kq_version();
const char* kq_git_commit();
bool kq_git_dirty();
}  // namespace kq
