// `schedlab-cli sweep`: many replays (traces x models x parameter grids) into a
// results folder, run here by worker processes or handed to GNU parallel or
// Slurm; `schedlab-cli sweep-job`: the one command every runner runs per job.
// A job is `replay --json` run in-process, its output written atomically, so
// each runner gives byte-identical results and a rerun does only what is missing.
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <ostream>
#include <sstream>
#include <thread>

#include "app/cli/cli.h"
#include "app/sweep/sweep_plan.h"
#include "core/json_writer.h"

namespace app::cli {

namespace {

namespace fs = std::filesystem;
using sweep::Job;
using sweep::JobState;

constexpr const char* kSweepHelp =
    "usage: schedlab-cli sweep PLAN.json -o RESULTS/ [-j N] [--emit parallel|slurm [--chunk K]] [--bench]\n"
    "       schedlab-cli sweep -o RESULTS/ --trace GLOB... --model M... [--param KEY=V1,V2,...]...\n"
    "                          [--topology CxT] [--no-reference] [-j N] [--emit ...]\n"
    "Replays every trace through every model with every combination of the parameter values: one\n"
    "job per replay, whose result is its `schedlab-cli replay --json` document, written atomically\n"
    "to RESULTS/jobs/ID.json (a failed job writes ID.error.json and the others go on). Rerun, a\n"
    "sweep does only the jobs without a result. RESULTS/sweep.json lists the jobs.\n"
    "Each trace also gets its reference job: the baseline model on the recorded topology with no\n"
    "parameter set, whose fidelity verdict says whether the sweep's replays of it can be trusted\n"
    "(--no-reference, or \"reference\": false in the plan, leaves it out).\n"
    "Plan (JSON; relative paths are relative to the plan's folder):\n"
    "  {\"traces\": [\"recordings/*/trace.dat\"],\n"
    "   \"models\": [\"baseline\", \"bfs\", {\"model\": \"eevdf\", \"params\": {\"base_slice_ns\": [700000, 3000000]}},\n"
    "              {\"model\": \"cfs+coresched\",\n"
    "               \"params\": {\"coresched.cookie\": [\"per-process\", [\"comm:^a$=A\", \"comm:^b$=B\"]]}}],\n"
    "   \"params\": {\"hz\": [250, 1000], \"smt.factor\": {\"from\": 0.5, \"to\": 0.9, \"step\": 0.1}},\n"
    "   \"topology\": \"2x2\", \"reference\": true}\n"
    "  params: KEY: a value, a list of values, or a range; a list inside the list is one value made\n"
    "  of rules (cookie, uclamp), later rules winning. The plan's params apply to every model (each\n"
    "  must have them); a model's own params cross with them.\n"
    "Runners:\n"
    "  (default)          N worker processes here (-j N, default: the CPUs this process may use),\n"
    "                     with a progress bar and ETA on a terminal (a line per job otherwise)\n"
    "  --emit parallel    print the pending jobs as a GNU parallel job list, one command a line:\n"
    "                     schedlab-cli sweep PLAN.json -o R --emit parallel | parallel -j2\n"
    "  --emit slurm       print a Slurm job-array script (sbatch it) running --chunk K jobs per task\n"
    "                     (default 1), logs in RESULTS/slurm/\n"
    "  --bench            after a local run, print as one JSON line the wall time, the jobs' CPU\n"
    "                     time, wall / (CPU / workers) (1 = every worker's CPU busy all along),\n"
    "                     the worker occupancy (the jobs' summed wall time over wall x workers:\n"
    "                     1 = the runner never left a worker idle) and the load average\n"
    "Results: `schedlab-cli sweep-report RESULTS/ -o report.pdf|html|csv|json`; the GUI opens them\n"
    "with File > Open Sweep Results.\n"
    "Exit codes: 0 every job has its result, 1 some job failed (see RESULTS/jobs/*.error.json),\n"
    "2 bad usage or a bad plan.\n";

constexpr const char* kSweepJobHelp =
    "usage: schedlab-cli sweep-job RESULTS/ ID... [--force]\n"
    "Runs jobs of a sweep's results folder (RESULTS/sweep.json), one after the other: the command\n"
    "every runner of `schedlab-cli sweep` runs. A job whose result exists is skipped (--force reruns it).\n"
    "Exit codes: 0 every job has its result, 1 some job failed, 2 bad usage or an unknown ID.\n";

std::string selfExecutable() {
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("schedlab-cli") : p.string();
}

std::string shellQuoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

size_t cpusAvailable() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<size_t>(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string clock(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  return buf;
}

double loadAverage() {
  double l[1] = {0};
  return getloadavg(l, 1) == 1 ? l[0] : -1;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// One job, in this process: `replay --json`, its document kept only when the replay succeeded.
bool runJob(const std::string& dir, const Job& job) {
  std::ostringstream doc, why;
  const int code = run([&] {
    std::vector<std::string> argv{"replay"};
    const auto args = job.replayArgs();
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }(), doc, why);
  std::error_code ec;
  if (code == kExitOk) {
    if (auto st = sweep::writeFileAtomically(sweep::resultPath(dir, job.id), doc.str()); !st) {
      std::cerr << "schedlab-cli sweep-job: " << st.message() << "\n";
      return false;
    }
    fs::remove(sweep::errorPath(dir, job.id), ec);
    return true;
  }
  core::JsonWriter j;
  j.beginObject();
  j.field("id", job.id);
  j.field("exit_code", code);
  j.field("error", trimmed(why.str()));
  j.endObject();
  if (auto st = sweep::writeFileAtomically(sweep::errorPath(dir, job.id), j.str() + "\n"); !st)
    std::cerr << "schedlab-cli sweep-job: " << st.message() << "\n";
  return false;
}

// A worker process for one job: this executable's `sweep-job`, the command the
// other runners run too. It dies with the runner (a killed sweep leaves no
// orphan finishing jobs behind the rerun's back) and stays quiet: what it has
// to say goes into the results folder.
pid_t spawnJob(const std::string& self, const std::string& dir, const std::string& id) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  if (FILE* devnull = std::fopen("/dev/null", "w")) {
    dup2(fileno(devnull), STDOUT_FILENO);
    dup2(fileno(devnull), STDERR_FILENO);
  }
  const char* argv[] = {self.c_str(), "sweep-job", dir.c_str(), id.c_str(), nullptr};
  execv(self.c_str(), const_cast<char* const*>(argv));
  _exit(127);
}

class Progress {
 public:
  Progress(std::ostream& err, size_t total) : m_err(err), m_total(total) {
    m_bar = &err == &std::cerr && isatty(STDERR_FILENO);
  }
  void jobDone(const Job& job, bool ok, double elapsed) {
    ++m_finished;
    m_failed += !ok;
    const double eta = elapsed / static_cast<double>(m_finished) * static_cast<double>(m_total - m_finished);
    char buf[256];
    if (m_bar) {
      constexpr int kWidth = 30;
      const int filled = static_cast<int>(kWidth * m_finished / std::max<size_t>(1, m_total));
      std::snprintf(buf, sizeof buf, "\r[%s%s] %zu/%zu jobs  %zu failed  %s elapsed  ETA %s ",
                    std::string(static_cast<size_t>(filled), '#').c_str(),
                    std::string(static_cast<size_t>(kWidth - filled), '-').c_str(), m_finished, m_total, m_failed,
                    clock(elapsed).c_str(), clock(eta).c_str());
      m_err << buf << (m_finished == m_total ? "\n" : "") << std::flush;
    } else {
      std::snprintf(buf, sizeof buf, "sweep: %zu/%zu %s  ETA %s  ", m_finished, m_total, ok ? "done  " : "FAILED",
                    clock(eta).c_str());
      m_err << buf << sweep::traceLabel(job.trace) << "  " << job.model << "  " << job.settingsText() << "\n";
    }
  }

 private:
  std::ostream& m_err;
  size_t m_total;
  size_t m_finished = 0, m_failed = 0;
  bool m_bar = false;
};

struct LocalRun {
  size_t done = 0, failed = 0;
  double wallS = 0, cpuS = 0;
  double jobsWallS = 0;  ///< summed over the jobs, from spawn to exit: how full the runner kept its workers
};

LocalRun runLocally(const std::string& dir, std::vector<const Job*> pending, size_t workers, std::ostream& err) {
  // The largest traces first: the last jobs to start are then the short ones,
  // and the workers run out of work together.
  std::map<std::string, uintmax_t> size;
  for (const Job* job : pending) {
    std::error_code ec;
    size[job->trace] = fs::is_regular_file(job->trace, ec) ? fs::file_size(job->trace, ec) : 0;
  }
  std::stable_sort(pending.begin(), pending.end(), [&](const Job* a, const Job* b) { return size[a->trace] > size[b->trace]; });

  const std::string self = selfExecutable();
  const auto t0 = std::chrono::steady_clock::now();
  Progress progress(err, pending.size());
  LocalRun result;
  struct Running {
    const Job* job;
    std::chrono::steady_clock::time_point started;
  };
  std::map<pid_t, Running> running;
  size_t next = 0;
  while (next < pending.size() || !running.empty()) {
    while (next < pending.size() && running.size() < workers) {
      const pid_t pid = spawnJob(self, dir, pending[next]->id);
      if (pid < 0) break;
      running[pid] = {pending[next++], std::chrono::steady_clock::now()};
    }
    if (running.empty()) {
      err << "schedlab-cli sweep: cannot start a worker process\n";
      break;
    }
    int status = 0;
    rusage usage{};
    const pid_t pid = wait4(-1, &status, 0, &usage);
    if (pid < 0) continue;
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const Job& job = *it->second.job;
    result.jobsWallS += std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.started).count();
    running.erase(it);
    result.cpuS += static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                   static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    bool ok = sweep::jobState(dir, job.id) == JobState::Done;
    if (!ok && sweep::jobState(dir, job.id) == JobState::Pending) {
      // The worker died before it could say why (a crash, a signal): say it for it.
      core::JsonWriter j;
      j.beginObject();
      j.field("id", job.id);
      j.field("exit_code", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
      j.field("error", WIFSIGNALED(status) ? "sweep-job was killed by signal " + std::to_string(WTERMSIG(status))
                                           : "sweep-job exited with status " + std::to_string(WEXITSTATUS(status)) +
                                                 " without a result");
      j.endObject();
      (void)sweep::writeFileAtomically(sweep::errorPath(dir, job.id), j.str() + "\n");
    }
    result.done += ok;
    result.failed += !ok;
    progress.jobDone(job, ok, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  result.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

void emitParallel(std::ostream& out, const std::string& dir, const std::vector<const Job*>& pending) {
  const std::string self = shellQuoted(selfExecutable());
  for (const Job* job : pending) out << self << " sweep-job " << shellQuoted(dir) << " " << job->id << "\n";
}

void emitSlurm(std::ostream& out, const std::string& dir, const std::vector<const Job*>& pending, size_t chunk) {
  const size_t tasks = (pending.size() + chunk - 1) / chunk;
  out << "#!/bin/bash\n"
         "# SchedLab sweep: "
      << pending.size() << " jobs of " << sweep::manifestPath(dir) << ", " << chunk
      << " per array task.\n"
         "# Submit with: sbatch THIS_FILE (results in "
      << (fs::path(dir) / "jobs").string()
      << "/, the same layout as a local run).\n"
         "# Every node must see the traces, the results folder and schedlab-cli at these paths\n"
         "# (or set SCHEDLAB_CLI to where it is installed there).\n"
         "#SBATCH --job-name=schedlab-sweep\n"
         "#SBATCH --array=0-"
      << tasks - 1
      << "\n"
         "#SBATCH --ntasks=1\n"
         "#SBATCH --cpus-per-task=1\n"
         "#SBATCH --output="
      << (fs::path(dir) / "slurm" / "%A_%a.out").string()
      << "\n"
         "set -euo pipefail\n"
         "cli=\"${SCHEDLAB_CLI:-"
      << selfExecutable()
      << "}\"\n"
         "results="
      << shellQuoted(dir) << "\nchunk=" << chunk << "\njobs=(\n";
  for (size_t i = 0; i < pending.size(); ++i)
    out << (i % chunk == 0 ? "  " : " ") << pending[i]->id << ((i + 1) % chunk == 0 || i + 1 == pending.size() ? "\n" : "");
  out << ")\n"
         "first=$(( SLURM_ARRAY_TASK_ID * chunk ))\n"
         "exec \"$cli\" sweep-job \"$results\" \"${jobs[@]:first:chunk}\"\n";
}

}  // namespace

int sweepCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  // -j2 as make and parallel take it, besides -j 2.
  std::vector<std::string> split;
  for (const std::string& a : argv) {
    if (a.size() > 2 && a.rfind("-j", 0) == 0 && std::isdigit(static_cast<unsigned char>(a[2]))) {
      split.push_back("-j");
      split.push_back(a.substr(2));
    } else {
      split.push_back(a);
    }
  }
  std::string error;
  auto args = Args::parse(split, {"-o", "--output", "--trace", "--model", "--param", "--topology", "-j", "--jobs",
                                  "--emit", "--chunk"},
                          {"--help", "--no-reference", "--bench"}, error);
  if (!args) {
    err << "schedlab-cli sweep: " << error << " (see --help)\n";
    return kExitUsage;
  }
  if (args->flag("--help")) {
    out << kSweepHelp;
    return kExitOk;
  }
  const std::string dirArg = args->value("-o").value_or(args->value("--output").value_or(""));
  const bool shorthand = args->has("--trace") || args->has("--model") || args->has("--param");
  if (dirArg.empty() || args->positional().size() > 1 || (shorthand == (args->positional().size() == 1))) {
    err << "schedlab-cli sweep: "
        << (dirArg.empty() ? "-o RESULTS/ is required"
                           : "give either PLAN.json or --trace/--model/--param, not both and not neither")
        << " (see --help)\n";
    return kExitUsage;
  }
  const std::string emit = args->value("--emit").value_or("");
  if (!emit.empty() && emit != "parallel" && emit != "slurm") {
    err << "schedlab-cli sweep: --emit takes parallel or slurm (not '" << emit << "')\n";
    return kExitUsage;
  }
  auto positiveCount = [&](std::initializer_list<const char*> names, size_t fallback) -> std::optional<size_t> {
    std::optional<std::string> v;
    for (const char* name : names) v = v ? v : args->value(name);
    if (!v) return fallback;
    char* end = nullptr;
    const long n = std::strtol(v->c_str(), &end, 10);
    if (end == v->c_str() || *end || n < 1 || n > 100000) return std::nullopt;
    return static_cast<size_t>(n);
  };
  const auto workers = positiveCount({"-j", "--jobs"}, cpusAvailable());
  const auto chunk = positiveCount({"--chunk"}, 1);
  if (!workers || !chunk) {
    err << "schedlab-cli sweep: " << (workers ? "--chunk" : "-j") << " takes a number from 1 to 100000\n";
    return kExitUsage;
  }

  auto plan = shorthand ? sweep::planFromFlags(args->values("--trace"), args->values("--model"), args->values("--param"),
                                               args->value("--topology").value_or(""), !args->flag("--no-reference"))
                        : sweep::readPlanFile(args->positional()[0]);
  if (plan && !shorthand && (args->has("--topology") || args->flag("--no-reference"))) {
    err << "schedlab-cli sweep: with a PLAN.json, the topology and the reference are set in the plan\n";
    return kExitUsage;
  }
  if (!plan) {
    err << "schedlab-cli sweep: " << plan.error().message() << "\n";
    return kExitUsage;
  }
  auto jobs = sweep::expandPlan(*plan);
  if (!jobs) {
    err << "schedlab-cli sweep: " << jobs.error().message() << "\n";
    return kExitUsage;
  }
  const std::string dir = fs::absolute(dirArg).lexically_normal().string();
  if (auto previous = sweep::readManifest(dir);
      previous && !std::equal(previous->begin(), previous->end(), jobs->begin(), jobs->end(),
                              [](const Job& a, const Job& b) { return a.id == b.id; }))
    err << "sweep: " << dir << " held another plan (" << previous->size() << " jobs); its manifest now lists this one's "
        << jobs->size() << " (results of jobs in both are kept)\n";
  if (auto st = sweep::writeManifest(dir, *jobs); !st) {
    err << "schedlab-cli sweep: " << st.message() << "\n";
    return kExitFailure;
  }
  std::vector<const Job*> pending;
  for (const Job& job : *jobs)
    if (sweep::jobState(dir, job.id) != JobState::Done) pending.push_back(&job);

  if (emit == "parallel") {
    emitParallel(out, dir, pending);
    return kExitOk;
  }
  if (emit == "slurm") {
    if (pending.empty()) {
      err << "schedlab-cli sweep: every job of " << dir << " has its result; nothing to submit\n";
      return kExitOk;
    }
    std::error_code ec;
    fs::create_directories(fs::path(dir) / "slurm", ec);
    emitSlurm(out, dir, pending, *chunk);
    return kExitOk;
  }

  const double loadBefore = loadAverage();
  const size_t before = jobs->size() - pending.size();
  const size_t used = std::min(*workers, std::max<size_t>(1, pending.size()));
  const LocalRun r = runLocally(dir, pending, used, err);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.1f s", r.wallS);
  out << "sweep: " << jobs->size() << " jobs in " << dir << ": " << before << " done before, " << pending.size()
      << " run now (" << r.done << " done, " << r.failed << " failed) in " << buf << " with " << used
      << (used == 1 ? " worker\n" : " workers\n");
  if (r.failed) out << "sweep: the failed jobs' errors are in " << (fs::path(dir) / "jobs").string() << "/*.error.json\n";
  if (args->flag("--bench")) {
    core::JsonWriter j(false);
    j.beginObject();
    j.field("jobs", static_cast<uint64_t>(pending.size()));
    j.field("workers", static_cast<uint64_t>(used));
    j.field("wall_s", r.wallS);
    j.field("cpu_s", r.cpuS);
    j.field("wall_over_cpu_per_worker", r.cpuS > 0 ? r.wallS / (r.cpuS / static_cast<double>(used)) : 0.0);
    j.field("worker_occupancy", r.wallS > 0 ? r.jobsWallS / (r.wallS * static_cast<double>(used)) : 0.0);
    j.field("loadavg_before", loadBefore);
    j.field("loadavg_after", loadAverage());
    j.endObject();
    out << j.str() << "\n";
  }
  return r.failed ? kExitFailure : kExitOk;
}

int sweepJobCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  std::string error;
  auto args = Args::parse(argv, {}, {"--help", "--force"}, error);
  if (!args || args->flag("--help") || args->positional().size() < 2) {
    const bool help = args && args->flag("--help");
    if (!help) err << "schedlab-cli sweep-job: " << (args ? "expected RESULTS/ and at least one ID" : error) << "\n";
    (help ? out : err) << kSweepJobHelp;
    return help ? kExitOk : kExitUsage;
  }
  const std::string& dir = args->positional()[0];
  auto jobs = sweep::readManifest(dir);
  if (!jobs) {
    err << "schedlab-cli sweep-job: " << jobs.error().message() << "\n";
    return kExitUsage;
  }
  std::vector<const Job*> todo;
  for (size_t i = 1; i < args->positional().size(); ++i) {
    const std::string& id = args->positional()[i];
    auto it = std::find_if(jobs->begin(), jobs->end(), [&](const Job& j) { return j.id == id; });
    if (it == jobs->end()) {
      err << "schedlab-cli sweep-job: " << sweep::manifestPath(dir) << " has no job " << id << "\n";
      return kExitUsage;
    }
    todo.push_back(&*it);
  }
  int status = kExitOk;
  for (const Job* job : todo) {
    if (!args->flag("--force") && sweep::jobState(dir, job->id) == JobState::Done) {
      out << job->id << " done already\n";
      continue;
    }
    const bool ok = runJob(dir, *job);
    out << job->id << (ok ? " done" : " failed") << "\n";
    if (!ok) status = kExitFailure;
  }
  return status;
}

}  // namespace app::cli
