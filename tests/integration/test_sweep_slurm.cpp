// kq sweep --slurm on a real Slurm: a one-node cluster started here (its own munged, slurmctld
// and slurmd, a generated slurm.conf, ports and state under a temp folder), a campaign of three
// specs with cpu_tbb, one array task cancelled mid-run (scancel: its record says it was stopped;
// test_sweep_cli covers the record a lost node leaves, "running"), the merge job's report naming
// it, then --resume and a whole report. Skipped, saying why, where the daemons cannot start (not
// root, Slurm or munge not installed).
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace fs = std::filesystem;
using kq::test::read_file;
using kq::test::run_kq;

namespace {

// A shell command's exit code and output.
kq::test::Result sh(const std::string& cmd) {
  kq::test::Result r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bool wait_for(const std::function<bool()>& done, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return done();
}

// The cluster: started in the constructor (why() says what failed), stopped in the destructor.
class Cluster {
 public:
  explicit Cluster(const fs::path& dir) : dir_(dir) {
    for (const char* tool : {"munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue"})
      if (sh(std::string("command -v ") + tool).exit_code != 0 &&
          !fs::exists(std::string("/usr/sbin/") + tool)) {
        why_ = std::string(tool) + " is not installed (tools/install-deps.sh --test installs it)";
        return;
      }
    if (geteuid() != 0) {
      why_ = "slurmd runs jobs as their user and needs root here";
      return;
    }
    fs::create_directories(dir / "munge");
    fs::create_directories(dir / "state");
    fs::create_directories(dir / "spool");
    fs::permissions(dir / "munge", fs::perms::owner_all);
    const std::string m = (dir / "munge").string();
    if (!start("/usr/sbin/mungekey -c -k " + m + "/munge.key && chmod 400 " + m +
               "/munge.key && /usr/sbin/munged --force --key-file=" + m +
               "/munge.key --socket=" + m + "/munge.sock --pid-file=" + m +
               "/munged.pid --log-file=" + m + "/munged.log --seed-file=" + m + "/seed"))
      return;
    const int port = 20000 + static_cast<int>(getpid() % 20000) * 2;
    const std::string host = sh("hostname").out.substr(0, sh("hostname").out.find('\n'));
    std::ofstream(dir / "slurm.conf")
        << "ClusterName=kqtest\nSlurmctldHost=" << host << "\nSlurmUser=root\nSlurmdUser=root\n"
        << "AuthType=auth/munge\nAuthInfo=socket=" << m << "/munge.sock\nCredType=cred/munge\n"
        << "StateSaveLocation=" << (dir / "state").string()
        << "\nSlurmdSpoolDir=" << (dir / "spool").string()
        << "\nSlurmctldPidFile=" << (dir / "slurmctld.pid").string()
        << "\nSlurmdPidFile=" << (dir / "slurmd.pid").string() << "\nSlurmctldPort=" << port
        << "\nSlurmdPort=" << port + 1 << "\nSlurmctldLogFile=" << (dir / "slurmctld.log").string()
        << "\nSlurmdLogFile=" << (dir / "slurmd.log").string()
        << "\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSwitchType=switch/none\n"
        << "MpiDefault=none\nSchedulerType=sched/builtin\nSelectType=select/cons_tres\n"
        << "SelectTypeParameters=CR_Core\nReturnToService=2\nJobAcctGatherType=jobacct_gather/"
           "none\n"
        << "AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\n"
        << "NodeName=" << host << " CPUs=" << sysconf(_SC_NPROCESSORS_ONLN)
        << " State=UNKNOWN\nPartitionName=kq Nodes=" << host
        << " Default=YES MaxTime=INFINITE State=UP\n";
    setenv("SLURM_CONF", (dir / "slurm.conf").c_str(), 1);
    const std::string conf = (dir / "slurm.conf").string();
    if (!start("/usr/sbin/slurmctld -f " + conf) || !start("/usr/sbin/slurmd -f " + conf)) return;
    if (!wait_for([] { return sh("sinfo -h -o %t").out.find("idle") == 0; }, 30)) {
      why_ = "the node did not come up: " + sh("sinfo -h -o %t").out +
             read_file(dir / "slurmctld.log").substr(0, 2000);
      return;
    }
    // A job of its own first: where this machine cannot run one (a container without what
    // slurmstepd needs), the test is skipped, not failed.
    const fs::path smoke = dir / "smoke.out";
    const kq::test::Result job =
        sh("sbatch --parsable --output=" + smoke.string() + " --wrap 'echo ok'");
    if (job.exit_code != 0 ||
        !wait_for([&] { return read_file(smoke).find("ok") != std::string::npos; }, 60))
      why_ = "a test job did not run: " + job.out + read_file(dir / "slurmd.log").substr(0, 2000);
  }
  ~Cluster() { stop(); }
  // The daemons stopped (their pid files read before the folder goes).
  void stop() {
    std::vector<pid_t> pids;
    for (const char* pid : {"slurmd.pid", "slurmctld.pid", "munge/munged.pid"})
      if (fs::exists(dir_ / pid)) pids.push_back(std::stoi(read_file(dir_ / pid)));
    for (pid_t p : pids) kill(p, SIGTERM);
    // Gone, not only told: slurmctld writes its state as it ends.
    wait_for(
        [&] {
          return std::none_of(pids.begin(), pids.end(), [](pid_t p) { return kill(p, 0) == 0; });
        },
        10);
    unsetenv("SLURM_CONF");
  }
  const std::string& why() const { return why_; }

 private:
  bool start(const std::string& cmd) {
    const kq::test::Result r = sh(cmd);
    if (r.exit_code != 0) why_ = cmd + ": " + r.out;
    return r.exit_code == 0;
  }
  fs::path dir_;
  std::string why_;
};

nlohmann::json record(const fs::path& campaign, const std::string& id) {
  const fs::path f = campaign / "tasks" / (id + ".json");
  return fs::exists(f) ? nlohmann::json::parse(read_file(f)) : nlohmann::json::object();
}

bool queue_empty() {
  const kq::test::Result r = sh("squeue -h");
  return r.exit_code == 0 && r.out.empty();
}

}  // namespace

TEST_CASE("kq sweep --slurm on a one-node cluster: a task cancelled, resumed, merged") {
  const fs::path root = kq::test::temp_dir("slurm");
  Cluster cluster(root / "cluster");
  if (!cluster.why().empty()) {
    MESSAGE("skipped: " << cluster.why());
    return;
  }
  const fs::path dir = root / "campaign";
  const std::string c = "'" + dir.string() + "'";
  auto r = run_kq(
      "sweep specs/clamp.yaml specs/residual_relu.yaml specs/leaky_relu.yaml "
      "--arms cpu_tbb --quick --slurm --gres none --out " +
      c);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json plan = nlohmann::json::parse(read_file(dir / "plan.json"));
  const std::string victim = plan["tasks"][1]["id"];  // residual_relu: the longest run

  // Cancel it mid-run: Slurm signals its kq sweep-task (SIGTERM), which stops the task's kq run
  // and records why.
  REQUIRE(wait_for([&] { return fs::exists(dir / "runs" / victim / "manifest.json"); }, 120));
  const std::string job = record(dir, victim)["slurm_job"];
  CHECK(job.find('_') != std::string::npos);  // ARRAYJOB_INDEX
  sh("scancel " + job.substr(0, job.find(' ')));
  REQUIRE(wait_for(queue_empty, 300));  // the arrays, then the merge job
  std::string md = read_file(dir / "campaign.md");
  INFO(md);
  CHECK(md.find("2 completed, 1 failed") != std::string::npos);
  CHECK(md.find("stopped: kq received signal 15") != std::string::npos);
  CHECK(record(dir, victim)["state"] == "failed");

  r = run_kq("sweep --resume " + c + " --slurm --gres none");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("(1 task(s)") != std::string::npos);
  REQUIRE(wait_for(queue_empty, 300));
  md = read_file(dir / "campaign.md");
  CHECK(md.find("3 completed, 0 failed, 0 never finished") != std::string::npos);
  CHECK(md.find("| cpu_tbb | baseline | baseline | baseline |") != std::string::npos);
  CHECK(record(dir, victim)["state"] == "completed");
  CHECK(fs::exists(dir / "runs" / (victim + ".attempt-1")));
  cluster.stop();
  // A daemon still writing its state as it ends must not fail the test: the folder is temporary.
  std::error_code ignored;
  fs::remove_all(root, ignored);
}
