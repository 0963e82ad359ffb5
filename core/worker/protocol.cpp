#include "worker/protocol.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "util/env_number.hpp"

namespace kq {
namespace {

namespace po = boost::program_options;

// The flags of one mode, read by Boost.Program_options: "--name value" options (each may
// repeat) and "--name" switches; anything else (an unknown option, a stray argument, a missing
// value) is a WorkerArgsError.
class ArgReader {
 public:
  ArgReader(const std::vector<std::string>& args, const std::vector<std::string>& options,
            const std::vector<std::string>& switches)
      : switches_(switches) {
    po::options_description d;
    for (const auto& o : options)
      d.add_options()(o.c_str(), po::value<std::vector<std::string>>()->composing(), "");
    for (const auto& sw : switches) d.add_options()(sw.c_str(), po::bool_switch(), "");
    try {
      po::store(po::command_line_parser(args)
                    .options(d)
                    .style(po::command_line_style::default_style &
                           ~po::command_line_style::allow_guessing)
                    .run(),
                vm_);
      po::notify(vm_);
    } catch (const po::error& e) {
      throw WorkerArgsError(e.what());
    }
  }
  bool has(const std::string& name) const {
    if (std::find(switches_.begin(), switches_.end(), name) != switches_.end())
      return vm_[name].as<bool>();
    return vm_.count(name) > 0;
  }
  std::vector<std::string> all(const std::string& name) const {
    return vm_.count(name) ? vm_[name].as<std::vector<std::string>>() : std::vector<std::string>{};
  }
  std::string one(const std::string& name) const {
    auto v = all(name);
    return v.empty() ? std::string() : v.back();
  }
  std::string required(const std::string& name) const {
    if (!has(name)) throw WorkerArgsError("--" + name + " is required");
    return one(name);
  }

 private:
  std::vector<std::string> switches_;
  po::variables_map vm_;
};

std::string encode_sizes(const std::vector<std::int64_t>& sizes) {
  std::string list;
  for (auto n : sizes) list += (list.empty() ? "" : ",") + std::to_string(n);
  return list;
}

std::vector<std::int64_t> decode_sizes(const std::string& list) {
  std::vector<std::int64_t> sizes;
  std::istringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    try {
      sizes.push_back(std::stoll(item, &used));
    } catch (const std::logic_error&) {
      used = 0;
    }
    if (used == 0 || used != item.size()) throw WorkerArgsError("bad size '" + item + "'");
  }
  return sizes;
}

// One --added-point per point, its dim values comma-separated.
void encode_points(const std::vector<Point>& points, std::vector<std::string>& argv) {
  for (const Point& p : points) argv.insert(argv.end(), {"--added-point", encode_sizes(p.dims)});
}

std::vector<Point> decode_points(const std::vector<std::string>& items) {
  std::vector<Point> points;
  for (const auto& item : items) {
    points.push_back({decode_sizes(item)});
    if (points.back().dims.empty()) throw WorkerArgsError("an --added-point without dim values");
  }
  return points;
}

double decode_seconds(const std::string& s) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  if (used == 0 || used != s.size()) throw WorkerArgsError("bad number of seconds '" + s + "'");
  return v;
}

int decode_natural(const std::string& s) {
  const std::optional<std::uint64_t> v = whole_number(s);
  if (!v || *v > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw WorkerArgsError("bad count or descriptor '" + s + "'");
  return static_cast<int>(*v);
}

}  // namespace

std::vector<std::string> QualifyWorkerArgs::to_argv() const {
  std::vector<std::string> argv = {"--spec", spec, "--plugin", plugin, "--arm", arm};
  if (quick) argv.push_back("--quick");
  if (!timing_sizes.empty())
    argv.insert(argv.end(), {"--timing-sizes", encode_sizes(timing_sizes)});
  encode_points(added_points, argv);
  if (hang_timeout) argv.insert(argv.end(), {"--hang-timeout", std::to_string(*hang_timeout)});
  if (!artifacts_dir.empty()) argv.insert(argv.end(), {"--artifacts-dir", artifacts_dir});
  if (!case_data.empty()) argv.insert(argv.end(), {"--case-data", case_data});
  for (const auto& o : origins) argv.insert(argv.end(), {"--origin", o});
  if (!claims.empty()) argv.insert(argv.end(), {"--claims", claims});
  if (!gpu.empty()) argv.insert(argv.end(), {"--gpu", gpu});
  return argv;
}

