// The recorder (recorder/) on this machine's own kernel: a recording of
// hackbench imports with the event counts `trace-cmd report` prints for the same
// file, its topology snapshot holds what sysfs holds, overruns arrive as data
// loss with the kernel's own counts, and the machine's tracing state (every
// event enable, buffer_size_kb, tracing_on, the instances) is what it was before:
// after a run, after Stop, SIGINT, SIGKILL of `schedlab-cli record`, a crashing
// command, a command that cannot start, and a full disk. Needs root and
// tracefs (CI has both); elsewhere each test says why it skips.
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "app/cli/cli.h"
#include "core/sched_settings.h"
#include "core/topology.h"
#include "core/topology_snapshot.h"
#include "importers/importer.h"
#include "importers/tracedat/tracedat_test_support.h"
#include "recorder/recorder.h"
#include "recorder/tracefs_instance.h"
#include "support/cli_process.h"
#include "support/scratch_dir.h"
#include "support/tracefs_support.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test_support::ScratchDir;

// Short workloads: 2 groups of 20 hackbench processes, 20 loops (~0.1 s here).
const std::vector<std::string> kHackbench = {"hackbench", "-g", "2", "-l", "20"};

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether a process with exactly this command line exists (the commands the
// tests run carry an argument no other process has, e.g. "sleep 47.25").
bool processRuns(const std::vector<std::string>& argv) {
  std::string want;
  for (const auto& a : argv) want += a + '\0';
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec))
    if (readFile(e.path() / "cmdline") == want) return true;
  return false;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

class Recording : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = tracefs_test::recordingUnavailable(); !why.empty()) GTEST_SKIP() << why;
    m_tracefs = tracefs_test::tracefsRoot();
    m_before = tracefs_test::tracingState(m_tracefs);
  }
  void expectTracingAsBefore() {
    EXPECT_EQ(tracefs_test::changes(m_before, tracefs_test::tracingState(m_tracefs)), "");
  }
  core::Result<recorder::RecordResult> record(recorder::RecordOptions options, const recorder::ProgressFn& p = {},
                                              std::stop_token stop = {}) {
    return recorder::record(options, p, std::move(stop));
  }
  std::string m_tracefs;
  std::map<std::string, std::string> m_before;
};

