// `schedlab-cli record`: a trace of this machine through the recorder library.
// Ctrl+C (SIGINT), SIGTERM and SIGHUP stop the recording, which is then written.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <ostream>
#include <thread>

#include "app/cli/cli.h"
#include "recorder/recorder.h"

namespace app::cli {

namespace {

const char* const kUsage =
    "usage: schedlab-cli record -o OUT.dat [--events sched|sched+power|LIST] [--buffer-kb N]\n"
    "                           [--duration T] [-- COMMAND ARGS...]\n"
    "Records a scheduler trace of this machine through tracefs and writes it as trace.dat v7 (zstd),\n"
    "which SchedLab, trace-cmd report and KernelShark read, with what no trace format carries beside\n"
    "it: the CPU topology (sysfs) in OUT.dat.topology, the scheduler settings (/proc/sys/kernel/sched_*\n"
    "and the kernel's preemption model) in OUT.dat.sched and each task's autogroup (/proc/PID/autogroup,\n"
    "when tracing starts and stops) in OUT.dat.autogroup, which SchedLab uses when it opens OUT.dat.\n"
    "Records while COMMAND runs, for T, or until Ctrl+C; Ctrl+C stops early and still writes what was\n"
    "recorded. Needs root.\n\n"
    "  -o, --output OUT.dat   the trace to write (replaced only once complete)\n"
    "  --events LIST          terms separated by ',' or '+': sched (the scheduler events SchedLab reads,\n"
    "                         the default), power (cpu_frequency, cpu_idle), SYSTEM:EVENT, SYSTEM:*\n"
    "  --buffer-kb N          ring buffer per CPU, default 8192; read every 100 ms, so it only has to\n"
    "                         hold the busiest 100 ms: events lost to a full buffer are counted and shown\n"
    "  --duration T           stop after T (1.5s, 250ms); with a COMMAND, ends it when the time is up\n"
    "  -- COMMAND ARGS...     run COMMAND (own process group, stdin from /dev/null) and record until it\n"
    "                         exits; stopping early ends it (SIGTERM, then SIGKILL after 2 s)\n\n"
    "The recording uses a tracefs instance of its own (instances/schedlab-PID-N-nsPIDNS): the machine's\n"
    "event enables, buffer_size_kb and tracing_on are never changed, and the instance is removed\n"
    "afterwards, also when the recording is interrupted or killed.\n"
    "Exit status: 0 written, 1 failed (one line says why and what to do), 2 bad usage.\n";

std::string megabytes(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

// Signals are taken by one thread (sigtimedwait) instead of a handler, so that
// stopping is a plain std::stop_source request.
class StopOnSignals {
 public:
  StopOnSignals() {
    sigemptyset(&m_set);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&m_set, sig);
    pthread_sigmask(SIG_BLOCK, &m_set, &m_old);
    m_thread = std::thread([this] {
      const timespec tick{0, 100 * 1000 * 1000};
      while (!m_done) {
        const int sig = sigtimedwait(&m_set, nullptr, &tick);
        if (sig > 0 && m_signal == 0) {
          m_signal = sig;
          m_source.request_stop();
        }
      }
    });
  }
  ~StopOnSignals() {
    m_done = true;
    m_thread.join();
    pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
  }
  std::stop_token token() const { return m_source.get_token(); }
  /// The signal that stopped the recording, 0 if none.
  int signal() const { return m_signal; }

 private:
  sigset_t m_set{};
  sigset_t m_old{};
  std::stop_source m_source;
  std::atomic<bool> m_done{false};
  std::atomic<int> m_signal{0};
  std::thread m_thread;
};

}  // namespace

int recordCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  const auto dashes = std::find(argv.begin(), argv.end(), "--");
  const std::vector<std::string> own(argv.begin(), dashes);
  std::string error;
  auto args = Args::parse(own, {"-o", "--output", "--events", "--buffer-kb", "--duration"}, {"--help"}, error);
  if (!args) {
    err << "error: " << error << "\n" << kUsage;
    return kExitUsage;
  }
  if (args->flag("--help")) {
    out << kUsage;
    return kExitOk;
  }
  recorder::RecordOptions options;
  if (dashes != argv.end()) options.command.assign(dashes + 1, argv.end());
  const auto output = args->value("-o") ? args->value("-o") : args->value("--output");
  if (!output || !args->positional().empty() || (dashes != argv.end() && options.command.empty())) {
    err << (output ? "error: unexpected arguments (a command goes after --)\n" : "error: no output file (-o OUT.dat)\n")
        << kUsage;
    return kExitUsage;
  }
  options.output = *output;
  if (auto events = args->value("--events")) options.events = *events;
  if (auto kb = args->value("--buffer-kb")) {
    char* end = nullptr;
    const long v = std::strtol(kb->c_str(), &end, 10);
    if (kb->empty() || *end != '\0' || v < recorder::kMinBufferKb || v > recorder::kMaxBufferKb) {
      err << "error: --buffer-kb " << *kb << ": expected " << recorder::kMinBufferKb << ".." << recorder::kMaxBufferKb
          << " (KB per CPU)\n";
      return kExitUsage;
    }
    options.bufferKb = static_cast<int>(v);
  }
  if (auto d = args->value("--duration")) {
    const auto ns = parseTime(*d, 0);
    if (!ns || *ns <= 0 || d->front() == '@') {
      err << "error: --duration " << *d << ": expected a positive time (2s, 500ms)\n";
      return kExitUsage;
    }
    options.duration = std::chrono::nanoseconds(*ns);
  }

