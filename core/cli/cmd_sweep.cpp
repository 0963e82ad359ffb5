#include <algorithm>
#include <cstring>
#include <iostream>
#include <vector>

#include "campaign/merge.hpp"
#include "campaign/plan.hpp"
#include "campaign/run_local.hpp"
#include "campaign/run_task.hpp"
#include "campaign/slurm.hpp"
#include "cli/common.hpp"
#include "worker/supervise.hpp"

namespace kq::cli {
namespace {

namespace fs = std::filesystem;

void say_end(const campaign::Task& t, const campaign::TaskRecord& r) {
  std::cout << "  " << t.id << ": " << campaign::to_string(r.state) << " in "
            << static_cast<long>(r.wall_s) << " s"
            << (r.reason.empty() ? "" : " (" + r.reason + ")") << std::endl;
}

// What the plan asks of qualification, where the time of most tasks goes: its cases and
// shapes in all, and the tasks with the most shapes.
void say_plan_size(const campaign::CampaignPlan& plan) {
  long cases = 0, shapes = 0;
  for (const campaign::Task& t : plan.tasks) {
    cases += t.cases;
    shapes += t.shapes;
  }
  std::vector<const campaign::Task*> most;
  for (const campaign::Task& t : plan.tasks) most.push_back(&t);
  const auto top =
      most.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(3, most.size()));
  std::partial_sort(
      most.begin(), top, most.end(),
      [](const campaign::Task* a, const campaign::Task* b) { return a->shapes > b->shapes; });
  std::cout << "  qualification: " << cases << " cases in " << shapes
            << " shapes; an arm that builds for each static shape (torch.compile's) builds once "
               "a shape at least\n";
  for (auto it = most.begin(); it != top; ++it)
    std::cout << (it == most.begin() ? "  the most shapes: " : ", ") << (*it)->id << " "
              << (*it)->shapes;
  if (top != most.begin()) std::cout << "\n";
}

// Merges, writes the campaign's reports, and says where; 0 when every task completed.
int merge_and_say(const fs::path& dir) {
  const campaign::CampaignSummary s = campaign::merge_campaign(dir);
  campaign::write_campaign_report(s, dir);
  std::cout << s.completed << " of " << s.tasks.size() << " tasks completed, " << s.failed
            << " failed, " << s.running << " never finished, " << s.not_started
            << " never started\n";
  for (const std::string& f : s.flags) std::cout << "flag: " << f << "\n";
  for (const std::string& d : s.disagreements) std::cout << "GPU types disagree: " << d << "\n";
  std::cout << "report: " << (dir / "campaign.md").string() << ", "
            << (dir / "campaign.html").string() << ", " << (dir / "campaign.json").string() << "\n";
  return s.completed == static_cast<int>(s.tasks.size()) ? kOk : kCandidateFailed;
}

// The arrays and the merge job through sbatch, and what was submitted.
int submit(const campaign::CampaignPlan& plan, const fs::path& dir, const po::variables_map& vm,
           bool resume) {
  std::string why;
  if (!campaign::writable(dir, &why))
    throw UsageError(why + ": the campaign folder must be writable from every node");
  campaign::SlurmOptions o;
  o.resume = resume;
  if (vm.count("partition")) o.partition = vm["partition"].as<std::string>();
  if (vm.count("gres")) o.gres = vm["gres"].as<std::string>();
  if (vm.count("sbatch-arg")) o.sbatch_args = vm["sbatch-arg"].as<std::vector<std::string>>();
  campaign::SlurmSubmission s;
  try {
    s = campaign::submit_slurm(plan, dir, o);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());  // sbatch's own words: a partition, an account, a gres
  }
  if (s.arrays.empty()) {
    std::cout << "every task has completed: nothing submitted\n";
    return kOk;
  }
  for (const campaign::ArrayJob& a : s.arrays)
    std::cout << "submitted " << a.gpu_type << ": job array " << a.job_id << " ("
              << a.indexes.size() << " task(s), " << a.script.string() << ")\n";
  std::cout << "kq merge runs as job " << s.merge_job
            << " once they end: " << (dir / "campaign.md").string() << "\n";
  return kOk;
}

}  // namespace