TEST_F(Recording, HackbenchImportsWithTraceCmdReportsCountsAndTheSysfsTopology) {
  ScratchDir dir("record-hackbench");
  recorder::RecordOptions o;
  o.output = dir.file("hackbench.dat");
  o.events = "sched+power";
  o.command = kHackbench;
  auto r = record(o);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->commandExit, "exited with status 0");
  EXPECT_FALSE(r->stoppedEarly);
  EXPECT_GT(r->bytes, 0u);
  EXPECT_EQ(r->topologyFile, o.output + ".topology");
  expectTracingAsBefore();

  auto m = tracedat_test::importWhole(o.output);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->format, "trace.dat v7 (zstd)");
  EXPECT_TRUE(m->metadata["recorder"].starts_with("SchedLab ")) << m->metadata["recorder"];
  const auto ours = tracedat_test::counts(*m);
  ASSERT_GT(ours.count("sched_switch"), 0u);
  EXPECT_GT(ours.at("sched_switch"), 100u);  // 40 processes passing messages
  EXPECT_GT(ours.count("sched_process_fork"), 0u);
  if (tracedat_test::haveTraceCmd()) {
    EXPECT_EQ(ours, tracedat_test::traceCmdReportCounts(o.output));
  }
  bool sawHackbench = false;
  for (uint32_t u = 1; u < m->threads.size(); ++u)
    sawHackbench |= m->strings.get(m->threads.comm[u]) == "hackbench";
  EXPECT_TRUE(sawHackbench);

  // The topology used is the snapshot's, and the snapshot is what sysfs says.
  EXPECT_EQ(m->topology.source(), "hackbench.dat.topology");
  auto sysfs = core::Topology::fromSysfs("/sys/devices/system/cpu");
  ASSERT_TRUE(sysfs) << sysfs.error().message();
  EXPECT_EQ(m->topology.cores(), sysfs->cores());
  std::set<std::string> listed;
  std::istringstream lines(readFile(r->topologyFile));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(':');
    ASSERT_NE(colon, std::string::npos) << line;
    const std::string path = line.substr(0, colon);
    std::string value = readFile("/sys/devices/system/" + path);
    if (!value.empty() && value.back() == '\n') value.pop_back();
    EXPECT_EQ(line.substr(colon + 1), value) << path;
    listed.insert(path);
  }
  // The files the snapshot promises, found here independently of it.
  std::set<std::string> expected = {"cpu/online"};
  for (const auto& cpu : fs::directory_iterator("/sys/devices/system/cpu")) {
    const std::string name = cpu.path().filename().string();
    if (!fs::is_directory(cpu.path() / "topology")) continue;
    for (const char* f : {"core_id", "physical_package_id", "thread_siblings_list"})
      expected.insert("cpu/" + name + "/topology/" + f);
    if (fs::exists(cpu.path() / "topology" / "die_id")) expected.insert("cpu/" + name + "/topology/die_id");  // Linux 5.2+
    std::error_code ec;
    for (const auto& index : fs::directory_iterator(cpu.path() / "cache", ec))
      if (index.path().filename().string().starts_with("index"))
        for (const char* f : {"level", "type", "shared_cpu_list"})
          expected.insert("cpu/" + name + "/cache/" + index.path().filename().string() + "/" + f);
  }
  std::error_code ec;
  for (const auto& node : fs::directory_iterator("/sys/devices/system/node", ec))
    if (node.path().filename().string().starts_with("node")) expected.insert("node/" + node.path().filename().string() + "/cpulist");
  EXPECT_EQ(listed, expected);

  // The scheduler settings beside it are /proc/sys/kernel/sched_* file by
  // file, and the kernel's preemption model where its configuration shows it;
  // the import put them in the run's metadata.
  EXPECT_EQ(r->schedSettingsFile, o.output + ".sched");
  std::set<std::string> settings, schedFiles;
  std::string preempt;
  std::istringstream settingLines(readFile(r->schedSettingsFile));
  for (std::string line; std::getline(settingLines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t eq = line.find(" = ");
    ASSERT_NE(eq, std::string::npos) << line;
    const std::string name = line.substr(0, eq);
    if (name == core::kPreemptSetting) {
      preempt = line.substr(eq + 3);
      EXPECT_EQ(m->metadata[name], preempt);
      continue;
    }
    ASSERT_TRUE(name.starts_with("kernel.sched")) << line;
    std::istringstream file(readFile("/proc/sys/kernel/" + name.substr(7)));
    std::string word, words;
    while (file >> word) words += (words.empty() ? "" : " ") + word;
    EXPECT_EQ(line.substr(eq + 3), words) << name;
    EXPECT_EQ(m->metadata[name], words) << name;
    settings.insert(name.substr(7));
  }
  for (const auto& f : fs::directory_iterator("/proc/sys/kernel"))
    if (f.path().filename().string().starts_with("sched") && f.is_regular_file() && !readFile(f.path()).empty())
      schedFiles.insert(f.path().filename().string());
  EXPECT_EQ(settings, schedFiles);
  if (fs::exists("/proc/config.gz")) {
    EXPECT_TRUE(preempt == "none" || preempt == "voluntary" || preempt == "full" || preempt == "lazy")
        << "sched.preempt = '" << preempt << "' with /proc/config.gz to read";
  }

  // The autogroups beside it are /proc's: this process, whose thread drained
  // the buffers while tracing ran, is in the model with the group
  // /proc/self/autogroup names ("/autogroup-N nice K"; nothing: the root group).
  if (!fs::exists("/proc/self/autogroup")) return;  // a kernel without CONFIG_SCHED_AUTOGROUP: nothing to save
  EXPECT_EQ(r->autogroupsFile, o.output + ".autogroup");
  const std::string own = readFile("/proc/self/autogroup");
  const int32_t ownGroup = own.empty() ? 0 : std::stoi(own.substr(own.find('-') + 1));
  bool sawSelf = false;
  for (uint32_t u = 1; u < m->threads.size(); ++u)
    if (m->threads.tid[u] == ::getpid()) {
      EXPECT_EQ(m->threads.autogroup[u], ownGroup) << own;
      sawSelf = true;
    }
  EXPECT_TRUE(sawSelf);
}

