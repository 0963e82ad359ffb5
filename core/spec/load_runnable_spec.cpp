// The one place that keeps format-2 specs away from the pipeline until it runs them: the
// commands and workers that run a spec load it through here.
#include "spec/spec.hpp"

namespace kq {

Spec load_runnable_spec(const std::filesystem::path& file) {
  Spec spec = load_spec(file);
  if (!spec.shaped) return spec;
  throw SpecError(spec.path, spec.shaped->version_line, spec.shaped->version_column, "kq_spec",
                  "format 2 (shaped) specs are not run yet: '" + spec.op.op +
                      "' loads (kq check-spec shows what it declares), but qualification, "
                      "timing and reports of shaped specs are still to come (issue 24)");
}

}  // namespace kq
