#include "recorder/recorder.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include "core/autogroup_snapshot.h"
#include "core/sched_settings.h"
#include "core/topology_snapshot.h"
#include "importers/compressed_input.h"
#include "importers/tracedat/tracedat_writer.h"
#include "recorder/tracefs_instance.h"
#include "recorder/traced_command.h"

namespace recorder {

uint64_t RecordResult::lostTotal() const {
  uint64_t n = 0;
  for (const auto& l : losses) n += l.overrun;
  return n;
}

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using importers::tracedat::TraceDatContent;

constexpr size_t kPagesPerRead = 64;  // spooled with one write() per batch

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The kernel's preemption model as a settings line (core::kPreemptSetting),
// empty when it shows none: no trace format carries it, and a replay reads it
// (the `preempt` parameter, docs/models.md 8.1).
std::string preemptSettingLines() {
  const std::string debugfs = readText("/sys/kernel/debug/sched/preempt");
  // /proc/config.gz is about 150 KB; 4 MiB holds any configuration.
  std::string config;
  if (auto head = importers::decompressedHead("/proc/config.gz", importers::Compression::Gzip, 4 << 20))
    config.assign(reinterpret_cast<const char*>(head->data()), head->size());
  if (config.empty()) {
    utsname u{};
    if (::uname(&u) == 0) config = readText(std::string("/boot/config-") + u.release);
  }
  const std::string model = core::preemptionModel(debugfs, config, readText("/proc/cmdline"));
  if (model.empty()) return {};
  return std::string("# ") + core::kPreemptSetting +
         ": the kernel's preemption model (not a sysctl: /sys/kernel/debug/sched/preempt, else its configuration "
         "and preempt= on its command line)\n" +
         core::kPreemptSetting + " = " + model + "\n";
}

// "overrun: 21204" in a per_cpu/cpuN/stats text.
uint64_t statValue(const std::string& stats, std::string_view key) {
  size_t at = 0;
  while ((at = stats.find(key, at)) != std::string::npos) {
    if (at == 0 || stats[at - 1] == '\n') {
      const char* p = stats.data() + at + key.size();
      const char* end = stats.data() + stats.size();
      while (p < end && *p == ' ') ++p;
      uint64_t v = 0;
      std::from_chars(p, end, v);
      return v;
    }
    at += key.size();
  }
  return 0;
}

// Trace events carry task ids as the kernel's first PID namespace numbers
// them; /proc (the autogroups) numbers them as this process's namespace does.
// That namespace's inode number is fixed (PROC_PID_INIT_INO).
bool inInitialPidNamespace() {
  std::error_code ec;
  return fs::read_symlink("/proc/self/ns/pid", ec).string() == "pid:[4026531836]";
}

// An unlinked file beside the output: it holds one CPU's pages while recording,
// and vanishes by itself whatever happens to this process.
int openSpool(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
  std::string name = dir + "/.schedlab-spool-XXXXXX";
  fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd >= 0) ::unlink(name.c_str());
  return fd;
}

std::string ioError(const std::string& what, int err) {
  return what + ": " + (err == ENOSPC ? "disk full (" + std::string(std::strerror(err)) + ")" : std::strerror(err));
}

// One CPU's ring buffer (trace_pipe_raw of the instance) and its spool.
struct CpuStream {
  int cpu = 0;
  int ring = -1;
  int spool = -1;
  uint64_t size = 0;
  std::string stats;
  ~CpuStream() {
    if (ring >= 0) ::close(ring);
    if (spool >= 0) ::close(spool);
  }
};

class Recording {
 public:
  Recording(const RecordOptions& options, const ProgressFn& progress, std::stop_token stop)
      : m_options(options), m_progress(progress), m_stop(std::move(stop)) {}
  core::Result<RecordResult> run();