TEST_F(Recording, ForADurationWithProgress) {
  ScratchDir dir("record-duration");
  recorder::RecordOptions o;
  o.output = dir.file("quiet.dat");
  o.duration = 300ms;
  std::vector<recorder::RecordProgress> seen;
  auto r = record(o, [&](const recorder::RecordProgress& p) { seen.push_back(p); });
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_GE(r->elapsed, 300ms);
  EXPECT_LT(r->elapsed, 3s);
  EXPECT_TRUE(r->commandExit.empty());
  ASSERT_GE(seen.size(), 3u);  // a drain every 100 ms
  double lastRecording = -1;
  for (const auto& p : seen)
    if (p.phase == recorder::Phase::Recording) {
      EXPECT_GE(p.fraction, lastRecording);
      lastRecording = p.fraction;
    }
  EXPECT_GE(lastRecording, 0.99);
  EXPECT_EQ(seen.back().phase, recorder::Phase::Writing);
  EXPECT_DOUBLE_EQ(seen.back().fraction, 1.0);
  expectTracingAsBefore();
  // A quiet machine still switches (kworkers, the recorder's own reads).
  auto m = tracedat_test::importWhole(o.output);
  ASSERT_TRUE(m);
  EXPECT_GT(m->eventCount, 0u);
}

TEST_F(Recording, StopEndsTheRecordingAndTheCommandAndWritesWhatWasRecorded) {
  ScratchDir dir("record-stop");
  recorder::RecordOptions o;
  o.output = dir.file("stopped.dat");
  o.command = {"sleep", "47.25"};
  std::stop_source stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    stop.request_stop();
  });
  auto r = record(o, {}, stop.get_token());
  stopper.join();
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->stoppedEarly);
  EXPECT_EQ(r->commandExit, "was killed by signal 15 (Terminated)");
  EXPECT_LT(r->elapsed, 5s);
  EXPECT_FALSE(processRuns(o.command));
  expectTracingAsBefore();
  EXPECT_TRUE(tracedat_test::importWhole(o.output));
}

TEST_F(Recording, ACrashingCommandIsRecordedAndReported) {
  ScratchDir dir("record-crash");
  recorder::RecordOptions o;
  o.output = dir.file("crash.dat");
  o.command = {"sh", "-c", "kill -SEGV $$"};
  auto r = record(o);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->commandExit, "was killed by signal 11 (Segmentation fault)");
  ASSERT_FALSE(r->notes.empty());
  EXPECT_EQ(r->notes.back(), "'sh' was killed by signal 11 (Segmentation fault)");
  expectTracingAsBefore();
  auto m = tracedat_test::importWhole(o.output);
  ASSERT_TRUE(m);
  EXPECT_GT(tracedat_test::counts(*m).count("sched_process_exit"), 0u);
}

TEST_F(Recording, ACommandThatCannotStartIsAnErrorAndLeavesNothing) {
  ScratchDir dir("record-nostart");
  recorder::RecordOptions o;
  o.output = dir.file("never.dat");
  o.command = {"no-such-command-schedlab"};
  auto r = record(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "cannot start 'no-such-command-schedlab': command not found");
  // Found and executable, but no program: exec itself fails, after tracing started.
  const std::string text = dir.file("not-a-program");
  std::ofstream(text) << "just text\n";
  fs::permissions(text, fs::perms::owner_all);
  o.command = {text};
  r = record(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "cannot start '" + text + "': " + std::strerror(ENOEXEC));
  EXPECT_FALSE(fs::exists(o.output));
  EXPECT_FALSE(fs::exists(o.output + ".topology"));
  EXPECT_FALSE(fs::exists(o.output + ".sched"));
  EXPECT_FALSE(fs::exists(o.output + ".autogroup"));
  expectTracingAsBefore();
}

