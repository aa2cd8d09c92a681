// `schedlab-cli stats`: scheduling statistics per task, process or CPU over the
// whole trace or a [from, to) range, as a table, JSON or CSV.
#include <algorithm>
#include <cstdio>
#include <ostream>

#include "app/cli/cli.h"
#include "core/analysis/stats_json.h"

namespace app::cli {

namespace {

constexpr const char* kStatsHelp =
    "usage: schedlab-cli stats FILE [--from T] [--to T] [--by task|process|cpu] [--json|--csv] [--top N]\n"
    "                              [--topology CxT | --topology-from DIR]\n"
    "Statistics over the whole trace or the range [from, to). One entry per task identity (a reused\n"
    "tid is two entries). Ranges are half-open everywhere: an interval counts for its overlap with\n"
    "[from, to), an event (switch, wakeup, migration, the start of a measured wait) iff from <= t < to.\n"
    "The whole trace is [first event, last event + 1 ns); lengths count only what the trace covers,\n"
    "[first event, last event]. Definitions:\n"
    "  runtime      time on a CPU (the task's run slices, clipped to the range)\n"
    "  wait         runnable but not running: woken or preempted, waiting on a runqueue\n"
    "  sleep        interruptible sleep (S), TASK_IDLE (I), stopped, traced or parked\n"
    "  blocked      uninterruptible sleep (D)\n"
    "  share        runtime / covered length\n"
    "  vol / invol  switches out while not runnable (blocked, slept, exited) / while runnable (preempted)\n"
    "  switches     (per CPU) run slices that begin at a context switch (not where the CPU's record\n"
    "               begins: its first event, the end of lost data)\n"
    "  migr         sched_migrate_task events\n"
    "  wakeup latency     from the wakeup (sched_waking, else sched_wakeup) of a sleeping task to its\n"
    "                     next switch-in\n"
    "  scheduling delay   from the start of any runnable interval (wakeup or preemption) to the\n"
    "                     switch-in that ends it\n"
    "  class        deadline (prio -1), rt (0..99), fair (100..139), idle (SCHED_IDLE, replays only);\n"
    "               fairness judges the fair and idle classes; RT and deadline tasks only take CPUs away\n"
    "  ideal        S*_i, the CPU time a fluid weighted-fair scheduler would have given task i: at\n"
    "               every instant the CPUs no RT/deadline task runs on are shared among the tasks with\n"
    "               work left, weighted max-min fair (weight = the nice level's, 3 for SCHED_IDLE)\n"
    "               within each task's CPU affinity (replays; traces do not record it), at most one\n"
    "               CPU per task; each burst (a stretch of wanting a CPU) brings the CPU time the task\n"
    "               took in it, or unbounded work if it still wants a CPU at the range end\n"
    "  competing    fair tasks that waited, or got less than a whole CPU in the ideal, for some time\n"
    "  Jain's index over competing tasks: x_i = S_i / S*_i (S_i its CPU time),\n"
    "               J = (sum x)^2 / (n * sum x^2); 1 = each got its fair share, 1/n = one got all\n"
    "  GPS lag      S*_i(t) - S_i(t); per task the maximum |lag| over the range; max and mean over\n"
    "               competing tasks\n"
    "  utilisation  busy (non-idle) time / covered length, per CPU\n"
    "  forced idle  (replays with core scheduling) a CPU kept idle while it had runnable tasks,\n"
    "               because its SMT sibling ran a task of another cookie\n"
    "  forceidle_sum  per task, mainline's core_forceidle_sum: time it ran while a sibling was forced\n"
    "               idle, scaled by forced-idle siblings / running siblings (1 with two threads per core)\n"
    "  Jain's index of cookies  the same over cookies, untagged cookie 0 included:\n"
    "               x_K = sum S_i / sum S*_i over the cookie's competing tasks\n"
    "  idle while runnable  (totals) wall time during which some task waited on a CPU busy with another\n"
    "               task while a CPU it could run on was idle (a placement or balancing miss)\n"
    "  freq residency  (replays with +uclamp) time per CPU at each frequency, from its frequency counter\n"
    "Latency samples belong to the range in which the task started waiting. README \"Fairness,\n"
    "defined\" states the fairness definitions in full.\n"
    "JSON: {\"range\":{\"from_ns\",\"to_ns\",\"covered_ns\"},\"tasks\":[{\"tid\",\"tgid\",\"comm\",\"prio\" (null if\n"
    "unknown),\"sched_class\",\"runtime_ns\",\"wait_ns\",\"sleep_ns\",\"blocked_ns\",\"switches_voluntary\",\n"
    "\"switches_involuntary\",\"migrations\",\"forceidle_sum_ns\",\"wakeup_latency_ns\":{count,mean,p50,p90,\n"
    "p99,max},\"sched_delay_ns\":{...},\"competing\",\"ideal_ns\",\"gps_lag_max_ns\"}],\n"
    "\"cpus\":[{\"cpu\",\"busy_ns\",\"idle_ns\",\"forced_idle_ns\",\"utilisation\",\"freq_residency\":{\"<kHz>\":ns}\n"
    "when known}], \"cores\":[{\"core\",\"cpus\",\"forced_idle_ns\",\"any_sibling_forced_idle_ns\"}] (SMT\n"
    "topologies), \"cookies\":[{\"cookie\",\"name\",\"tasks\",\"runtime_ns\",\"forced_idle_caused_ns\",\n"
    "\"service_ratio\"}] (with cookies; service_ratio is x_K, null when none of its tasks competed),\n"
    "\"fairness\":{\"jain\",\"jain_cookies\" (with cookies),\"gps_lag_max_ns\",\"gps_lag_mean_ns\",\n"
    "\"competing_tasks\"}}\n"
    "(with --by process: \"processes\").\n";

std::string ms(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1e6);
  return buf;
}

std::string us(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(ns) / 1e3);
  return buf;
}