 private:
  core::Status checkOptions() const;
  core::Status checkOutput() const;
  core::Status openStreams();
  core::Status gatherFormats(const std::vector<TraceEvent>& events);
  core::Status loop();
  core::Status drain();
  uint64_t lostSoFar() const;
  void report(Phase phase, double fraction);
  core::Status writeOutputs();
  core::Status saveBeside(const core::Result<std::string>& captured, const std::string& path, const std::string& what,
                          std::string& savedAs);

  const RecordOptions& m_options;
  const ProgressFn& m_progress;
  std::stop_token m_stop;
  std::string m_outputDir;
  std::unique_ptr<TracefsInstance> m_instance;
  std::unique_ptr<TracedCommand> m_command;
  std::vector<std::unique_ptr<CpuStream>> m_cpus;
  uint32_t m_pageSize = 4096;
  std::vector<uint8_t> m_buffer;
  TraceDatContent m_content;
  core::Result<std::string> m_autogroupsAtStart = core::Error("not read");  // then the end's appended
  RecordResult m_result;
  Clock::time_point m_start;
  int m_writingPercent = -1;
};

core::Status Recording::checkOptions() const {
  if (m_options.output.empty()) return core::Error("no output file given (-o OUT.dat)");
  if (m_options.bufferKb < kMinBufferKb || m_options.bufferKb > kMaxBufferKb)
    return core::Error("buffer size " + std::to_string(m_options.bufferKb) + " KB is out of range (" +
                       std::to_string(kMinBufferKb) + ".." + std::to_string(kMaxBufferKb) + " KB per CPU)");
  if (m_options.duration && m_options.duration->count() <= 0) return core::Error("the duration must be positive");
  return core::Status::ok();
}

core::Status Recording::checkOutput() const {
  std::error_code ec;
  if (fs::is_directory(m_options.output, ec)) return core::Error(m_options.output + ": is a folder, not a file name");
  if (::access(m_outputDir.c_str(), W_OK) != 0)
    return core::Error(m_options.output + ": cannot write into " + m_outputDir + " (" + std::strerror(errno) + ")");
  return core::Status::ok();
}

