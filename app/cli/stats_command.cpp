// `schedlab-cli stats`: scheduling statistics per task, process or CPU over the
// whole trace or a [from, to) range, as a table, JSON or CSV.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <ostream>

#include "app/cli/cli.h"
#include "core/analysis/stats_json.h"

namespace app::cli {

namespace {

constexpr const char* kStatsHelp =
    "usage: schedlab-cli stats FILE [--from T] [--to T] [--by task|process|cpu] [--json|--csv [--table NAME]]\n"
    "                              [--top N] [--topology CxT | --topology-from DIR]\n"
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
    "  migr         sched_migrate_task events, and the moves the trace shows without one (a task\n"
    "               seen on another CPU than it was last seen on: inferred, counted apart too)\n"
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
    "  freq residency  time per CPU at each frequency (power:cpu_frequency, or a +uclamp replay's model),\n"
    "               each sample holding until the next; the time before a CPU's first one is unknown\n"
    "  mean MHz     weighted by time, and by busy time (time running a task), at each frequency\n"
    "  idle residency  time per CPU in each power:cpu_idle state (-1: not idle), as freq residency\n"
    "  user slices  atrace B/E and S/F slices (trace_marker) by name: count and duration of the\n"
    "               slices that began in the range and ended in the trace; open: no end traced\n"
    "Latency samples belong to the range in which the task started waiting. README \"Fairness,\n"
    "defined\" states the fairness definitions in full.\n"
    "JSON: {\"range\":{\"from_ns\",\"to_ns\",\"covered_ns\"},\"tasks\":[{\"tid\",\"tgid\",\"comm\",\"prio\" (null if\n"
    "unknown),\"sched_class\",\"runtime_ns\",\"wait_ns\",\"sleep_ns\",\"blocked_ns\",\"switches_voluntary\",\n"
    "\"switches_involuntary\",\"migrations\",\"migrations_inferred\",\"forceidle_sum_ns\",\n"
    "\"wakeup_latency_ns\":{count,mean,p50,p90,\n"
    "p99,max},\"sched_delay_ns\":{...},\"competing\",\"ideal_ns\",\"gps_lag_max_ns\"}],\n"
    "\"cpus\":[{\"cpu\",\"busy_ns\",\"idle_ns\",\"forced_idle_ns\",\"utilisation\",\"freq_residency\":{\"<kHz>\":ns},\n"
    "\"freq_unknown_ns\",\"mean_freq_khz\",\"mean_busy_freq_khz\" when known, \"idle_residency\":{\"<state>\":ns},\n"
    "\"idle_unknown_ns\" when known}], \"user_slices\" (per task and overall, with atrace slices):\n"
    "[{\"name\",\"count\",\"total_ns\",\"p50_ns\",\"p99_ns\",\"max_ns\",\"open\"}], \"cores\":[{\"core\",\"cpus\",\"forced_idle_ns\",\"any_sibling_forced_idle_ns\"}] (SMT\n"
    "topologies), \"cookies\":[{\"cookie\",\"name\",\"tasks\",\"runtime_ns\",\"forced_idle_caused_ns\",\n"
    "\"service_ratio\"}] (with cookies; service_ratio is x_K, null when none of its tasks competed),\n"
    "\"fairness\":{\"jain\",\"jain_cookies\" (with cookies),\"gps_lag_max_ns\",\"gps_lag_mean_ns\",\n"
    "\"competing_tasks\"}}\n"
    "(with --by process: \"processes\").\n"
    "CSV: one table with a header line. Without --table, the rows of --by: tasks (tid,tgid,comm,prio,\n"
    "then the JSON's task fields, the header names them), processes, or\n"
    "CPUs (cpu,busy_ns,idle_ns,forced_idle_ns,lost_ns,utilisation,switches,freq_unknown_ns,\n"
    "mean_freq_khz,mean_busy_freq_khz,idle_unknown_ns; the last four empty without the samples).\n"
    "--table NAME gives one of the fields that hold several values, a row per value:\n"
    "  freq_residency  cpu,freq_khz,residency_ns\n"
    "  idle_residency  cpu,state,residency_ns (state -1: not idle)\n"
    "  user_slices     scope,tid,tgid,comm,name,count,open,total_ns,p50_ns,p99_ns,max_ns; scope is\n"
    "                  task (one task's slices of that name) or all (every task's, tid empty)\n";

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

// "1200 MHz 61.3%, 600 MHz 38.7%": the largest shares first, at most `top`.
std::string residencyShares(const std::map<int64_t, int64_t>& residency, bool khz, size_t top) {
  int64_t total = 0;
  for (const auto& [value, ns] : residency) total += ns;
  std::vector<std::pair<int64_t, int64_t>> byTime(residency.begin(), residency.end());
  std::stable_sort(byTime.begin(), byTime.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  char buf[64];
  for (size_t i = 0; i < byTime.size() && i < top && total > 0; ++i) {
    const double share = 100.0 * static_cast<double>(byTime[i].second) / static_cast<double>(total);
    if (khz) std::snprintf(buf, sizeof buf, "%s%lld MHz %.1f%%", i ? ", " : "", static_cast<long long>(byTime[i].first / 1000), share);
    else if (byTime[i].first == core::kIdleStateRunning) std::snprintf(buf, sizeof buf, "%srunning %.1f%%", i ? ", " : "", share);
    else std::snprintf(buf, sizeof buf, "%sstate %lld %.1f%%", i ? ", " : "", static_cast<long long>(byTime[i].first), share);
    out += buf;
  }
  if (byTime.size() > top) out += ", ...";
  return out;
}

void printPowerTables(std::ostream& out, const core::analysis::RunStats& stats, size_t top) {
  char buf[512];
  bool header = false;
  for (const auto& c : stats.cpus) {
    if (c.freqResidencyNs.empty() && c.idleResidencyNs.empty()) continue;
    if (!header) {
      out << "\n";
      std::snprintf(buf, sizeof buf, "%5s %9s %9s  %s\n", "CPU", "MEAN MHz", "BUSY MHz", "RESIDENCY");
      out << buf;
      header = true;
    }
    if (!c.freqResidencyNs.empty()) {
      std::snprintf(buf, sizeof buf, "%5d %9.0f %9.0f  freq: %s (unknown %s ms)\n", c.cpu, c.meanFreqKhz / 1000,
                    c.meanBusyFreqKhz / 1000, residencyShares(c.freqResidencyNs, true, 6).c_str(),
                    ms(c.freqUnknownNs).c_str());
      out << buf;
    }
    if (!c.idleResidencyNs.empty()) {
      std::snprintf(buf, sizeof buf, "%5d %9s %9s  idle: %s (unknown %s ms)\n", c.cpu, "", "",
                    residencyShares(c.idleResidencyNs, false, 6).c_str(), ms(c.idleUnknownNs).c_str());
      out << buf;
    }
  }
  if (stats.userSlices.empty()) return;
  out << "\n";
  std::snprintf(buf, sizeof buf, "%-32s %8s %12s %11s %11s %11s %6s\n", "USER SLICE", "COUNT", "TOTAL ms", "P50 us",
                "P99 us", "MAX us", "OPEN");
  out << buf;
  for (size_t i = 0; i < stats.userSlices.size() && i < top; ++i) {
    const auto& u = stats.userSlices[i];
    std::snprintf(buf, sizeof buf, "%-32.32s %8llu %12s %11s %11s %11s %6llu\n", u.name.c_str(),
                  static_cast<unsigned long long>(u.count), ms(u.totalNs).c_str(), us(u.p50Ns).c_str(),
                  us(u.p99Ns).c_str(), us(u.maxNs).c_str(), static_cast<unsigned long long>(u.open));
    out << buf;
  }
  if (stats.userSlices.size() > top) out << "  ... " << stats.userSlices.size() - top << " more (--top N)\n";
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
  printPowerTables(out, stats, top);
  out << "\n";
  const std::string inferredNote =
      stats.migrationsInferred
          ? " (" + std::to_string(stats.migrationsInferred) + " inferred: no sched_migrate_task traced)"
          : std::string();
  std::snprintf(buf, sizeof buf,
                "Fairness: Jain %.4f over %zu competing tasks; GPS lag max %s ms, mean %s ms\n"
                "Switches: %llu voluntary, %llu involuntary; %llu migrations%s; idle while runnable %s ms\n"
                "Wakeup latency: n=%llu mean %.1f us p50 %s p90 %s p99 %s max %s us\n"
                "Scheduling delay: n=%llu mean %.1f us p50 %s p90 %s p99 %s max %s us\n",
                stats.fairness.jain, stats.fairness.competingTasks, ms(stats.fairness.gpsLagMaxNs).c_str(),
                ms(stats.fairness.gpsLagMeanNs).c_str(), static_cast<unsigned long long>(stats.switchesVoluntary),
                static_cast<unsigned long long>(stats.switchesInvoluntary),
                static_cast<unsigned long long>(stats.migrations), inferredNote.c_str(),
                ms(stats.idleWhileRunnableNs).c_str(),
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
  auto args = Args::parse(argv, {"--from", "--to", "--by", "--top", "--topology", "--topology-from", "--table"},
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
  std::optional<core::analysis::StatsCsvTable> table;
  if (const auto name = args->value("--table")) {
    using core::analysis::StatsCsvTable;
    for (StatsCsvTable t : {StatsCsvTable::FreqResidency, StatsCsvTable::IdleResidency, StatsCsvTable::UserSlices})
      if (*name == core::analysis::toString(t)) table = t;
    if (!table || !args->flag("--csv")) {
      err << "schedlab-cli stats: --table goes with --csv and takes freq_residency, idle_residency or user_slices"
          << (table ? "" : " (not '" + *name + "')") << "\n";
      return kExitUsage;
    }
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
    out << (table ? core::analysis::runStatsCsv(stats, *table) : core::analysis::runStatsCsv(stats, grouping));
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