  const bool live = ::isatty(STDERR_FILENO);
  auto progress = [&err, live](const recorder::RecordProgress& p) {
    if (!live) return;
    if (p.phase == recorder::Phase::Recording)
      err << "\rrecording " << formatDuration(p.elapsed.count()) << ", " << megabytes(p.bytes) << ", " << p.lostEvents
          << " events lost   " << std::flush;
    else
      err << "\rwriting " << static_cast<int>(p.fraction * 100) << "%                          " << std::flush;
  };
  std::optional<core::Result<recorder::RecordResult>> result;
  int stoppedBy = 0;
  {
    StopOnSignals signals;
#ifdef SCHEDLAB_HAVE_RECORDER
    result.emplace(recorder::record(options, progress, signals.token()));
#else
    (void)progress;
    result.emplace(core::Error("this build has no recorder (configure with -DSCHEDLAB_ENABLE_TRACECMD=ON)"));
#endif
    stoppedBy = signals.signal();
  }
  if (live) err << "\r                                                      \r";
  if (stoppedBy) err << "stopped by SIG" << sigabbrev_np(stoppedBy) << "\n";
  if (!*result) {
    err << "error: " << result->error().message() << "\n";
    return kExitFailure;
  }
  const recorder::RecordResult& r = **result;
  out << "wrote " << r.output << ": " << formatDuration(r.elapsed.count()) << ", " << megabytes(r.bytes)
      << " of ring buffer, " << r.events.size() << " events enabled" << (r.stoppedEarly ? " (stopped early)" : "") << "\n";
  if (!r.topologyFile.empty()) out << "topology: " << r.topologyFile << "\n";
  if (!r.schedSettingsFile.empty()) out << "scheduler settings: " << r.schedSettingsFile << "\n";
  if (!r.autogroupsFile.empty()) out << "task autogroups: " << r.autogroupsFile << "\n";
  for (const auto& loss : r.losses)
    out << "lost " << loss.overrun << " events on CPU " << loss.cpu
        << " (ring buffer full): a larger --buffer-kb keeps them\n";
  for (const auto& note : r.notes) out << "note: " << note << "\n";
  return kExitOk;
}

}  // namespace app::cli