int cmd_sweep_task(const std::vector<std::string>& args) {
  if (args.size() != 2) throw UsageError("usage: kq sweep-task CAMPAIGN INDEX");
  const fs::path dir = args[0];
  const campaign::CampaignPlan plan = campaign::read_plan(dir);
  std::size_t index = 0;
  try {
    index = std::stoul(args[1]);
  } catch (const std::exception&) {
    throw UsageError("INDEX " + args[1] + " is not a task index");
  }
  if (index >= plan.tasks.size())
    throw UsageError("INDEX " + args[1] + ": the plan has " + std::to_string(plan.tasks.size()) +
                     " tasks");
  const campaign::TaskRecord r = campaign::run_task(dir, plan.tasks[index]);
  say_end(plan.tasks[index], r);
  if (const int sig = campaign::stop_signal()) return 128 + sig;
  return r.state == campaign::TaskState::completed ? kOk : kCandidateFailed;
}

int cmd_sweep(const std::vector<std::string>& args) {
  po::options_description opts("sweep options");
  opts.add_options()("inputs", po::value<std::vector<std::string>>()->multitoken(),
                     "spec files and folders of specs")("out", po::value<std::string>(),
                                                        "the campaign folder (new, or empty)")(
      "arms", po::value<std::string>(), "only these arms, comma-separated, in every task")(
      "quick", po::bool_switch(), "each task's kq run --quick")(
      "resume", po::value<std::string>(),
      "run again the tasks of CAMPAIGN that did not complete (its plan.json as written)")(
      "plan-only", po::bool_switch(), "write plan.json and stop")(
      "devices", po::value<std::string>(),
      "the GPUs the tasks run on, one task on each at a time: their numbers (0,1) or all "
      "(default: every GPU this process sees)")(
      "time-limit", po::value<double>(),
      "minutes a task may take before it is killed (default: from each spec's bounds: 15 "
      "minutes of qualification quick, an hour full, and the timing's limit a point)")(
      "slurm", po::bool_switch(),
      "submit the tasks to Slurm (sbatch): a job array per GPU type, then kq merge after them")(
      "gpu-types", po::value<std::string>(),
      "with --slurm: a task per spec and GPU type (h100,h200), each type its own array")(
      "partition", po::value<std::string>(), "with --slurm: the partition")(
      "gres", po::value<std::string>(),
      "with --slurm: the GPU request (default gpu:TYPE:1, gpu:1 without --gpu-types; none: no "
      "--gres, for partitions that assign GPUs)")(
      "sbatch-arg", po::value<std::vector<std::string>>(),
      "with --slurm: one more #SBATCH line (repeatable), e.g. --sbatch-arg=--account=lab");
  po::positional_options_description pos;
  pos.add("inputs", -1);
  po::variables_map vm;
  if (!parse_subcommand(
          "kq sweep SPEC_OR_DIR... --out CAMPAIGN [--arms A,B] [--quick]\n"
          "kq sweep SPEC_OR_DIR... --out CAMPAIGN --slurm [--gpu-types h100,h200] [--partition P]\n"
          "kq sweep --resume CAMPAIGN [--slurm ...]\n\n"
          "A campaign: one task per spec (a folder's *.yaml), each a kq run with its own run\n"
          "directory, log and completion record under CAMPAIGN, run here one at a time on each\n"
          "GPU (--devices); then kq merge CAMPAIGN.",
          opts, pos, args, vm))
    return kOk;

  if (!vm["slurm"].as<bool>())
    for (const char* o : {"partition", "gres", "sbatch-arg"})
      if (vm.count(o)) throw UsageError(std::string("--") + o + " needs --slurm");
  if (vm["slurm"].as<bool>() && vm.count("devices"))
    throw UsageError(
        "--devices is for tasks run here: under --slurm each task gets its GPU "
        "from Slurm (--gres)");
  campaign::LocalOptions local;
  local.gpus = devices_option(vm);
  local.on_start = [](const campaign::Task& t, const std::string& gpu) {
    std::cout << "task " << t.index << ": " << t.op << " (" << t.spec << ")"
              << (gpu.empty() ? "" : " on " + gpu) << std::endl;
  };
  local.on_end = say_end;
  fs::path dir;
  campaign::CampaignPlan plan;
  if (vm.count("resume")) {
    for (const char* o : {"inputs", "out", "arms", "gpu-types", "time-limit"})
      if (vm.count(o))
        throw UsageError(std::string("--resume takes the campaign alone (not ") +
                         (std::string(o) == "inputs" ? "specs" : "--" + std::string(o)) +
                         "): its plan.json says the rest");
    if (vm["quick"].as<bool>())
      throw UsageError(
          "--resume takes the campaign alone (not --quick): its plan.json says the rest");
    dir = fs::absolute(vm["resume"].as<std::string>());
    plan = campaign::read_plan(dir);
    local.resume = true;
  } else {
    if (!vm.count("inputs")) throw UsageError("no spec or folder of specs given");
    if (!vm.count("out")) throw UsageError("--out CAMPAIGN is required");
    dir = fs::absolute(vm["out"].as<std::string>());
    if (fs::exists(dir) && !fs::is_empty(dir))
      throw UsageError("--out " + dir.string() +
                       " is not empty (kq sweep --resume runs an earlier campaign again)");
    campaign::SweepOptions o;
    for (const std::string& s : vm["inputs"].as<std::vector<std::string>>()) o.inputs.push_back(s);
    if (vm.count("arms")) o.arms = split_csv(vm["arms"].as<std::string>());
    o.quick = vm["quick"].as<bool>();
    if (vm.count("time-limit")) {
      const double minutes = vm["time-limit"].as<double>();
      if (!(minutes > 0)) throw UsageError("--time-limit must be a number of minutes above 0");
      o.time_limit_s = minutes * 60;
    }
    if (vm.count("gpu-types")) {
      if (!vm["slurm"].as<bool>())
        throw UsageError("--gpu-types needs --slurm: here the tasks run on this machine's GPU");
      o.gpu_types = split_csv(vm["gpu-types"].as<std::string>());
    }
    o.out = dir;
    o.kq = self_executable();
    try {
      plan = campaign::plan_campaign(o);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    try {
      campaign::write_plan(plan, dir);
    } catch (const std::exception& e) {
      throw UsageError("--out " + dir.string() + ": cannot write the plan there (" + e.what() +
                       ")");
    }
    std::cout << "kq sweep: " << plan.tasks.size() << " task(s) -> "
              << campaign::plan_path(dir).string() << "\n";
    say_plan_size(plan);
  }
  if (vm["plan-only"].as<bool>()) return kOk;
  if (vm["slurm"].as<bool>()) return submit(plan, dir, vm, local.resume);
  campaign::run_local(plan, dir, local);
  const int merged = merge_and_say(dir);
  if (const int sig = campaign::stop_signal()) {
    std::cout << "kq sweep: stopped by signal " << sig << " (" << strsignal(sig)
              << "); kq sweep --resume " << dir.string() << " runs what did not complete\n";
    return 128 + sig;
  }
  return merged;
}

int cmd_merge(const std::vector<std::string>& args) {
  po::options_description opts("merge options");
  opts.add_options()("campaign", po::value<std::string>()->required(), "a campaign folder");
  po::positional_options_description pos;
  pos.add("campaign", 1);
  po::variables_map vm;
  if (!parse_subcommand("kq merge CAMPAIGN\n\nOne report of a campaign's tasks: campaign.md and "
                        "campaign.json in CAMPAIGN.",
                        opts, pos, args, vm))
    return kOk;
  const fs::path dir = vm["campaign"].as<std::string>();
  if (!fs::exists(campaign::plan_path(dir)))
    throw UsageError(dir.string() + " is not a campaign (no plan.json)");
  return merge_and_say(dir);
}

}  // namespace kq::cli
