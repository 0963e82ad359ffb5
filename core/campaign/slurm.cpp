#include "campaign/slurm.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include "campaign/run_command.hpp"
#include "campaign/task_record.hpp"
#include "campaign/utc.hpp"

namespace kq::campaign {
namespace {

namespace fs = std::filesystem;

// `s` as one bash word.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Slurm's --time in minutes: the longest task's limit, and five minutes for kq to start and to
// write the task's record after run_task's own limit killed its run.
long minutes(double seconds) { return static_cast<long>(std::ceil(seconds / 60.0)) + 5; }

std::string gres_of(const std::string& gpu_type, const SlurmOptions& o) {
  if (o.gres == "none") return "";
  if (!o.gres.empty()) return o.gres;
  return gpu_type == "local" ? "gpu:1" : "gpu:" + gpu_type + ":1";
}

std::string header(const std::string& name, long time_min, const SlurmOptions& o,
                   const fs::path& output) {
  std::string s = "#SBATCH --job-name=" + name + "\n#SBATCH --time=" + std::to_string(time_min) +
                  "\n#SBATCH --output=" + output.string() + "\n";
  if (!o.partition.empty()) s += "#SBATCH --partition=" + o.partition + "\n";
  for (const std::string& a : o.sbatch_args) s += "#SBATCH " + a + "\n";
  return s;
}

void write_script(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + file.string());
  fs::permissions(file, fs::perms::owner_exec, fs::perm_options::add);
}

// sbatch --parsable prints "JOBID" or "JOBID;CLUSTER".
std::string submit(const fs::path& script) {
  const CommandResult r = run_command({"sbatch", "--parsable", script.string()});
  std::string id;
  for (char c : r.out) {
    if (c == ';' || c == '\n') {
      if (!id.empty()) break;
      continue;
    }
    id += c;
  }
  if (r.exit_code != 0 || id.empty() ||
      !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw std::runtime_error("sbatch " + script.string() + " failed: " + r.out);
  return id;
}

std::string joined_ints(const std::vector<int>& v, const char* sep) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : sep) + std::to_string(x);
  return s;
}

}  // namespace

std::string array_script(const CampaignPlan& plan, const fs::path& campaign,
                         const std::string& gpu_type, const std::vector<int>& indexes,
                         const SlurmOptions& o) {
  double longest = 0;
  for (int i : indexes)
    longest = std::max(longest, plan.tasks.at(static_cast<std::size_t>(i)).time_limit_s);
  const fs::path dir = fs::absolute(campaign);
  std::string s = "#!/bin/bash\n# kq sweep: the " + gpu_type + " tasks of " + dir.string() +
                  ", one per array index (the task's index in plan.json).\n";
  s += header("kq-" + gpu_type, minutes(longest), o, dir / "slurm" / (gpu_type + "-%A_%a.out"));
  s += "#SBATCH --array=" + joined_ints(indexes, ",") + "\n";
  if (const std::string g = gres_of(gpu_type, o); !g.empty()) s += "#SBATCH --gres=" + g + "\n";
  s += "exec " + quoted(plan.tasks.front().argv.front()) + " sweep-task " + quoted(dir.string()) +
       " \"$SLURM_ARRAY_TASK_ID\"\n";
  return s;
}

SlurmSubmission submit_slurm(const CampaignPlan& plan, const fs::path& campaign,
                             const SlurmOptions& o) {
  SlurmSubmission sub;
  for (const Task& t : plan.tasks) {
    if (o.resume && done(read_record(campaign, t))) continue;
    auto it = std::find_if(sub.arrays.begin(), sub.arrays.end(),
                           [&](const ArrayJob& a) { return a.gpu_type == t.gpu_type; });
    if (it == sub.arrays.end())
      it = sub.arrays.insert(sub.arrays.end(), ArrayJob{t.gpu_type, "", {}, {}});
    it->indexes.push_back(t.index);
  }
  if (sub.arrays.empty()) return sub;
  const fs::path dir = fs::absolute(campaign);
  fs::create_directories(dir / "slurm");
  std::ofstream log(dir / "slurm" / "submitted.log", std::ios::app);
  std::vector<std::string> ids;
  for (ArrayJob& a : sub.arrays) {
    a.script = dir / "slurm" / ("array-" + a.gpu_type + ".sh");
    write_script(a.script, array_script(plan, campaign, a.gpu_type, a.indexes, o));
    a.job_id = submit(a.script);
    ids.push_back(a.job_id);
    log << utc_now() << " array " << a.gpu_type << " job " << a.job_id << " tasks "
        << joined_ints(a.indexes, ",") << "\n";
  }
  std::string dependency;
  for (const std::string& id : ids) dependency += ":" + id;
  sub.merge_script = dir / "slurm" / "merge.sh";
  write_script(sub.merge_script,
               "#!/bin/bash\n# kq sweep: the campaign's report once every array has ended.\n" +
                   header("kq-merge", 30, o, dir / "slurm" / "merge-%j.out") +
                   "#SBATCH --dependency=afterany" + dependency + "\nexec " +
                   quoted(plan.tasks.front().argv.front()) + " merge " + quoted(dir.string()) +
                   "\n");
  sub.merge_job = submit(sub.merge_script);
  log << utc_now() << " merge job " << sub.merge_job << " after" << dependency << "\n";
  return sub;
}

std::string slurm_job_state(const std::string& job) {
  if (job.empty()) return "";
  const CommandResult r = run_command({"sacct", "-X", "-n", "-P", "-o", "State", "-j", job});
  if (r.exit_code != 0) return "";
  std::string first = r.out.substr(0, r.out.find('\n'));
  while (!first.empty() && (first.back() == ' ' || first.back() == '\r')) first.pop_back();
  return first;
}

bool writable(const fs::path& dir, std::string* why) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path probe = dir / (".kq-write-probe-" + std::to_string(getpid()));
  {
    std::ofstream out(probe);
    out << "probe\n";
    if (!out) {
      if (why) *why = "cannot write into " + dir.string();
      return false;
    }
  }
  fs::remove(probe, ec);
  return true;
}

}  // namespace kq::campaign