TEST_F(Recording, EventsThisKernelLacksAreNamed) {
  ScratchDir dir("record-events");
  recorder::RecordOptions o;
  o.output = dir.file("none.dat");
  o.duration = 100ms;
  o.events = "sched:sched_switch,sched:no_such_event+nosys:*";
  auto r = record(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(),
            "this kernel has no such events: sched:no_such_event, nosys:* (see " + m_tracefs + "/events)");
  o.events = "bogus";
  r = record(o);
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().message().starts_with("unknown event set 'bogus'")) << r.error().message();
  EXPECT_FALSE(fs::exists(o.output));
  expectTracingAsBefore();
}

TEST_F(Recording, NoTracefsSaysSo) {
  ScratchDir dir("record-notracefs");
  recorder::RecordOptions o;
  o.output = dir.file("none.dat");
  o.duration = 100ms;
  o.tracefs = dir.path().string();
  auto r = record(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "no tracefs at " + o.tracefs + " (it is not a tracefs mount)");
}

TEST_F(Recording, WithoutRootOneLineSaysWhatToDo) {
  ScratchDir dir("record-noroot");
  fs::permissions(dir.path(), fs::perms::all);
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // nobody: what a user without root is.
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    recorder::RecordOptions o;
    o.output = dir.file("user.dat");
    o.duration = 100ms;
    auto r = recorder::record(o);
    const std::string message = r ? "recorded" : r.error().message();
    (void)!::write(out[1], message.data(), message.size());
    ::_exit(0);
  }
  ::close(out[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) message.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(message, recorder::needRootMessage());
  EXPECT_EQ(message.find('\n'), std::string::npos);
  expectTracingAsBefore();
}

TEST_F(Recording, ADiskThatFillsUpIsAnErrorAndLeavesNothing) {
  ScratchDir dir("record-full");
  const std::string small = dir.file("small");
  fs::create_directories(small);
  // 64 KB: less than the kallsyms a trace.dat holds, and than hackbench's events.
  if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a small tmpfs to fill: " << std::strerror(errno);
  recorder::RecordOptions o;
  o.output = small + "/full.dat";
  o.command = kHackbench;
  auto r = record(o);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(small)) left.push_back(e.path().filename().string());
  ::umount(small.c_str());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("disk full"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find(o.output), std::string::npos) << r.error().message();
  EXPECT_TRUE(left.empty()) << left.front();
  expectTracingAsBefore();
}

TEST_F(Recording, OverrunsArriveAsDataLossWithTheKernelsCounts) {
  ScratchDir dir("record-overrun");
  recorder::RecordOptions o;
  o.output = dir.file("overrun.dat");
  o.command = {"hackbench", "-g", "2", "-l", "300"};
  o.bufferKb = recorder::kMinBufferKb;
  o.drainInterval = std::chrono::hours(1);  // read once, at the end: the 16 KB buffers overrun
  auto r = record(o);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_FALSE(r->losses.empty());
  EXPECT_GT(r->lostTotal(), 1000u);
  auto m = tracedat_test::importWhole(o.output);
  ASSERT_TRUE(m);
  // Per CPU, the model's lost events are the kernel's overrun (per_cpu/cpuN/stats).
  for (const auto& loss : r->losses) {
    SCOPED_TRACE(loss.cpu);
    int64_t lost = 0;
    size_t rows = 0;
    for (size_t i = 0; i < m->dataLoss.size(); ++i)
      if (m->dataLoss.cpu[i] == loss.cpu) {
        ++rows;
        EXPECT_GT(m->dataLoss.count[i], 0);
        lost += m->dataLoss.count[i];
      }
    EXPECT_EQ(rows, 1u);  // read once: one gap, before the oldest page kept
    EXPECT_EQ(lost, static_cast<int64_t>(loss.overrun));
  }
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::lost_events), r->lostTotal());
  expectTracingAsBefore();
}

