// Shared pieces of the command line: exit codes, plugin options, arm selection.
#pragma once
#include <boost/program_options.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "device/gpu_list.hpp"
#include "plugins/loader.hpp"

namespace kq::cli {

// Documented in docs/cli.md and `kq --help`.
enum ExitCode : int {
  kOk = 0,
  kCandidateFailed = 1,  // an arm failed qualification (rejected, crashed or hung), its timing-loop
                         // output was wrong, or the timing stage stopped early
  kBadUsage = 2,         // bad usage or a bad spec
  kInternal = 3,         // kq itself failed
};

// Thrown for bad usage; main prints the message and exits with kBadUsage.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace po = boost::program_options;

// --plugin-dir, --plugin, --python-arms (all repeatable).
void add_plugin_options(po::options_description& d);
// Loads plugins as the options and KQ_PLUGIN_PATH say; prints load errors to stderr unless quiet.
// --python-arms folders are appended to KQ_PYTHON_ARMS first (the python plugin reads it, and
// the workers inherit it); one that is not a folder is a UsageError naming it.
PluginSet load_plugins_from(const po::variables_map& vm, bool print_errors);

// Parses args of a subcommand; prints help and returns false when --help was given.
bool parse_subcommand(const std::string& usage, const po::options_description& options,
                      const po::positional_options_description& positional,
                      const std::vector<std::string>& args, po::variables_map& vm);

// The run directory that --out and --runs-dir name (rundir/run_dir.hpp); a folder that exists and
// is not empty, or one that cannot be made, is a UsageError naming the option.
std::filesystem::path make_run_dir(const po::variables_map& vm, const std::string& op,
                                   const std::string& machine);

// --jobs (at least 1) and --hang-timeout (above 0, when given) of run, qualify and selftest;
// throws UsageError.
void check_qualify_options(const po::variables_map& vm);

std::vector<std::string> split_csv(const std::string& s);

// --devices (kq run, qualify, sweep): the GPUs chosen, every one visible when not given; a list
// naming what is not there is a UsageError.
std::vector<GpuSlot> devices_option(const boost::program_options::variables_map& vm);
// "4096,65536,2^20" -> element counts; throws UsageError on anything else.
std::vector<std::int64_t> parse_sizes(const std::string& s);
// "memcheck,racecheck" or "all" -> compute-sanitizer tools; throws UsageError on others.
std::vector<std::string> parse_sanitize_tools(const std::string& s);

int cmd_list(const std::vector<std::string>& args);
int cmd_check_spec(const std::vector<std::string>& args);
int cmd_run(const std::vector<std::string>& args);
int cmd_qualify(const std::vector<std::string>& args);
int cmd_selftest(const std::vector<std::string>& args);
int cmd_artifacts(const std::vector<std::string>& args);
int cmd_report(const std::vector<std::string>& args);
int cmd_compare(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args);
int cmd_sweep_task(const std::vector<std::string>& args);
int cmd_merge(const std::vector<std::string>& args);
int cmd_version(const std::vector<std::string>& args);
int cmd_worker_qualify(const std::vector<std::string>& args);
int cmd_worker_time(const std::vector<std::string>& args);

}  // namespace kq::cli