void printTaskTable(std::ostream& out, const std::vector<core::analysis::TaskStats>& rows, bool process, size_t top) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%8s %8s %-18s %11s %11s %11s %11s %6s %7s %7s %5s %9s %9s %9s\n",
                process ? "TGID" : "TID", process ? "THREADS" : "TGID", process ? "PROCESS" : "COMM", "RUN ms",
                "WAIT ms", "SLEEP ms", "BLOCK ms", "SHARE", "VOL", "INVOL", "MIGR", "LAT50 us", "LAT99 us",
                "DLY99 us");
  out << buf;
  for (size_t i = 0; i < rows.size() && i < top; ++i) {
    const auto& t = rows[i];
    std::snprintf(buf, sizeof buf, "%8d %8s %-18.18s %11s %11s %11s %11s %5.1f%% %7llu %7llu %5llu %9s %9s %9s\n",
                  process ? t.tgid : t.tid,
                  process ? std::to_string(t.tid).c_str() : (t.tgid > 0 ? std::to_string(t.tgid).c_str() : "-"),
                  t.comm.c_str(), ms(t.runtimeNs).c_str(), ms(t.waitNs).c_str(), ms(t.sleepNs).c_str(),
                  ms(t.blockedNs).c_str(), 100.0 * t.cpuShare, static_cast<unsigned long long>(t.switchesVoluntary),
                  static_cast<unsigned long long>(t.switchesInvoluntary),
                  static_cast<unsigned long long>(t.migrations), us(t.wakeupLatency.p50).c_str(),
                  us(t.wakeupLatency.p99).c_str(), us(t.schedDelay.p99).c_str());
    out << buf;
  }
  if (rows.size() > top) out << "  ... " << rows.size() - top << " more (--top N)\n";
}

}  // namespace

void printRunStatsTables(std::ostream& out, const core::analysis::RunStats& stats,
                         core::analysis::StatsGrouping grouping, size_t top) {
  using core::analysis::StatsGrouping;
  char buf[512];
  if (grouping == StatsGrouping::Task) {
    auto rows = stats.tasks;
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.runtimeNs > b.runtimeNs; });
    printTaskTable(out, rows, false, top);
  } else if (grouping == StatsGrouping::Process) {
    std::vector<core::analysis::TaskStats> rows;
    for (auto& p : core::analysis::aggregateByProcess(stats)) {
      auto t = p.total;
      t.tgid = p.tgid > 0 ? p.tgid : t.tid;
      t.tid = static_cast<int32_t>(p.threads);  // shown in the THREADS column
      rows.push_back(std::move(t));
    }
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.runtimeNs > b.runtimeNs; });
    printTaskTable(out, rows, true, top);
  }
  out << "\n";
  std::snprintf(buf, sizeof buf, "%5s %12s %12s %12s %8s %9s\n", "CPU", "BUSY ms", "IDLE ms", "FORCED ms", "UTIL",
                "SWITCHES");
  out << buf;
  for (const auto& c : stats.cpus) {
    std::snprintf(buf, sizeof buf, "%5d %12s %12s %12s %7.1f%% %9llu\n", c.cpu, ms(c.busyNs).c_str(),
                  ms(c.idleNs).c_str(), ms(c.forcedIdleNs).c_str(), 100.0 * c.utilisation,
                  static_cast<unsigned long long>(c.switches));
    out << buf;
  }
  out << "\n";
  std::snprintf(buf, sizeof buf,
                "Fairness: Jain %.4f over %zu competing tasks; GPS lag max %s ms, mean %s ms\n"
                "Switches: %llu voluntary, %llu involuntary; %llu migrations; idle while runnable %s ms\n"
                "Wakeup latency: n=%llu mean %.1f us p50 %s p90 %s p99 %s max %s us\n"
                "Scheduling delay: n=%llu mean %.1f us p50 %s p90 %s p99 %s max %s us\n",
                stats.fairness.jain, stats.fairness.competingTasks, ms(stats.fairness.gpsLagMaxNs).c_str(),
                ms(stats.fairness.gpsLagMeanNs).c_str(), static_cast<unsigned long long>(stats.switchesVoluntary),
                static_cast<unsigned long long>(stats.switchesInvoluntary),
                static_cast<unsigned long long>(stats.migrations), ms(stats.idleWhileRunnableNs).c_str(),
                static_cast<unsigned long long>(stats.wakeupLatency.count), stats.wakeupLatency.mean / 1e3,
                us(stats.wakeupLatency.p50).c_str(), us(stats.wakeupLatency.p90).c_str(),
                us(stats.wakeupLatency.p99).c_str(), us(stats.wakeupLatency.max).c_str(),
                static_cast<unsigned long long>(stats.schedDelay.count), stats.schedDelay.mean / 1e3,
                us(stats.schedDelay.p50).c_str(), us(stats.schedDelay.p90).c_str(), us(stats.schedDelay.p99).c_str(),
                us(stats.schedDelay.max).c_str());
  out << buf;
}