// --- schedlab-cli record, as a process that gets signals ---

pid_t spawnCli(const std::vector<std::string>& args, const std::string& log) {
  return test_support::spawnCli(SCHEDLAB_CLI_BINARY, args, log);
}

// The CLI's instance, once tracing in it is on.
std::string recordingInstanceOf(const std::string& tracefs, pid_t pid) {
  const std::string prefix = std::string(recorder::TracefsInstance::kNamePrefix) + std::to_string(pid) + "-";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(tracefs + "/instances", ec))
    if (e.path().filename().string().starts_with(prefix) && readFile(e.path() / "tracing_on") == "1\n")
      return e.path().string();
  return {};
}

int waitExit(pid_t pid) {
  int status = 0;
  const bool exited = eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, 20s);
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }
  return status;
}

// In a PID namespace of its own /proc numbers tasks otherwise than the trace
// does: the recording is written, and says that no autogroups were saved
// rather than saving ones under the wrong task ids.
TEST_F(Recording, InAPidNamespaceOfItsOwnNoAutogroupsAreSaved) {
  ScratchDir dir("record-pidns");
  const std::string out = dir.file("ns.dat"), log = dir.file("log");
  if (std::system(("unshare --pid --fork --mount-proc true > " + log + " 2>&1").c_str()) != 0)
    GTEST_SKIP() << "unshare --pid cannot make a PID namespace here: " << readFile(log);
  const std::string command = "unshare --pid --fork --mount-proc " + std::string(SCHEDLAB_CLI_BINARY) + " record -o " +
                              out + " --duration 200ms > " + log + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << readFile(log);
  EXPECT_TRUE(fs::exists(out));
  EXPECT_TRUE(fs::exists(out + ".sched"));
  EXPECT_FALSE(fs::exists(out + ".autogroup"));
  EXPECT_NE(readFile(log).find("no task autogroups saved: this process is in a PID namespace of its own"),
            std::string::npos)
      << readFile(log);
  expectTracingAsBefore();
}

// A recorder that cannot see this process's PID (in a container sharing the
// host's tracefs) must not take this recording's instance for a dead one's.
TEST_F(Recording, ARecorderInAnotherPidNamespaceLeavesThisOnesInstanceAlone) {
  ScratchDir dir("record-pidns-other");
  const std::string out = dir.file("ns.dat"), log = dir.file("log");
  if (std::system(("unshare --pid --fork --mount-proc true > " + log + " 2>&1").c_str()) != 0)
    GTEST_SKIP() << "unshare --pid cannot make a PID namespace here: " << readFile(log);
  auto ours = recorder::TracefsInstance::create(m_tracefs);
  ASSERT_TRUE(ours) << ours.error().message();
  ASSERT_TRUE((*ours)->setTracing(true));
  const std::string command = "unshare --pid --fork --mount-proc " + std::string(SCHEDLAB_CLI_BINARY) + " record -o " +
                              out + " --duration 100ms > " + log + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << readFile(log);
  ASSERT_TRUE(fs::exists((*ours)->path())) << (*ours)->path();
  EXPECT_EQ(readFile((*ours)->path() + "/tracing_on"), "1\n");
}

// The instance of a recorder that died without its guardian (both killed) goes
// with the next recording of the same PID namespace.
TEST_F(Recording, ADeadRecordersInstanceIsRemovedByTheNext) {
  const pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  struct stat ns {};
  ASSERT_EQ(::stat("/proc/self/ns/pid", &ns), 0);
  const std::string left = m_tracefs + "/instances/" + std::string(recorder::TracefsInstance::kNamePrefix) +
                           std::to_string(dead) + "-1-ns" + std::to_string(ns.st_ino);
  ASSERT_EQ(::mkdir(left.c_str(), 0700), 0) << left << ": " << std::strerror(errno);
  auto next = recorder::TracefsInstance::create(m_tracefs);
  ASSERT_TRUE(next) << next.error().message();
  EXPECT_FALSE(fs::exists(left)) << left;
  if (fs::exists(left)) ::rmdir(left.c_str());
}

