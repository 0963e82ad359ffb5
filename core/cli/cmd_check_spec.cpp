#include <iostream>

#include "cli/common.hpp"
#include "cli/print_shaped.hpp"
#include "expr/parser.hpp"
#include "spec/spec.hpp"

namespace kq::cli {

int cmd_check_spec(const std::vector<std::string>& args) {
  po::options_description opts("check-spec options");
  opts.add_options()("spec", po::value<std::vector<std::string>>()->required(), "spec file(s)");
  po::positional_options_description pos;
  pos.add("spec", -1);
  po::variables_map vm;
  if (!parse_subcommand("kq check-spec FILE [FILE...]", opts, pos, args, vm)) return kOk;
  int rc = kOk;
  for (const auto& f : vm["spec"].as<std::vector<std::string>>()) {
    try {
      Spec s = load_spec(f);
      if (s.shaped) {
        std::cout << f << ": ok: " << s.op.op << " (format 2, shaped; computed in "
                  << to_string(s.shaped->compute) << ", " << s.shaped->timing_points.size()
                  << " timing points, baseline " << baseline_text(s.decision)
                  << (s.decision.eager.empty() ? "" : ", eager " + eager_text(s.decision)) << ")\n";
        print_shaped_summary(std::cout, s);
        continue;
      }
      std::cout << f << ": ok: " << s.op.op << " = " << to_text(s.op.semantics, s.op.inputs) << " ("
                << to_string(s.op.dtype)
                << (s.op.compute == s.op.dtype && !s.op.tf32
                        ? ""
                        : ", computed in " +
                              std::string(s.op.tf32 ? "tf32" : to_string(s.op.compute)))
                << ", " << s.op.inputs.size() << " inputs, " << s.timing.sizes.size()
                << " timing sizes, baseline " << baseline_text(s.decision)
                << (s.decision.eager.empty() ? "" : ", eager " + eager_text(s.decision)) << ")\n";
    } catch (const SpecError& e) {
      std::cerr << e.what() << "\n";
      rc = kBadUsage;
    }
  }
  return rc;
}

}  // namespace kq::cli
