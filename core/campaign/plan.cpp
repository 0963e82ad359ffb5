#include "campaign/plan.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "campaign/utc.hpp"
#include "plan/plan_cases.hpp"
#include "plan/timed_points.hpp"
#include "qualify/case_claims.hpp"
#include "spec/spec.hpp"
#include "util/json_fields.hpp"
#include "util/version.hpp"

namespace kq::campaign {

KQ_JSON_FIELDS(Task) {
  f("index", r.index);
  f("id", r.id);
  f("spec", r.spec);
  f("op", r.op);
  f("gpu_type", r.gpu_type);
  f("argv", r.argv);
  f("run_dir", r.run_dir);
  f("time_limit_s", r.time_limit_s);
  f("cases", r.cases);
  f("shapes", r.shapes);
}
KQ_JSON_FIELDS(CampaignPlan) {
  f("schema_version", r.schema_version);
  f("created", r.created);
  f("kq_version", r.kq_version);
  f("kq_commit", r.kq_commit);
  f("tasks", r.tasks);
}
void to_json(nlohmann::json& j, const Task& r) { jf::write_fields(j, r); }
void from_json(const nlohmann::json& j, Task& r) { jf::read_fields(j, r); }
void to_json(nlohmann::json& j, const CampaignPlan& r) { jf::write_fields(j, r); }
void from_json(const nlohmann::json& j, CampaignPlan& r) { jf::read_fields(j, r); }

namespace {

namespace fs = std::filesystem;

// The spec files an input names: itself, or a folder's *.yaml in name order (not its
// subfolders: specs/ holds specs/kernelbench/, which is a campaign of its own).
std::vector<fs::path> spec_files(const fs::path& input) {
  if (fs::is_regular_file(input)) return {fs::absolute(input)};
  if (!fs::is_directory(input))
    throw std::invalid_argument(input.string() + ": no such spec file or folder");
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(input))
    if (e.is_regular_file() && e.path().extension() == ".yaml")
      out.push_back(fs::absolute(e.path()));
  std::sort(out.begin(), out.end());
  if (out.empty()) throw std::invalid_argument(input.string() + ": a folder with no *.yaml spec");
  return out;
}

// An upper bound on a task's wall time from the spec's own bounds: the timing stage's limit a
// point (5 s with --quick), a minute of set-up a point, and an allowance for qualification
// (15 minutes quick, an hour full: the huge cases of a full plan take minutes an arm).
double time_limit_s(const Spec& spec, bool quick) {
  const double points = static_cast<double>(timed_points(spec, spec.timing.sizes).size());
  const double per_point = (quick ? 5.0 : spec.timing.max_seconds) + 60.0;
  return (quick ? 900.0 : 3600.0) + points * per_point;
}

// The qualification plan's cases and distinct shapes: the groups that qualification's shards
// hand out a shape at a time (qualify/case_claims.hpp).
std::pair<int, int> plan_size(const Spec& spec, bool quick) {
  PlanOptions options;
  options.quick = quick;
  const std::vector<Case> cases = plan_cases(spec, options);
  return {static_cast<int>(cases.size()), static_cast<int>(shape_groups(cases).size())};
}

std::string task_id(int index, const fs::path& spec, const std::string& gpu_type) {
  char n[16];
  std::snprintf(n, sizeof n, "%03d", index);
  return std::string(n) + "-" + spec.stem().string() + "-" + gpu_type;
}

}  // namespace

CampaignPlan plan_campaign(const SweepOptions& o) {
  CampaignPlan plan;
  plan.created = utc_now();
  plan.kq_version = kq_version();
  plan.kq_commit = kq_git_commit();
  std::vector<fs::path> specs;
  for (const fs::path& in : o.inputs)
    for (fs::path& f : spec_files(in))
      if (std::find(specs.begin(), specs.end(), f) == specs.end()) specs.push_back(std::move(f));
  const std::vector<std::string> types =
      o.gpu_types.empty() ? std::vector<std::string>{"local"} : o.gpu_types;
  for (const fs::path& file : specs) {
    const Spec spec = load_spec(file);  // a bad spec stops the plan, naming its file
    const auto [cases, shapes] = plan_size(spec, o.quick);
    for (const std::string& type : types) {
      Task t;
      t.index = static_cast<int>(plan.tasks.size());
      t.id = task_id(t.index, file, type);
      t.spec = file.string();
      t.op = spec.op.op;
      t.gpu_type = type;
      t.run_dir = "runs/" + t.id;
      t.time_limit_s = o.time_limit_s > 0 ? o.time_limit_s : time_limit_s(spec, o.quick);
      t.cases = cases;
      t.shapes = shapes;
      t.argv = {o.kq.string(), "run", t.spec, "--out", (fs::absolute(o.out) / t.run_dir).string()};
      if (!o.arms.empty()) {
        std::string arms;
        for (const std::string& a : o.arms) arms += (arms.empty() ? "" : ",") + a;
        t.argv.insert(t.argv.end(), {"--arms", arms});
      }
      if (o.quick) t.argv.push_back("--quick");
      plan.tasks.push_back(std::move(t));
    }
  }
  return plan;
}

fs::path plan_path(const fs::path& campaign) { return campaign / "plan.json"; }

void write_plan(const CampaignPlan& plan, const fs::path& campaign) {
  fs::create_directories(campaign);
  const fs::path file = plan_path(campaign);
  std::ofstream out(file);
  out << nlohmann::json(plan).dump(2) << "\n";
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

CampaignPlan read_plan(const fs::path& campaign) {
  const fs::path file = plan_path(campaign);
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": no campaign plan (kq sweep writes it)");
  try {
    return nlohmann::json::parse(in).get<CampaignPlan>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(file.string() + ": not a campaign plan: " + e.what());
  }
}

}  // namespace kq::campaign