core::Status Recording::openStreams() {
  if (auto sub = m_instance->read("buffer_subbuf_size_kb")) {
    int kb = 0;
    std::from_chars(sub->data(), sub->data() + sub->size(), kb);
    if (kb > 0) m_pageSize = static_cast<uint32_t>(kb) * 1024;
  } else {
    m_pageSize = static_cast<uint32_t>(::sysconf(_SC_PAGESIZE));
  }
  m_buffer.resize(size_t{m_pageSize} * kPagesPerRead);
  for (int cpu : m_instance->cpus()) {
    auto s = std::make_unique<CpuStream>();
    s->cpu = cpu;
    const std::string ring = m_instance->path() + "/per_cpu/cpu" + std::to_string(cpu) + "/trace_pipe_raw";
    s->ring = ::open(ring.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (s->ring < 0) return core::Error("cannot open " + ring + ": " + std::strerror(errno));
    s->spool = openSpool(m_outputDir);
    if (s->spool < 0) return core::Error(ioError("cannot create a spool file in " + m_outputDir, errno));
    m_cpus.push_back(std::move(s));
  }
  if (m_cpus.empty()) return core::Error(m_instance->path() + "/per_cpu: no CPU ring buffers");
  return core::Status::ok();
}

// The formats of what is recorded only: a recording's own instance holds no other events.
core::Status Recording::gatherFormats(const std::vector<TraceEvent>& events) {
  const fs::path eventsDir = fs::path(m_instance->tracefs()) / "events";
  m_content.pageSize = m_pageSize;
  m_content.headerPage = readText(eventsDir / "header_page");
  m_content.headerEvent = readText(eventsDir / "header_event");
  if (m_content.headerPage.empty()) return core::Error((eventsDir / "header_page").string() + ": cannot read");
  std::error_code ec;
  std::vector<std::string> ftrace;
  for (const auto& entry : fs::directory_iterator(eventsDir / "ftrace", ec))
    if (fs::is_regular_file(entry.path() / "format", ec)) ftrace.push_back(entry.path().string());
  std::sort(ftrace.begin(), ftrace.end());
  for (const auto& f : ftrace) m_content.ftraceFormats.push_back(readText(fs::path(f) / "format"));
  for (const auto& e : events) {
    auto system = std::find_if(m_content.eventSystems.begin(), m_content.eventSystems.end(),
                               [&](const auto& s) { return s.name == e.system; });
    if (system == m_content.eventSystems.end()) {
      m_content.eventSystems.push_back({e.system, {}});
      system = std::prev(m_content.eventSystems.end());
    }
    std::string format = readText(eventsDir / e.system / e.name / "format");
    if (format.empty()) return core::Error((eventsDir / e.system / e.name / "format").string() + ": cannot read");
    system->formats.push_back(std::move(format));
  }
  if (auto clock = m_instance->read("trace_clock")) {
    m_content.traceClock = *clock;
    const size_t open = clock->find('['), close = clock->find(']');
    if (open != std::string::npos && close > open) m_content.clock = clock->substr(open + 1, close - open - 1);
  }
  struct utsname u {};
  if (::uname(&u) == 0)
    m_content.uname = std::string(u.sysname) + " " + u.nodename + " " + u.release + " " + u.machine;
  m_content.version = std::string("SchedLab ") + SCHEDLAB_VERSION;
  m_content.traceId = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
  m_content.cpuCount = m_cpus.back()->cpu + 1;
  return core::Status::ok();
}

core::Status Recording::drain() {
  // While tracing runs a busy CPU refills its buffer as fast as it is read: one
  // buffer's worth per CPU and pass, so that every CPU gets its turn.
  const uint64_t budget = uint64_t{static_cast<uint32_t>(m_options.bufferKb)} * 1024;
  for (auto& s : m_cpus) {
    for (uint64_t taken = 0; taken < budget;) {
      size_t got = 0;
      while (got < m_buffer.size()) {
        const ssize_t n = ::read(s->ring, m_buffer.data() + got, m_pageSize);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (n < 0) return core::Error("cannot read the ring buffer of CPU " + std::to_string(s->cpu) + ": " +
                                      std::strerror(errno));
        if (n == 0) break;
        // A page is stored whole: the reader finds its length in the page header.
        if (static_cast<size_t>(n) < m_pageSize) std::memset(m_buffer.data() + got + n, 0, m_pageSize - n);
        got += m_pageSize;
      }
      if (got == 0) break;
      for (size_t done = 0; done < got;) {
        const ssize_t w = ::write(s->spool, m_buffer.data() + done, got - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return core::Error(ioError(m_options.output + ": cannot keep the recording in " + m_outputDir,
                                               w < 0 ? errno : ENOSPC));
        done += static_cast<size_t>(w);
      }
      s->size += got;
      taken += got;
      m_result.bytes += got;
      if (got < m_buffer.size()) break;
    }
  }
  return core::Status::ok();
}

uint64_t Recording::lostSoFar() const {
  uint64_t lost = 0;
  for (const auto& s : m_cpus)
    if (auto stats = m_instance->read("per_cpu/cpu" + std::to_string(s->cpu) + "/stats"))
      lost += statValue(*stats, "overrun:");
  return lost;
}

void Recording::report(Phase phase, double fraction) {
  if (!m_progress) return;
  // The writer reports every chunk of 10 pages: pass on whole percents only.
  if (phase == Phase::Writing) {
    const int percent = static_cast<int>(fraction * 100);
    if (percent == m_writingPercent) return;
    m_writingPercent = percent;
  }
  RecordProgress p;
  p.phase = phase;
  p.elapsed = Clock::now() - m_start;
  p.bytes = m_result.bytes;
  p.lostEvents = phase == Phase::Recording ? lostSoFar() : m_result.lostTotal();
  p.fraction = fraction;
  m_progress(p);
}

core::Status Recording::loop() {
  const int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) return core::Error(std::string("cannot create an eventfd: ") + std::strerror(errno));
  std::stop_callback onStop(m_stop, [wake] {
    const uint64_t one = 1;
    (void)!::write(wake, &one, sizeof one);
  });
  core::Status status = core::Status::ok();
  for (;;) {
    if (m_stop.stop_requested()) {
      m_result.stoppedEarly = true;
      break;
    }
    if (m_command && m_command->checkExited()) break;
    auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(m_options.drainInterval);
    if (m_options.duration) {
      const auto left = *m_options.duration - (Clock::now() - m_start);
      if (left <= std::chrono::nanoseconds::zero()) break;
      timeout = std::min(timeout, std::chrono::ceil<std::chrono::milliseconds>(left));
    }
    pollfd fds[2] = {{wake, POLLIN, 0}, {m_command ? m_command->exitFd() : -1, POLLIN, 0}};
    ::poll(fds, 2, static_cast<int>(timeout.count()));
    if (!(status = drain())) break;
    const double fraction = m_options.duration ? std::min(1.0, std::chrono::duration<double>(Clock::now() - m_start) /
                                                                   std::chrono::duration<double>(*m_options.duration))
                                               : -1.0;
    report(Phase::Recording, fraction);
  }
  ::close(wake);
  return status;
}

core::Status Recording::writeOutputs() {
  m_content.cmdlines = readText(fs::path(m_instance->tracefs()) / "saved_cmdlines");
  m_content.printkFormats = readText(fs::path(m_instance->tracefs()) / "printk_formats");
  m_content.kallsyms = readText("/proc/kallsyms");
  for (const auto& s : m_cpus) m_content.cpus.push_back({s->cpu, s->spool, 0, s->size, s->stats});
  if (auto st = importers::tracedat::writeTraceDat(m_options.output, m_content,
                                                   [this](double f) { report(Phase::Writing, f); });
      !st)
    return st;
  // What no trace format carries is saved beside the trace.
  if (auto st = saveBeside(core::captureTopologySnapshot(), core::topologySnapshotPath(m_options.output), "topology",
                           m_result.topologyFile);
      !st)
    return st;
  auto settings = core::captureSchedSettings();
  if (settings) *settings += preemptSettingLines();
  if (auto st = saveBeside(settings, core::schedSettingsPath(m_options.output), "scheduler settings",
                           m_result.schedSettingsFile);
      !st)
    return st;
  return saveBeside(m_autogroupsAtStart, core::autogroupsPath(m_options.output), "task autogroups",
                    m_result.autogroupsFile);
}

// Writes what was captured to `path` (named in `savedAs`) through a temporary
// file renamed when complete. What could not be captured is a note, and a file
// an earlier recording left under that name goes: it would describe another
// machine state. A failed write leaves nothing of the recording: neither the
// trace nor what was written beside it.
core::Status Recording::saveBeside(const core::Result<std::string>& captured, const std::string& path,
                                   const std::string& what, std::string& savedAs) {
  std::error_code ec;
  if (!captured) {
    m_result.notes.push_back("no " + what + " saved: " + captured.error().message());
    fs::remove(path, ec);
    return core::Status::ok();
  }
  const std::string temp = path + ".part";
  const auto removeAll = [&] {
    for (const std::string& f :
         {temp, m_options.output, m_result.topologyFile, m_result.schedSettingsFile, m_result.autogroupsFile})
      if (!f.empty()) fs::remove(f, ec);
  };
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << *captured;
    out.flush();
    if (!out) {
      const int err = errno;
      removeAll();
      return core::Error(ioError(path + ": cannot write the " + what, err ? err : EIO));
    }
  }
  fs::rename(temp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    removeAll();
    return core::Error(path + ": cannot write the " + what + " (" + why + ")");
  }
  savedAs = path;
  return core::Status::ok();
}

