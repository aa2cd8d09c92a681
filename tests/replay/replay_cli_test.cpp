// `schedlab-cli replay`: output shapes, validation block, and clear one-line
// errors with the documented exit codes for bad usage and bad input.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "app/cli/cli.h"

namespace fs = std::filesystem;

namespace {

struct CliRun {
  int code = 0;
  std::string out;
  std::string err;
};

CliRun cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  std::vector<std::string> argv{"replay"};
  argv.insert(argv.end(), args.begin(), args.end());
  CliRun r;
  r.code = app::cli::run(argv, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::string fixture(const char* name) { return (fs::path(SCHEDLAB_TEST_DATA) / "replay" / name).string(); }

std::string writeTemp(const std::string& name, const std::string& text) {
  const auto path = fs::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST(ReplayCli, HumanOutputHasBothColumnsAndValidation) {
  const CliRun r = cli({fixture("pipe-small.txt"), "--model", "cfs"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("recorded"), std::string::npos);
  EXPECT_NE(r.out.find("replay"), std::string::npos);
  EXPECT_NE(r.out.find("Validation:"), std::string::npos);
  EXPECT_NE(r.out.find("makespan     recorded"), std::string::npos);
  EXPECT_NE(r.out.find("work         conserved"), std::string::npos);
  EXPECT_NE(r.out.find("latency_ns = 6000000"), std::string::npos);  // every parameter is listed
}

TEST(ReplayCli, JsonHasStatsSchemaModelParamsAndValidation) {
  const CliRun r = cli({fixture("hogs-small.txt"), "--model", "bfs", "--param", "rr_interval=3", "--hz", "1000", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* key : {"\"model\": \"bfs\"", "\"params\"", "\"rr_interval\": 3", "\"hz\": 1000", "\"tasks\"",
                          "\"cpus\"", "\"fairness\"", "\"recorded\"", "\"validation\"", "\"makespan_recorded_ns\"",
                          "\"makespan_replay_ns\"", "\"work_conserved\": true", "\"unmodelled\"",
                          "\"wakeups_from_interrupt\""})
    EXPECT_NE(r.out.find(key), std::string::npos) << key;
}

// Each parameter says what set it: the user, the model's default, or the
// replay (measured from the recording; the release, which this fixture's
// ftrace text does not record).
TEST(ReplayCli, JsonSaysWhatSetEachParameter) {
  const CliRun r = cli({fixture("pipe-small.txt"), "--model", "baseline", "--param", "hz=1000", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t origins = r.out.find("\"param_origins\": {");
  ASSERT_NE(origins, std::string::npos);
  const std::string block = r.out.substr(origins, r.out.find('}', origins) - origins);
  for (const char* entry : {"\"hz\": \"user\"", "\"timer_slack_ns\": \"default\"",
                            "\"preempt_wakeup_ns\": \"measured from the recording: median of ",
                            "\"release\": \"the recording does not say its kernel",
                            "\"context_switch_ns\": \"inside the recorded run times",
                            "\"migration_ns\": \"inside the recorded run times"})
    EXPECT_NE(block.find(entry), std::string::npos) << entry << " in " << block;
}

// A switch's and a migration's cost are said to be inside a recording's run
// times only when there is a recording and the user left them at 0.
TEST(ReplayCli, SwitchAndMigrationCostsAreTheRecordingsOnlyForARecording) {
  const auto origins = [](std::vector<std::string> args) {
    args.insert(args.end(), {"--model", "eevdf", "--json"});
    const CliRun r = cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    const size_t at = r.out.find("\"param_origins\": {");
    return at == std::string::npos ? std::string() : r.out.substr(at, r.out.find('}', at) - at);
  };
  const std::string wl = writeTemp("schedlab-cli-costs.json", R"({"tasks": {"a": {"loop": 2, "run": 100, "sleep": 100}}})");
  EXPECT_NE(origins({wl}).find("\"context_switch_ns\": \"default\""), std::string::npos);
  const std::string given = origins({fixture("pipe-small.txt"), "--param", "migration_ns=0"});
  EXPECT_NE(given.find("\"migration_ns\": \"user\""), std::string::npos) << given;
  EXPECT_NE(given.find("\"context_switch_ns\": \"inside the recorded run times"), std::string::npos) << given;
  std::remove(wl.c_str());
}

// A "derive it" value given explicitly (-1 = measured, release=auto) asks for
// the derivation: the replay stores what it derived and how, as for the
// default, not the -1 the user typed.
TEST(ReplayCli, ExplicitMeasureValuesAreReportedAsMeasured) {
  const auto run = [](std::vector<std::string> params) {
    std::vector<std::string> args = {fixture("pipe-small.txt"), "--model", "baseline", "--json"};
    for (const std::string& p : params) args.insert(args.end(), {"--param", p});
    const CliRun r = cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out;
  };
  const std::string byDefault = run({});
  const std::string explicitly = run({"preempt_wakeup_ns=-1", "release=auto", "irq_wakeup_time=measured"});
  EXPECT_EQ(byDefault, explicitly);
  EXPECT_NE(explicitly.find("\"preempt_wakeup_ns\": \"measured from the recording: median of "), std::string::npos);
  EXPECT_EQ(explicitly.find("\"preempt_wakeup_ns\": -1"), std::string::npos);
  // A concrete value stays the user's.
  EXPECT_NE(run({"preempt_wakeup_ns=1234"}).find("\"preempt_wakeup_ns\": \"user\""), std::string::npos);
}

// EEVDF of 6.12+ says how often DELAY_DEQUEUE kept a sleeper queued (a task
// that sleeps 1 ms after each 3 ms beside a hog on one CPU blocks behind it),
// in both forms; CFS has no such mechanism and prints no such line.
TEST(ReplayCli, EevdfSaysWhatDelayDequeueKeptQueued) {
  const std::string wl = writeTemp("schedlab-cli-dd.json", R"({"global": {"duration": 0.2}, "tasks": {
      "a": {"loop": -1, "run": 3000, "sleep": 1000}, "b": {"loop": -1, "run": 100000}}})");
  const CliRun human = cli({wl, "--model", "eevdf", "--topology", "1", "--param", "release=6.18.44"});
  ASSERT_EQ(human.code, 0) << human.err;
  EXPECT_NE(human.out.find("\nModel:       DELAY_DEQUEUE kept "), std::string::npos) << human.out;
  const CliRun json = cli({wl, "--model", "eevdf", "--topology", "1", "--param", "release=6.18.44", "--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  for (const char* key : {"\"model_counters\": {", "\"delayed_dequeues\": ", "\"delayed_busy_share\": "})
    EXPECT_NE(json.out.find(key), std::string::npos) << key;
  const CliRun cfs = cli({wl, "--model", "cfs", "--topology", "1"});
  ASSERT_EQ(cfs.code, 0) << cfs.err;
  EXPECT_EQ(cfs.out.find("Model:"), std::string::npos);
}

TEST(ReplayCli, RtAppWorkloadAndOutTrace) {
  const std::string wl = writeTemp("schedlab-cli-wl.json", R"({"global": {"duration": 0.2}, "tasks": {
      "a": {"loop": -1, "run": 3000, "sleep": 1000}, "b": {"loop": -1, "priority": 5, "run": 100000}}})");
  const std::string out = (fs::temp_directory_path() / "schedlab-cli-out.txt").string();
  const CliRun r = cli({wl, "--model", "vrq", "--topology", "1", "--out", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("(no recording)"), std::string::npos);
  std::ifstream in(out);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "# tracer: nop");
  // The written trace is a trace like any other.
  std::ostringstream o, e;
  EXPECT_EQ(app::cli::run({"info", out}, o, e), 0) << e.str();
  EXPECT_NE(o.str().find("ftrace-text"), std::string::npos);
  std::remove(out.c_str());
  std::remove(wl.c_str());
}

// Exit 2 for what the command line check finds (README: bad usage). A rule or
// parameter value that only the replay can check, against the workload
// (coresched.cookie selectors, cpu_speed's list), is found after the trace is
// read and exits 1 like bad input: each case names its code.
TEST(ReplayCli, BadArgumentsExitWithTheirCodeAndOneLine) {
  constexpr int kUsage = 2, kFoundByTheReplay = 1;
  struct Case {
    std::vector<std::string> args;
    const char* fragment;
    int code = kUsage;
  };
  const std::string trace = fixture("pipe-small.txt");
  const Case cases[] = {
      {{trace}, "--model is required"},
      {{trace, "--model", "o1"}, "unknown model 'o1' (known: cfs, eevdf, bfs, gc, vrq, and cfs or eevdf followed by"},
      {{trace, "--model", "bfs+coresched"}, "+coresched is modelled over cfs and eevdf only"},
      {{trace, "--model", "cfs", "--cookie", "per-process"}, "--cookie needs core scheduling: a model with +coresched"},
      {{trace, "--model", "cfs+coresched", "--cookie", "pid:1=x"}, "selector 'pid:1': expected comm:REGEX", kFoundByTheReplay},
      // Took std::regex 12 s per comm before it was refused (replay_text_fuzzer).
      {{trace, "--model", "cfs+coresched", "--cookie", "comm:t_**************x=A"},
       "selector 'comm:t_**************x': a quantifier on a quantified expression", kFoundByTheReplay},
      {{trace, "--model", "cfs", "--uclamp", "all=0:10"}, "--uclamp and --sysctl need a model with +uclamp"},
      {{trace, "--model", "cfs+coresched", "--param", "coresched.variant=v9"}, "coresched.variant=v9"},
      {{trace, "--model", "cfs", "--param", "latency"}, "--param 'latency': expected KEY=VALUE"},
      {{trace, "--model", "cfs", "--param", "slice_ns=5"}, "unknown parameter 'slice_ns'"},
      {{trace, "--model", "cfs", "--param", "latency_ns=fast"}, "latency_ns=fast: not an integer"},
      {{trace, "--model", "bfs", "--param", "rr_interval=0"}, "rr_interval=0: out of range 1..1000"},
      {{trace, "--model", "eevdf", "--param", "run_to_parity=maybe"}, "expected true or false"},
      {{trace, "--model", "cfs", "--hz", "0"}, "hz=0: out of range"},
      {{trace, "--model", "cfs", "--topology", "0x2"}, "impossible topology '0x2'"},
      {{trace, "--model", "cfs", "--topology", "two"}, "invalid topology 'two'"},
      {{trace, "--model", "cfs", "--param", "cpu_speed=1,x"}, "cpu_speed=1,x: expected numbers", kFoundByTheReplay},
      {{trace, "--model", "cfs", "--hz", "1000", "--param", "tick_delay_ns=1000000"},
       "a tick's delay must be shorter than the tick period", kFoundByTheReplay},
      {{"--model", "cfs"}, "expected one FILE"},
  };
  for (const Case& c : cases) {
    const CliRun r = cli(c.args);
    EXPECT_EQ(r.code, c.code) << c.fragment;
    EXPECT_NE(r.err.find(c.fragment), std::string::npos) << "stderr: " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

// --from/--to: units, '@' for absolute times, and times no trace has refused
// rather than overflowing (9.22337e9 s from a start of 12345.678901234 s
// passes INT64_MAX ns; 2^62 ns is the bound).
TEST(CliTime, UnitsAbsoluteTimesAndTheRange) {
  constexpr int64_t start = 12'345'678'901'234;
  EXPECT_EQ(app::cli::parseTime("1.5ms", start), start + 1'500'000);
  EXPECT_EQ(app::cli::parseTime("250us", start), start + 250'000);
  EXPECT_EQ(app::cli::parseTime("@12345.5", start), 12'345'500'000'000);
  EXPECT_EQ(app::cli::parseTime("2", 0), 2'000'000'000);
  EXPECT_FALSE(app::cli::parseTime("3 ms", start));
  EXPECT_FALSE(app::cli::parseTime("1.5h", start));
  EXPECT_FALSE(app::cli::parseTime("9.22337e9", start));
  EXPECT_FALSE(app::cli::parseTime("-9.22337e9", start));
  EXPECT_FALSE(app::cli::parseTime("4.7e9", 0));   // 2^62 ns = 4.61e9 s
  EXPECT_TRUE(app::cli::parseTime("4.6e9", 0));
  EXPECT_FALSE(app::cli::parseTime("1e400", start));
}

TEST(ReplayCli, BadInputExitsOneWithOneLine) {
  const std::string badJson = writeTemp("schedlab-cli-bad.json", "{\n  \"tasks\": {\"a\": {\"run\": 10,,}}\n}\n");
  CliRun r = cli({badJson, "--model", "cfs"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("schedlab-cli-bad.json: line 2, column 29: expected a quoted key"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;

  // A workload that names a CPU the replay topology does not have.
  const std::string pinned = writeTemp("schedlab-cli-pinned.json", R"({"tasks": {"a": {"loop": 1, "cpus": [3], "run": 10}}})");
  r = cli({pinned, "--model", "cfs", "--topology", "2"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("is pinned to CPU 3, which the replay topology (2 cores x 1 thread (user)) does not have"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;

  r = cli({"/nonexistent/trace.dat", "--model", "cfs"});
  EXPECT_EQ(r.code, 1);
  EXPECT_FALSE(r.err.empty());
  std::remove(badJson.c_str());
  std::remove(pinned.c_str());
}

TEST(ReplayCli, HelpListsModelsAndAModelsParameters) {
  CliRun r = cli({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* m : {"cfs", "eevdf", "bfs", "gc", "vrq", "makespan"}) EXPECT_NE(r.out.find(m), std::string::npos) << m;
  r = cli({"--help", "--model", "vrq"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("rr_interval = 6"), std::string::npos);
  EXPECT_NE(r.out.find("idle_wakeup_ns"), std::string::npos);
}

// The table cuts no cell: a recording's name and the model's release stand in
// full (cut at 40 and 12 characters, "interactive-batch.perfetto-trac" and
// "eevdf 6.18.4" named another file and another kernel), and its columns line up.
TEST(FidelityCli, TableCutsNoCellAndItsColumnsLineUp) {
  const std::string dir = (fs::path(SCHEDLAB_TEST_DATA) / "fidelity").string();
  std::ostringstream out, err;
  ASSERT_EQ(app::cli::run({"fidelity", dir + "/interactive-batch.perfetto-trace", dir + "/make-j2.perfetto-trace",
                           "--seeds", "2"},
                          out, err),
            0)
      << err.str();
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line) && !line.empty();) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u) << out.str();  // header, rule, two recordings
  EXPECT_NE(lines[2].find("| fidelity/interactive-batch.perfetto-trace |"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("| eevdf 6.18.44 |"), std::string::npos) << lines[2];
  const auto bars = [](const std::string& line) {
    std::vector<size_t> at;
    for (size_t i = 0; i < line.size(); ++i)
      if (line[i] == '|') at.push_back(i);
    return at;
  };
  EXPECT_EQ(bars(lines[0]).size(), 16u);  // 15 cells: recording, model, 11 metrics, verdict, seeds
  for (const std::string& line : lines) EXPECT_EQ(bars(line), bars(lines[0])) << line;
}

// `fidelity --seeds N` replays each recording once per seed: its per-seed
// column and sums must be what N separate runs with --param seed=K report.
TEST(FidelityCli, SeedsColumnIsEachSeedsOwnVerdict) {
  const std::string dir = (fs::path(SCHEDLAB_TEST_DATA) / "fidelity").string();
  const std::vector<std::string> files = {dir + "/make-j2.perfetto-trace", dir + "/nicemix.perfetto-trace"};
  auto run = [](std::vector<std::string> args) {
    std::ostringstream out, err;
    args.insert(args.begin(), "fidelity");
    const int code = app::cli::run(args, out, err);
    EXPECT_EQ(code, 0) << err.str();
    return out.str();
  };
  // "| name | ... | fail 2  | 2 1 3 |": the verdict count, then (with --seeds) the per-seed counts.
  auto rows = [](const std::string& table) {
    std::vector<std::vector<std::string>> out;
    std::istringstream in(table);
    for (std::string line; std::getline(in, line);) {
      if (line.find(".perfetto-trace") == std::string::npos) continue;
      std::vector<std::string> cells;
      std::istringstream cs(line);
      for (std::string c; std::getline(cs, c, '|');) cells.push_back(c);
      out.push_back(cells);
    }
    return out;
  };
  auto trim = [](std::string s) {
    s.erase(0, s.find_first_not_of(' '));
    s.erase(s.find_last_not_of(' ') + 1);
    return s;
  };
  const auto seeded = rows(run({files[0], files[1], "--seeds", "3"}));
  ASSERT_EQ(seeded.size(), 2u);
  size_t sums[3] = {0, 0, 0};
  for (int seed = 1; seed <= 3; ++seed) {
    const auto single = rows(run({files[0], files[1], "--param", "seed=" + std::to_string(seed)}));
    ASSERT_EQ(single.size(), 2u);
    for (size_t r = 0; r < 2; ++r) {
      const std::string verdict = trim(single[r][single[r].size() - 1]);  // "fail 2" or "pass 0"
      const std::string count = verdict.substr(verdict.find(' ') + 1);
      std::istringstream perSeed(seeded[r].back());
      std::string k;
      for (int i = 0; i < seed; ++i) perSeed >> k;
      EXPECT_EQ(k, count) << "row " << r << " seed " << seed;
      sums[seed - 1] += std::stoul(count);
      if (seed == 1) {
        EXPECT_EQ(trim(seeded[r][seeded[r].size() - 2]), verdict);  // the row itself is seed 1's
      }
    }
  }
  const std::string table = run({files[0], files[1], "--seeds", "3"});
  const std::string expected = "summed over the recordings: " + std::to_string(sums[0]) + " " + std::to_string(sums[1]) +
                               " " + std::to_string(sums[2]) + " (" + std::to_string(sums[0] + sums[1] + sums[2]) +
                               " over 3 seeds)";
  EXPECT_NE(table.find(expected), std::string::npos) << table;

  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"fidelity", files[0], "--seeds", "0"},
        std::vector<std::string>{"fidelity", files[0], "--seeds", "two"},
        std::vector<std::string>{"fidelity", files[0], "--seeds", "2", "--param", "seed=5"}}) {
    std::ostringstream out, err;
    EXPECT_EQ(app::cli::run(bad, out, err), 2);
    EXPECT_EQ(lines(err.str()), 1u) << err.str();
  }
}

// The table's last line counts, per metric, the replays that failed it: the
// same counts as the verdicts of `--json`, one block per recording and seed.
TEST(FidelityCli, FailuresPerMetricCountTheReplaysThatFailedEach) {
  const std::string dir = (fs::path(SCHEDLAB_TEST_DATA) / "fidelity").string();
  const std::vector<std::string> args = {"fidelity", dir + "/make-j1.perfetto-trace",
                                         dir + "/interactive-batch.perfetto-trace", "--seeds", "3"};
  std::ostringstream table, json, err;
  ASSERT_EQ(app::cli::run(args, table, err), 0) << err.str();
  std::vector<std::string> jsonArgs = args;
  jsonArgs.push_back("--json");
  ASSERT_EQ(app::cli::run(jsonArgs, json, err), 0) << err.str();

  // Each metric object writes its "key" first and its "verdict" last; every
  // block lists the metrics in the same order.
  std::vector<std::pair<std::string, int>> expected;  // key, failed replays, in that order
  const std::string text = json.str();
  int blocks = 0;
  for (size_t at = text.find("\"seed\": "); at != std::string::npos; at = text.find("\"seed\": ", at + 1)) ++blocks;
  EXPECT_EQ(blocks, 6);
  for (size_t at = text.find("\"key\": \""); at != std::string::npos; at = text.find("\"key\": \"", at + 1)) {
    const size_t from = at + 8;
    const std::string key = text.substr(from, text.find('"', from) - from);
    const size_t verdict = text.find("\"verdict\": \"", from);
    ASSERT_NE(verdict, std::string::npos);
    auto it = std::find_if(expected.begin(), expected.end(), [&](const auto& kv) { return kv.first == key; });
    if (it == expected.end()) it = expected.insert(expected.end(), {key, 0});
    it->second += text.compare(verdict + 12, 4, "fail") == 0;
  }
  std::string line = "Failed replays per metric (recordings x seeds):";
  bool any = false;
  for (const auto& [key, failed] : expected)
    if (failed) line += (any ? ", " : " ") + key + " " + std::to_string(failed), any = true;
  ASSERT_TRUE(any) << "these fixtures fail some metric at seeds 1-3 (README \"Replay fidelity\")";
  EXPECT_NE(table.str().find(line + "\n"), std::string::npos) << line << "\n" << table.str();
}

// A recording's ctf/ folder is its perf.data converted (`perf data convert
// --to-ctf`, ../shared/traces/recorded/README.md): `fidelity --formats
// perf,ctf` must find both and judge them alike, cell for cell but the name.
TEST(FidelityCli, CtfFolderIsJudgedAsItsPerfData) {
  const fs::path shared = fs::path(SCHEDLAB_SHARED_TRACES) / "recorded";
  if (!fs::is_directory(shared)) GTEST_SKIP() << "needs ../shared/traces/recorded (absent: " << shared << ")";
  std::ostringstream out, err;
  ASSERT_EQ(app::cli::run({"fidelity", shared.string(), "--formats", "perf,ctf", "--seeds", "2"}, out, err), 0)
      << err.str();
  std::map<std::string, std::string> rest;  // recording -> the row after its name
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line) && !line.empty();) {
    if (line.rfind("| ", 0) != 0) continue;
    const size_t bar = line.find(" | ", 2);
    std::string name = line.substr(2, bar - 2);
    name.erase(name.find_last_not_of(' ') + 1);
    rest[name] = line.substr(bar);
  }
  int pairs = 0;
  for (const auto& [name, row] : rest) {
    const size_t slash = name.rfind("/perf.data");
    if (slash == std::string::npos) continue;
    const auto ctf = rest.find(name.substr(0, slash) + "/ctf");
    ASSERT_NE(ctf, rest.end()) << name << " has no ctf row:\n" << out.str();
    EXPECT_EQ(ctf->second, row) << name;
    ++pairs;
  }
  EXPECT_GE(pairs, 4) << out.str();  // hackbench-proc, nicemix, pipe-threads, sysbench-mix
}

// `info` counts the tasks the autogroups saved beside the trace name: here
// (tests/data/autogroups/tid-reused.txt) two tasks of tid 101, the second
// forked after the first exited, in autogroups 5 and 9, and 102 in the root
// group.
TEST(InfoCli, CountsTheAutogroupsSavedBesideTheTrace) {
  const fs::path dir = fs::temp_directory_path() / ("schedlab-info-autogroups-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string trace = (dir / "t.txt").string();
  fs::copy_file(fs::path(SCHEDLAB_TEST_DATA) / "autogroups" / "tid-reused.txt", trace);
  std::ofstream(trace + ".autogroup") << "start 101 5 0\nstart 102 0 0\nend 101 9 0\n";
  std::ostringstream o, e;
  EXPECT_EQ(app::cli::run({"info", trace}, o, e), 0) << e.str();
  EXPECT_NE(o.str().find("Autogroups:  3 tasks as saved beside the trace: 1 in the root group, 2 in 2 session groups"),
            std::string::npos)
      << o.str();
  std::ostringstream oj, ej;
  EXPECT_EQ(app::cli::run({"info", trace, "--json"}, oj, ej), 0) << ej.str();
  std::string json = oj.str();
  json.erase(std::remove_if(json.begin(), json.end(), [](char c) { return c == ' ' || c == '\n'; }), json.end());
  EXPECT_NE(json.find("\"autogroups\":{\"tasks\":3,\"root_tasks\":1,\"groups\":2}"), std::string::npos) << oj.str();
  fs::remove_all(dir);
}
