// Sweeps as a user runs them: a plan expands into the jobs worked out by hand
// here (order, ranges, ids that do not depend on the rest of the plan) and bad
// plans are refused naming the place; `schedlab-cli sweep` as a process on
// three real recordings writes one result per job, killed half-way and rerun
// it does only the rest, and the GNU parallel job list run by `parallel -j2`
// gives the same bytes; killing a sweep kills its workers; a failed job records
// its error and the others go on; the Slurm script passes `bash -n` and its array tasks
// cover the jobs exactly once; the best and worst settings of a hand-made
// results folder are the ones worked out below, and the CSV has a row per job.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "app/cli/cli.h"
#include "app/cli/drawing_commands.h"
#include "app/sweep/sweep_plan.h"
#include "app/sweep/sweep_results.h"
#include "support/cli_process.h"
#include "support/scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using app::sweep::Job;
using app::sweep::Metric;
using test_support::ScratchDir;

const std::string kHogs = std::string(SCHEDLAB_TEST_DATA) + "/replay/hogs-small.txt";
const std::string kPipe = std::string(SCHEDLAB_TEST_DATA) + "/replay/pipe-small.txt";

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::vector<Job> expand(const std::string& planText) {
  auto plan = app::sweep::parsePlan(planText, "plan.json", "");
  EXPECT_TRUE(plan) << (plan ? "" : plan.error().message());
  if (!plan) return {};
  auto jobs = app::sweep::expandPlan(*plan);
  EXPECT_TRUE(jobs) << (jobs ? "" : jobs.error().message());
  return jobs ? *jobs : std::vector<Job>{};
}

std::string expandError(const std::string& planText) {
  auto plan = app::sweep::parsePlan(planText, "plan.json", "");
  if (!plan) return plan.error().message();
  auto jobs = app::sweep::expandPlan(*plan);
  return jobs ? std::string("(expanded into ") + std::to_string(jobs->size()) + " jobs)" : jobs.error().message();
}

std::string describe(const Job& job) {
  return fs::path(job.trace).filename().string() + " " + job.model + (job.reference ? " reference" : "") + " " +
         job.settingsText();
}

TEST(SweepPlan, ExpandsPerTraceTheReferenceThenModelsTimesAxesWithTheLastAxisFastest) {
  const auto jobs = expand(R"({"traces": [")" + kHogs + R"(", ")" + kPipe + R"("],
    "models": ["cfs", {"model": "bfs", "params": {"rr_interval": [3, 6]}}],
    "params": {"hz": [250, 1000]}})");
  // Worked out from the plan: 1 reference + cfs x 2 hz + bfs x 2 hz x 2 rr_interval = 7 per trace.
  const std::vector<std::string> perTrace = {
      "baseline reference defaults", "cfs hz=250",
      "cfs hz=1000",                 "bfs hz=250, rr_interval=3",
      "bfs hz=250, rr_interval=6",   "bfs hz=1000, rr_interval=3",
      "bfs hz=1000, rr_interval=6"};
  ASSERT_EQ(jobs.size(), 14u);
  for (size_t i = 0; i < jobs.size(); ++i)
    EXPECT_EQ(describe(jobs[i]), (i < 7 ? "hogs-small.txt " : "pipe-small.txt ") + perTrace[i % 7]) << i;
  EXPECT_EQ(jobs[3].replayArgs(), (std::vector<std::string>{kHogs, "--model", "bfs", "--param", "hz=250", "--param",
                                                            "rr_interval=3", "--json"}));
  std::set<std::string> ids;
  for (const Job& j : jobs) ids.insert(j.id);
  EXPECT_EQ(ids.size(), jobs.size());
}