std::optional<core::analysis::TimeRange> parseRange(const Args& args, const core::TraceModel& model,
                                                    std::ostream& err) {
  auto range = core::analysis::wholeTrace(model);
  if (auto from = args.value("--from")) {
    auto t = parseTime(*from, model.firstTs);
    if (!t) {
      err << "error: --from: cannot read time '" << *from << "' (use e.g. 1.5s, 250ms, 10us, @285.77)\n";
      return std::nullopt;
    }
    range.from = *t;
  }
  if (auto to = args.value("--to")) {
    auto t = parseTime(*to, model.firstTs);
    if (!t) {
      err << "error: --to: cannot read time '" << *to << "' (use e.g. 1.5s, 250ms, 10us, @285.77)\n";
      return std::nullopt;
    }
    range.to = *t;
  }
  // A trace of one instant has an empty whole-trace range; only a range the user gave must not be empty.
  if (range.to <= range.from && (args.value("--from") || args.value("--to"))) {
    err << "error: empty range: --to must be after --from\n";
    return std::nullopt;
  }
  return range;
}

int statsCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  using core::analysis::StatsGrouping;
  std::string error;
  auto args = Args::parse(argv, {"--from", "--to", "--by", "--top", "--topology", "--topology-from"},
                          {"--json", "--csv", "--help"}, error);
  if (!args || args->flag("--help") || args->positional().size() != 1) {
    (args && args->flag("--help") ? out : err) << (args ? "" : "schedlab-cli stats: " + error + "\n") << kStatsHelp;
    return args && args->flag("--help") ? kExitOk : kExitUsage;
  }
  StatsGrouping grouping = StatsGrouping::Task;
  const std::string by = args->value("--by").value_or("task");
  if (by == "process") grouping = StatsGrouping::Process;
  else if (by == "cpu") grouping = StatsGrouping::Cpu;
  else if (by != "task") {
    err << "schedlab-cli stats: --by takes task, process or cpu (not '" << by << "')\n";
    return kExitUsage;
  }
  bool failed = false;
  auto model = loadTrace(args->positional()[0], *args, err, failed);
  if (!model) return kExitFailure;
  const auto range = parseRange(*args, *model, err);
  if (!range) return kExitUsage;
  const auto stats = core::analysis::computeStats(*model, *range);
  if (args->flag("--json")) {
    core::JsonWriter j;
    j.beginObject();
    j.field("file", args->positional()[0]);
    core::analysis::writeRunStatsJson(j, stats, grouping);
    j.endObject();
    out << j.str() << "\n";
  } else if (args->flag("--csv")) {
    out << core::analysis::runStatsCsv(stats, grouping);
  } else {
    const size_t top = static_cast<size_t>(std::max(1, std::atoi(args->value("--top").value_or("30").c_str())));
    out << args->positional()[0] << ": " << model->format << ", " << model->topology.cpuCount() << " CPUs, range "
        << formatDuration(range->from - model->firstTs) << " .. " << formatDuration(range->to - model->firstTs)
        << " (" << formatDuration(range->length()) << ")\n\n";
    printRunStatsTables(out, stats, grouping, top);
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace app::cli