QualifyWorkerArgs QualifyWorkerArgs::parse(const std::vector<std::string>& args) {
  ArgReader r(args,
              {"spec", "plugin", "arm", "timing-sizes", "added-point", "hang-timeout",
               "artifacts-dir", "case-data", "origin", "claims", "gpu"},
              {"quick"});
  QualifyWorkerArgs a;
  a.spec = r.required("spec");
  a.plugin = r.required("plugin");
  a.arm = r.required("arm");
  a.quick = r.has("quick");
  if (r.has("timing-sizes")) a.timing_sizes = decode_sizes(r.one("timing-sizes"));
  a.added_points = decode_points(r.all("added-point"));
  if (r.has("hang-timeout")) a.hang_timeout = decode_seconds(r.one("hang-timeout"));
  a.artifacts_dir = r.one("artifacts-dir");
  a.case_data = r.one("case-data");
  a.origins = r.all("origin");
  a.claims = r.one("claims");
  a.gpu = r.one("gpu");
  return a;
}

std::vector<std::string> TimeWorkerArgs::to_argv() const {
  std::vector<std::string> argv = {"--spec", spec};
  for (std::size_t i = 0; i < arms.size(); ++i)
    argv.insert(argv.end(), {"--plugin", plugins[i], "--arm", arms[i]});
  if (!artifacts_dir.empty()) argv.insert(argv.end(), {"--artifacts-dir", artifacts_dir});
  if (no_blocking_kernel) argv.push_back("--no-blocking-kernel");
  argv.insert(argv.end(), {"--cpu-budget", std::to_string(cpu_call_budget_s)});
  if (brief) argv.push_back("--brief");
  if (quick) argv.push_back("--quick");
  if (!sizes.empty()) argv.insert(argv.end(), {"--sizes", encode_sizes(sizes)});
  encode_points(added_points, argv);
  for (const auto& o : origins) argv.insert(argv.end(), {"--origin", o});
  if (roster_fd >= 0) argv.insert(argv.end(), {"--roster-fd", std::to_string(roster_fd)});
  if (!gpu.empty()) argv.insert(argv.end(), {"--gpu", gpu});
  return argv;
}

TimeWorkerArgs TimeWorkerArgs::parse(const std::vector<std::string>& args) {
  ArgReader r(args,
              {"spec", "plugin", "arm", "artifacts-dir", "sizes", "added-point", "origin",
               "cpu-budget", "roster-fd", "gpu"},
              {"no-blocking-kernel", "brief", "quick"});
  TimeWorkerArgs a;
  a.spec = r.required("spec");
  a.plugins = r.all("plugin");
  a.arms = r.all("arm");
  if (a.arms.empty() || a.plugins.size() != a.arms.size())
    throw WorkerArgsError("give one --plugin for each --arm");
  a.artifacts_dir = r.one("artifacts-dir");
  a.no_blocking_kernel = r.has("no-blocking-kernel");
  if (r.has("cpu-budget")) a.cpu_call_budget_s = decode_seconds(r.one("cpu-budget"));
  a.brief = r.has("brief");
  a.quick = r.has("quick");
  if (r.has("sizes")) a.sizes = decode_sizes(r.one("sizes"));
  a.added_points = decode_points(r.all("added-point"));
  a.origins = r.all("origin");
  if (r.has("roster-fd")) a.roster_fd = decode_natural(r.one("roster-fd"));
  a.gpu = r.one("gpu");
  return a;
}

}  // namespace kq