TEST(SweepPlan, ARangeReadsAsTypedAndRulesListsAreOneValue) {
  const auto jobs = expand(R"({"traces": ")" + kHogs + R"(", "reference": false, "topology": "1x2",
    "models": ["cfs+coresched"],
    "params": {"smt.factor": {"from": 0.5, "to": 0.9, "step": 0.1},
               "coresched.cookie": ["per-process", ["comm:^a$=A", "comm:^b$=B"]]}})");
  // 0.5 + 4 * 0.1 is 0.9000000000000001 in binary: the fifth value must still be there and read 0.9.
  ASSERT_EQ(jobs.size(), 10u);
  EXPECT_EQ(jobs[0].settingsText(), "smt.factor=0.5, coresched.cookie=per-process, topology 1x2");
  EXPECT_EQ(jobs[1].settingsText(), "smt.factor=0.5, coresched.cookie=comm:^a$=A;comm:^b$=B, topology 1x2");
  EXPECT_EQ(jobs[9].settingsText(), "smt.factor=0.9, coresched.cookie=comm:^a$=A;comm:^b$=B, topology 1x2");
  EXPECT_EQ(jobs[4].params[0].value, "0.7");
}

TEST(SweepPlan, AJobHasTheSameIdInEveryPlanThatHoldsIt) {
  const auto small = expand(R"({"traces": [")" + kHogs + R"("], "models": ["cfs"], "params": {"hz": [1000]}})");
  const auto large = expand(R"({"traces": [")" + kPipe + R"(", ")" + kHogs +
                            R"("], "models": ["bfs", "cfs"], "params": {"hz": [250, 1000]}})");
  ASSERT_EQ(small.size(), 2u);
  const std::string id = small[1].id;  // hogs, cfs, hz=1000
  size_t found = 0;
  for (const Job& j : large)
    if (j.id == id) {
      ++found;
      EXPECT_EQ(describe(j), "hogs-small.txt cfs hz=1000");
    }
  EXPECT_EQ(found, 1u);
  EXPECT_EQ(small[0].id, large[5].id) << "the reference of hogs-small.txt";
}