TEST_F(Recording, CtrlCStopsTheCliWhichWritesTheTraceAndLeavesTracingAsItWas) {
  ScratchDir dir("record-sigint");
  const std::string out = dir.file("sigint.dat");
  const std::vector<std::string> command = {"sleep", "47.5"};
  const pid_t cli = spawnCli({"record", "-o", out, "--", command[0], command[1]}, dir.file("log"));
  ASSERT_GT(cli, 0);
  ASSERT_TRUE(eventually([&] { return !recordingInstanceOf(m_tracefs, cli).empty(); }, 10s)) << readFile(dir.file("log"));
  const std::string instance = recordingInstanceOf(m_tracefs, cli);
  std::this_thread::sleep_for(200ms);
  ::kill(cli, SIGINT);
  const int status = waitExit(cli);
  const std::string log = readFile(dir.file("log"));
  ASSERT_TRUE(WIFEXITED(status)) << status << "\n" << log;
  EXPECT_EQ(WEXITSTATUS(status), 0) << log;
  EXPECT_NE(log.find("stopped by SIGINT"), std::string::npos) << log;
  EXPECT_NE(log.find("wrote " + out), std::string::npos) << log;
  EXPECT_FALSE(processRuns(command));
  EXPECT_FALSE(fs::exists(instance)) << instance;
  expectTracingAsBefore();
  EXPECT_TRUE(tracedat_test::importWhole(out));
}

TEST_F(Recording, KillingTheCliLeavesNoInstanceAndNoCommandBehind) {
  ScratchDir dir("record-sigkill");
  const std::string out = dir.file("killed.dat");
  const std::vector<std::string> command = {"sleep", "48.5"};
  const pid_t cli = spawnCli({"record", "-o", out, "--", command[0], command[1]}, dir.file("log"));
  ASSERT_GT(cli, 0);
  ASSERT_TRUE(eventually([&] { return !recordingInstanceOf(m_tracefs, cli).empty(); }, 10s)) << readFile(dir.file("log"));
  const std::string instance = recordingInstanceOf(m_tracefs, cli);
  ::kill(cli, SIGKILL);
  EXPECT_EQ(waitExit(cli), SIGKILL);
  // The guardian notices, ends the command and removes the instance.
  EXPECT_TRUE(eventually([&] { return !fs::exists(instance); }, 5s)) << instance;
  EXPECT_TRUE(eventually([&] { return !processRuns(command); }, 5s));
  EXPECT_FALSE(fs::exists(out));
  expectTracingAsBefore();
}

TEST(RecordCli, BadUsageSaysWhatIsWrong) {
  struct Case {
    std::vector<std::string> argv;
    std::string message;
  };
  const Case cases[] = {
      {{"record"}, "error: no output file (-o OUT.dat)"},
      {{"record", "-o", "x.dat", "--buffer-kb", "1"}, "error: --buffer-kb 1: expected 16..4194304 (KB per CPU)"},
      {{"record", "-o", "x.dat", "--duration", "0s"}, "error: --duration 0s: expected a positive time (2s, 500ms)"},
      {{"record", "-o", "x.dat", "--"}, "error: unexpected arguments (a command goes after --)"},
      {{"record", "-o", "x.dat", "stray"}, "error: unexpected arguments (a command goes after --)"},
  };
  for (const auto& c : cases) {
    std::ostringstream out, err;
    EXPECT_EQ(app::cli::run(c.argv, out, err), app::cli::kExitUsage) << c.message;
    EXPECT_EQ(err.str().substr(0, err.str().find('\n')), c.message);
  }
}

}  // namespace