core::Result<RecordResult> Recording::run() {
  m_outputDir = fs::path(m_options.output).parent_path().string();
  if (m_outputDir.empty()) m_outputDir = ".";
  if (auto st = checkOptions(); !st) return core::Error(st.message());
  auto tracefs = locateTracefs(m_options.tracefs);
  if (!tracefs) return tracefs.error();
  if (auto st = checkTracefsAccess(*tracefs); !st) return core::Error(st.message());
  auto events = selectEvents(m_options.events, *tracefs + "/events", m_result.notes);
  if (!events) return events.error();
  m_result.events = *events;
  if (auto st = checkOutput(); !st) return core::Error(st.message());
  if (!m_options.command.empty()) {
    auto command = TracedCommand::prepare(m_options.command);
    if (!command) return command.error();
    m_command = std::move(*command);
  }
  auto instance = TracefsInstance::create(*tracefs);
  if (!instance) return instance.error();
  m_instance = std::move(*instance);
  if (m_command) m_instance->endWithUs(m_command->processGroup());
  if (auto st = m_instance->setBufferKb(m_options.bufferKb); !st) return core::Error(st.message());
  if (auto st = m_instance->enable(*events); !st) return core::Error(st.message());
  if (auto st = openStreams(); !st) return core::Error(st.message());
  if (auto st = gatherFormats(*events); !st) return core::Error(st.message());

  // Read before tracing starts, so that reading /proc is not in the trace; a
  // task born in between is grouped by its parent in a replay.
  m_autogroupsAtStart = inInitialPidNamespace()
                            ? core::captureAutogroups(core::SnapshotWhen::Start)
                            : core::Error("this process is in a PID namespace of its own, where /proc's task ids are "
                                          "not the ones the trace records");
  if (auto st = m_instance->setTracing(true); !st) return core::Error(st.message());
  m_start = Clock::now();
  if (m_command)
    if (auto st = m_command->release(); !st) return core::Error(st.message());
  report(Phase::Recording, m_options.duration ? 0.0 : -1.0);
  core::Status recorded = loop();
  (void)m_instance->setTracing(false);
  m_result.elapsed = Clock::now() - m_start;
  // Before the command is ended: its tasks still alive are listed as they ran.
  if (m_autogroupsAtStart)
    if (auto atEnd = core::captureAutogroups(core::SnapshotWhen::End)) *m_autogroupsAtStart += *atEnd;
  if (m_command) {
    m_command->terminate(std::chrono::milliseconds(2000));
    m_result.commandExit = m_command->exitDescription();
    if (!m_command->succeeded()) m_result.notes.push_back("'" + m_command->name() + "' " + m_result.commandExit);
  }
  if (recorded) recorded = drain();
  if (!recorded) return core::Error(recorded.message());
  for (auto& s : m_cpus) {
    if (auto stats = m_instance->read("per_cpu/cpu" + std::to_string(s->cpu) + "/stats")) s->stats = *stats;
    if (const uint64_t overrun = statValue(s->stats, "overrun:"))
      m_result.losses.push_back({s->cpu, overrun});
    ::close(s->ring);
    s->ring = -1;
  }
  // The machine's tracing is as it was before the file is written, however long that takes.
  if (auto st = m_instance->remove(); !st) m_result.notes.push_back(st.message());
  if (m_result.bytes == 0) m_result.notes.push_back("no events were recorded");
  if (auto st = writeOutputs(); !st) return core::Error(st.message());
  m_result.output = m_options.output;
  return std::move(m_result);
}

}  // namespace

core::Result<RecordResult> record(const RecordOptions& options, const ProgressFn& progress, std::stop_token stop) {
  try {
    return Recording(options, progress, std::move(stop)).run();
  } catch (const std::bad_alloc&) {
    return core::Error("out of memory while recording");
  }
}

}  // namespace recorder