TEST(SweepPlan, BadPlansAreRefusedNamingWhereAndWhy) {
  const std::string traces = R"("traces": [")" + kHogs + R"("], )";
  EXPECT_EQ(expandError("{" + traces + "\n  \"modles\": [\"cfs\"]}"),
            "plan.json: line 2, column 13: unknown key \"modles\" (a plan has traces, models, params, topology and reference)");
  EXPECT_NE(expandError("{" + traces + R"("models": ["nosuch"]})").find("nosuch"), std::string::npos);
  EXPECT_EQ(expandError("{" + traces + R"("models": ["cfs"], "params": {"rr_interval": [6]}})"),
            "model cfs has no parameter 'rr_interval' (see `schedlab-cli replay --help --model cfs`)");
  EXPECT_NE(expandError("{" + traces + R"("models": ["cfs"], "params": {"hz": ["fast"]}})").find("model cfs: "),
            std::string::npos);
  EXPECT_EQ(expandError(R"({"traces": ["/nonexistent/*.dat"], "models": ["cfs"]})"),
            "no trace matches '/nonexistent/*.dat'");
  EXPECT_EQ(expandError("{" + traces + R"("models": [{"model": "cfs", "params": {"hz": [250]}}], "params": {"hz": [1000]}})"),
            "parameter 'hz' is given for every model and again for cfs");
  EXPECT_EQ(expandError("{" + traces + R"("models": ["cfs"], "params": {"hz": {"from": 1000, "to": 250, "step": 250}}})"),
            "plan.json: line 1, column " + std::to_string(traces.size() + 38) + ": a range needs step > 0 and to >= from");
}

// ---- schedlab-cli sweep as a process ----

struct Exit {
  int status = -1;
  std::string output;
};

pid_t spawnCli(const std::vector<std::string>& args, const std::string& log) {
  return test_support::spawnCli(SCHEDLAB_CLI_BINARY, args, log);
}

Exit runCli(const std::vector<std::string>& args, const std::string& log) {
  Exit e;
  const pid_t pid = spawnCli(args, log);
  if (pid > 0) ::waitpid(pid, &e.status, 0);
  e.output = readFile(log);
  return e;
}

// Every finished result of RESULTS/: id -> its bytes (temporaries, errors and the manifest left out).
std::map<std::string, std::string> results(const fs::path& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir / "jobs", ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(".") || name.ends_with(".error.json") || !name.ends_with(".json")) continue;
    out[name.substr(0, name.size() - 5)] = readFile(e.path());
  }
  return out;
}

// The pids of the `sweep-job DIR ...` processes running now.
std::vector<pid_t> workersOf(const fs::path& dir) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::string cmdline = readFile(e.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(" sweep-job " + dir.string() + " ") != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

template <class Condition>
bool eventually(Condition done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

std::vector<std::string> threeRecordingsByThreeModelsByTwoValues(const fs::path& out) {
  const std::string recorded = std::string(SCHEDLAB_SHARED_TRACES) + "/recorded/";
  return {"sweep", "-o", out.string(), "--no-reference",
          "--trace", recorded + "nicemix/trace.dat", "--trace", recorded + "sysbench-mix/trace.dat",
          "--trace", recorded + "pipe-threads/trace.dat",
          "--model", "cfs", "--model", "eevdf", "--model", "bfs", "--param", "hz=250,1000"};
}

class RecordedSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(std::string(SCHEDLAB_SHARED_TRACES) + "/recorded/pipe-threads/trace.dat"))
      GTEST_SKIP() << "needs the recordings of " << SCHEDLAB_SHARED_TRACES << "/recorded (absent here)";
  }
};

TEST_F(RecordedSweep, KilledHalfWayAndRerunItDoesOnlyTheRestAndGnuParallelGivesTheSameBytes) {
  ScratchDir scratch("sweep-kill");
  const fs::path local = scratch.path() / "local";
  // One worker, so the kill lands between results: 18 replays of ~20-60 ms each.
  auto args = threeRecordingsByThreeModelsByTwoValues(local);
  args.insert(args.end(), {"-j", "1"});
  const pid_t pid = spawnCli(args, scratch.file("first.log"));
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (results(local).size() < 4 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::this_thread::sleep_for(200ms);  // the worker dies with it (next test)
  const auto before = results(local);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the sweep finished before it was killed: " << readFile(scratch.file("first.log"));
  ASSERT_GE(before.size(), 4u);
  ASSERT_LT(before.size(), 18u);
  std::map<std::string, fs::file_time_type> mtimes;
  for (const auto& [id, text] : before) mtimes[id] = fs::last_write_time(local / "jobs" / (id + ".json"));

  const Exit rerun = runCli(threeRecordingsByThreeModelsByTwoValues(local), scratch.file("rerun.log"));
  ASSERT_EQ(rerun.status, 0) << rerun.output;
  const std::string counts = std::to_string(before.size()) + " done before, " + std::to_string(18 - before.size()) +
                             " run now (" + std::to_string(18 - before.size()) + " done, 0 failed)";
  EXPECT_NE(rerun.output.find("sweep: 18 jobs in " + local.string() + ": " + counts), std::string::npos) << rerun.output;
  const auto all = results(local);
  EXPECT_EQ(all.size(), 18u);
  for (const auto& [id, when] : mtimes) {
    EXPECT_EQ(fs::last_write_time(local / "jobs" / (id + ".json")), when) << id << " was run again";
    EXPECT_EQ(all.at(id), before.at(id));
  }

  // The same sweep through GNU parallel: the job list, run by parallel -j2.
  if (::system("command -v parallel >/dev/null 2>&1") != 0) GTEST_SKIP() << "GNU parallel is not installed";
  const fs::path viaParallel = scratch.path() / "parallel";
  auto emit = threeRecordingsByThreeModelsByTwoValues(viaParallel);
  emit.insert(emit.end(), {"--emit", "parallel"});
  const Exit list = runCli(emit, scratch.file("jobs.txt"));
  ASSERT_EQ(list.status, 0) << list.output;
  EXPECT_EQ(std::count(list.output.begin(), list.output.end(), '\n'), 18);
  const std::string command = "parallel -j2 < '" + scratch.file("jobs.txt") + "' > '" + scratch.file("parallel.log") + "' 2>&1";
  ASSERT_EQ(::system(command.c_str()), 0) << readFile(scratch.file("parallel.log"));
  const auto parallelResults = results(viaParallel);
  ASSERT_EQ(parallelResults.size(), 18u);
  for (const auto& [id, text] : all) EXPECT_TRUE(parallelResults.at(id) == text) << id << " differs between the runners";
  EXPECT_EQ(readFile(viaParallel / "sweep.json"), readFile(local / "sweep.json"));
}

// A job that never ends (its trace a FIFO nobody writes): killing the sweep kills it too.
TEST(Sweep, KillingTheSweepKillsItsWorkers) {
  ScratchDir scratch("sweep-orphans");
  const std::string fifo = scratch.file("never.txt");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const fs::path out = scratch.path() / "results";
  const pid_t pid = spawnCli({"sweep", "-o", out.string(), "--trace", fifo, "--model", "cfs", "--no-reference"},
                             scratch.file("log"));
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(eventually([&] { return !workersOf(out).empty(); }, 20s)) << readFile(scratch.file("log"));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const bool gone = eventually([&] { return workersOf(out).empty(); }, 5s);
  for (pid_t orphan : workersOf(out)) ::kill(orphan, SIGKILL);
  EXPECT_TRUE(gone) << "a worker outlived the sweep";
}

TEST(Sweep, AFailedJobRecordsItsErrorAndTheOthersGoOn) {
  ScratchDir scratch("sweep-failed");
  const std::string bad = scratch.file("not-a-trace.txt");
  writeFile(bad, "this is no trace\n");
  const fs::path out = scratch.path() / "results";
  const Exit e = runCli({"sweep", "-o", out.string(), "--trace", bad, "--trace", kHogs, "--model", "cfs", "--no-reference"},
                        scratch.file("log"));
  EXPECT_EQ(WEXITSTATUS(e.status), 1) << e.output;
  EXPECT_NE(e.output.find("2 run now (1 done, 1 failed)"), std::string::npos) << e.output;
  auto read = app::sweep::readResults(out.string());
  ASSERT_TRUE(read) << read.error().message();
  ASSERT_EQ(read->jobs.size(), 2u);
  EXPECT_EQ(read->done, 1u);
  EXPECT_EQ(read->failed, 1u);
  const auto& failed = read->jobs[0];
  EXPECT_EQ(failed.state, app::sweep::JobState::Failed);
  EXPECT_NE(failed.error.find(bad), std::string::npos) << "the error names the file: " << failed.error;
  EXPECT_EQ(read->jobs[1].state, app::sweep::JobState::Done);
  EXPECT_TRUE(read->jobs[1].value(Metric::Makespan).has_value());

  // Rerun, only the failed job runs again (and fails again).
  const Exit again = runCli({"sweep", "-o", out.string(), "--trace", bad, "--trace", kHogs, "--model", "cfs", "--no-reference"},
                            scratch.file("log2"));
  EXPECT_NE(again.output.find("1 done before, 1 run now (0 done, 1 failed)"), std::string::npos) << again.output;
}

TEST(Sweep, TheSlurmScriptPassesBashNAndItsArrayTasksCoverThePendingJobsOnce) {
  ScratchDir scratch("sweep-slurm");
  const std::string dir = scratch.file("results");
  const std::vector<std::string> sweep = {"sweep", "-o", dir, "--trace", kHogs, "--trace", kPipe, "--model", "cfs",
                                          "--model", "bfs", "--param", "hz=250,1000,300"};
  auto emitScript = [&](const std::string& name) {
    auto args = sweep;
    args.insert(args.end(), {"--emit", "slurm", "--chunk", "4"});
    std::ostringstream out, err;
    EXPECT_EQ(app::cli::run(args, out, err), 0) << err.str();
    writeFile(scratch.file(name), out.str());
    return out.str();
  };
  // What the array tasks run, task by task: the script with a stand-in for schedlab-cli that says its arguments.
  auto expand = [&](const std::string& name, const std::string& script) {
    const auto at = script.find("#SBATCH --array=0-");
    EXPECT_NE(at, std::string::npos);
    const int last = std::stoi(script.substr(at + 18));
    std::vector<std::string> ids;
    for (int task = 0; task <= last; ++task) {
      const std::string cmd = "SLURM_ARRAY_TASK_ID=" + std::to_string(task) + " SCHEDLAB_CLI=echo bash '" +
                              scratch.file(name) + "' > '" + scratch.file("task.out") + "'";
      EXPECT_EQ(::system(cmd.c_str()), 0) << cmd;
      std::istringstream words(readFile(scratch.file("task.out")));
      std::string word;
      words >> word;
      EXPECT_EQ(word, "sweep-job");
      words >> word;
      EXPECT_EQ(word, dir);
      size_t n = 0;
      for (; words >> word; ++n) ids.push_back(word);
      EXPECT_TRUE(n >= 1 && n <= 4) << "task " << task << " runs " << n << " jobs";
    }
    return ids;
  };
  const std::string script = emitScript("sweep.sh");
  ASSERT_EQ(::system(("bash -n '" + scratch.file("sweep.sh") + "'").c_str()), 0) << script;
  auto manifest = app::sweep::readManifest(dir);
  ASSERT_TRUE(manifest);
  ASSERT_EQ(manifest->size(), 14u);  // per trace: the reference, 2 models x 3 hz
  std::vector<std::string> want;
  for (const Job& j : *manifest) want.push_back(j.id);
  auto got = expand("sweep.sh", script);
  EXPECT_EQ(script.find("#SBATCH --array=0-3\n") != std::string::npos, true) << "14 jobs, 4 a task: 4 tasks";
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);

  // With one job done, the next script leaves it out.
  std::ostringstream out, err;
  ASSERT_EQ(app::cli::run({"sweep-job", dir, (*manifest)[2].id}, out, err), 0) << err.str();
  got = expand("again.sh", emitScript("again.sh"));
  want.erase(std::find(want.begin(), want.end(), (*manifest)[2].id));
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
}

// ---- a hand-made results folder: the best and worst settings ----

// A replay document holding only what the sweep reads.
std::string document(double makespan, double p99, double jain) {
  std::ostringstream s;
  s << R"({"model": "x", "fairness": {"jain": )" << jain << R"(}, "totals": {"wakeup_latency_ns": {"p50": 1, "p99": )"
    << p99 << R"(}}, "validation": {"makespan_replay_ns": )" << makespan
    << R"(, "fidelity": {"verdict": "pass"}}})";
  return s.str();
}

struct HandMade {
  ScratchDir scratch{"sweep-handmade"};
  std::string dir = scratch.file("results");
  std::vector<Job> jobs;
  HandMade() {
    // Two traces of different lengths; per trace the reference, "cfs hz=250" (s1) and "bfs hz=1000" (s2), and a
    // third setting that failed on B and is pending nowhere else.
    for (const std::string trace : {"/t/a/trace.dat", "/t/b/trace.dat"}) {
      jobs.push_back({trace + "-ref", trace, "baseline", {}, {}, true});
      jobs.push_back({trace + "-s1", trace, "cfs", {{"hz", "250"}}, {}, false});
      jobs.push_back({trace + "-s2", trace, "bfs", {{"hz", "1000"}}, {}, false});
      jobs.push_back({trace + "-s3", trace, "bfs", {{"hz", "300"}}, {}, false});
    }
    for (Job& j : jobs) j.id = std::to_string(&j - jobs.data());
    EXPECT_TRUE(app::sweep::writeManifest(dir, jobs));
    // makespan: A ref 100, s1 80, s2 120, s3 50; B ref 1000, s1 1100, s2 900, s3 failed.
    const double makespan[] = {100, 80, 120, 50, 1000, 1100, 900, 0};
    const double jain[] = {0.9, 0.8, 0.95, 0.9, 0.5, 0.6, 0.7, 0};
    // p99: A ref and s1 share the best, 10; B every job 10.
    const double p99[] = {10, 10, 20, 30, 10, 10, 10, 0};
    for (size_t i = 0; i < 7; ++i)
      writeFile(app::sweep::resultPath(dir, jobs[i].id), document(makespan[i], p99[i], jain[i]));
    writeFile(app::sweep::errorPath(dir, jobs[7].id), R"({"id": "7", "exit_code": 1, "error": "bad, \"quoted\""})");
  }
};

TEST(SweepResults, BestAndWorstPerTraceAndOverAllTracesRelativeToTheReferences) {
  HandMade made;
  auto r = app::sweep::readResults(made.dir);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->done, 7u);
  EXPECT_EQ(r->failed, 1u);
  EXPECT_EQ(r->jobs[7].error, "bad, \"quoted\"");
  const auto summaries = r->summaries();
  auto summary = [&](Metric m) {
    for (const auto& s : summaries)
      if (s.metric == m) return s;
    ADD_FAILURE() << "no summary";
    return app::sweep::MetricSummary{};
  };
  const auto makespan = summary(Metric::Makespan);
  ASSERT_EQ(makespan.perTrace.size(), 2u);
  EXPECT_EQ(*makespan.perTrace[0].second.best, 3u);   // A: s3, 50
  EXPECT_EQ(*makespan.perTrace[0].second.worst, 2u);  // A: s2, 120
  EXPECT_EQ(*makespan.perTrace[1].second.best, 6u);   // B: s2, 900
  EXPECT_EQ(*makespan.perTrace[1].second.worst, 5u);  // B: s1, 1100
  // Over all traces, only the settings done on both: s3 is out. Relative to the reference:
  // s1 (0.8 + 1.1) / 2 = 0.95, reference 1, s2 (1.2 + 0.9) / 2 = 1.05. (The plain means, 590 and 510,
  // would rank s2 first: the long trace would decide.)
  ASSERT_TRUE(makespan.relative);
  ASSERT_EQ(makespan.overall.size(), 3u);
  EXPECT_EQ(makespan.overall[0].settings, "hz=250");
  EXPECT_DOUBLE_EQ(*makespan.overall[0].relative, 0.95);
  EXPECT_EQ(makespan.overall[1].model, "baseline");
  EXPECT_EQ(makespan.overall[2].settings, "hz=1000");
  EXPECT_DOUBLE_EQ(*makespan.overall[2].relative, 1.05);
  EXPECT_DOUBLE_EQ(makespan.overall[2].mean, 510);
  // Jain's index: higher is better. A: s2 0.95 best, s1 0.8 worst; B: s2 best, reference 0.5 worst.
  const auto jain = summary(Metric::Jain);
  EXPECT_EQ(*jain.perTrace[0].second.best, 2u);
  EXPECT_EQ(*jain.perTrace[0].second.worst, 1u);
  EXPECT_EQ(*jain.perTrace[1].second.worst, 4u);
  // s2: (0.95/0.9 + 0.7/0.5) / 2 = 1.2277..., s1: (0.8/0.9 + 0.6/0.5) / 2 = 1.0444...
  EXPECT_EQ(jain.overall[0].settings, "hz=1000");
  EXPECT_NEAR(*jain.overall[0].relative, (0.95 / 0.9 + 1.4) / 2, 1e-12);
  // p99: on A the reference (named) and s1 share the best, s3 alone the worst; on B every job has 10,
  // a tie, which names no best.
  const auto p99 = summary(Metric::LatencyP99);
  EXPECT_FALSE(p99.perTrace[0].second.tied);
  EXPECT_EQ(*p99.perTrace[0].second.best, 0u);
  EXPECT_EQ(p99.perTrace[0].second.othersAsBest, 1u);
  EXPECT_EQ(*p99.perTrace[0].second.worst, 3u);
  EXPECT_EQ(p99.perTrace[0].second.othersAsWorst, 0u);
  EXPECT_TRUE(p99.perTrace[1].second.tied);
  EXPECT_EQ(summary(Metric::Makespan).perTrace[0].second.othersAsBest, 0u);
}

#ifdef SCHEDLAB_HAVE_REPORT
TEST(SweepReport, TheCsvHasOneRowPerJobWithItsParametersAndMetrics) {
  HandMade made;
  const std::string csv = made.scratch.file("report.csv");
  std::ostringstream out, err;
  ASSERT_EQ(app::cli::sweepReportCommand({made.dir, "-o", csv}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("8 jobs, 7 done, 1 failed, 0 not run"), std::string::npos) << out.str();
  std::istringstream lines(readFile(csv));
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 9u) << "a header and a row per job";
  EXPECT_EQ(rows[0],
            "id,trace,model,resolved_model,param.hz,topology,reference,state,makespan_ns,wakeup_latency_p50_ns,"
            "wakeup_latency_p99_ns,jain,forced_idle_ns,energy_j,fidelity,baseline_fidelity,error");
  EXPECT_EQ(rows[2], "1,/t/a/trace.dat,cfs,x,250,,false,done,80,1,10,0.8,,,pass,pass,");
  EXPECT_EQ(rows[3], "2,/t/a/trace.dat,bfs,x,1000,,false,done,120,1,20,0.95,,,pass,pass,");
  EXPECT_EQ(rows[8], "7,/t/b/trace.dat,bfs,,300,,false,failed,,,,,,,,pass,\"bad, \"\"quoted\"\"\"");
}
#endif

}  // namespace
