// `schedlab-cli replay`: replays a recorded trace (or an rt-app JSON workload)
// through a scheduler model and prints the replay's statistics beside the
// recording's, with the validation block (makespan, work conservation, what
// could not be modelled). --json uses the `stats --json` schema plus "model",
// "params" and "validation"; --out writes the replayed schedule as ftrace text;
// --bench times the replay against the import of the same file.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <ostream>

#include <sys/resource.h>

#include "app/cli/cli.h"
#include "core/analysis/stats.h"
#include "core/analysis/stats_json.h"
#include "core/huge_pages.h"
#include "core/malloc_arena.h"
#include "core/json_writer.h"
#include "importers/importer.h"
#include "replay/policies/registry.h"
#include "replay/replay.h"
#include "replay/workload/rtapp_reader.h"
#include "replay/workload/trace_extractor.h"

namespace app::cli {

namespace {

std::string replayHelp() {
  std::string s =
      "usage: schedlab-cli replay FILE|WORKLOAD.json --model MODEL [--topology CxT | --topology-from DIR]\n"
      "                           [--hz N] [--param KEY=VALUE]... [--json] [--out FILE] [--top N]\n"
      "                           [--tasks all|created|tree:COMM]\n"
      "                           [--cookie RULE]... [--uclamp SELECTOR=MIN:MAX]... [--sysctl NAME=VALUE]...\n"
      "                           [--smt-factor SELECTOR=F]...\n"
      "       schedlab-cli replay FILE --model MODEL --bench [--repeat N]\n"
      "       schedlab-cli replay --model MODEL --help     (that model's parameters)\n"
      "Replays the workload of a recorded trace (any format `info` reads) or of a hand-written rt-app\n"
      "style JSON file through a scheduler model, on the recorded topology unless --topology is given.\n"
      "Each task becomes bursts of CPU work (its recorded CPU time, summed across preemptions), each\n"
      "ended by a block; a block ends when the recorded waker reaches the same point of its own work,\n"
      "or, for wakeups from interrupt/idle context, after the recorded sleep; where a task was switched\n"
      "in again after a preemption, the rest of its burst waits for its waker to reach its recorded\n"
      "progress of that instant (a dataflow gate; wakeup_dependency=exact leaves them out). Forks start\n"
      "children at the parent's work point; execs balance the task there (sched_exec()); exits end tasks.\n"
      "\"Blocks:\" counts the recorded blocks replayed and those lost because the waker had already\n"
      "passed its point, and how far (in the waker's work) the wakers were from their points when\n"
      "their wakees ended the bursts before those blocks: the replay's drift from the recorded\n"
      "interleaving where it decides the blocking. \"Model:\" counts what the model did that the\n"
      "kernel shows only in its debug files (EEVDF: the sleepers DELAY_DEQUEUE kept queued;\n"
      "docs/models.md says how to compare).\n"
      "Models:\n";
  for (const auto& p : replay::allPolicies()) s += "  " + std::string(p.name) + "  " + std::string(p.title) + "\n";
  s +=
      "  baseline  the model of the kernel that recorded the trace: cfs before Linux 6.6, eevdf (at that\n"
      "            release) from 6.6 on, eevdf when the trace does not say; baseline+FEATURES too\n"
      "  cfs and eevdf take features: +coresched (core scheduling: cookies, core-wide pick, forced idle;\n"
      "  variants via --param coresched.variant=...) and +uclamp (uclamp, schedutil frequencies, energy),\n"
      "  e.g. --model cfs+coresched, eevdf+coresched+uclamp.\n"
      "Per-task attributes (SELECTOR: comm:REGEX, tgid:N, tid:N, all, rt, fair; repeatable, later wins):\n"
      "  --cookie RULE      core-scheduling cookie: per-process, per-thread, none or SELECTOR=NAME\n"
      "                     (= coresched.cookie; children inherit, untagged tasks share cookie 0)\n"
      "  --uclamp SEL=MIN:MAX  uclamp request, 0..1024 each, either may be empty (= uclamp.clamp)\n"
      "  --sysctl NAME=VALUE   e.g. sched_util_clamp_min_rt_default=0 (= sysctl.NAME)\n"
      "  --smt-factor SEL=F    the task's speed while its SMT sibling is busy (= smt.task_factor;\n"
      "                        default smt.factor, 0.65)\n";
  s +=
      "Output: the replay's statistics beside the recording's (see `stats --help` for definitions), and a\n"
      "validation block: makespan (from the start of the first burst to the end of the last completed\n"
      "burst of the workload's tasks: for a recording, the tasks created during the trace - the traced\n"
      "command and its descendants - or every task when the trace created none; for rt-app, every task)\n"
      "recorded and replayed; whether every task did exactly its recorded CPU work; and counts of what\n"
      "could not be modelled exactly; for a recording, the fidelity: per metric the recorded and\n"
      "replayed value, their ratio and a verdict against the identity bounds (README \"Replay\n"
      "fidelity\"), and per task the CPU share, wait and switches of both.\n"
      "  --param KEY=VALUE  override a model or engine parameter (repeatable); --hz N is hz=N\n"
      "  --out FILE         also write the replayed schedule as ftrace text (tracefs `trace` format;\n"
      "                     forced idle is written as idle and frequencies are left out: ftrace text\n"
      "                     has no sched event for either)\n"
      "  --tasks created    replay only the tasks created during the trace, not what was already running\n"
      "  --tasks tree:COMM  replay only the first task created with that comm (e.g. tree:make) and its\n"
      "                     descendants; others' wakeups become sleeps; default: all tasks\n"
      "  --json             {\"model\",\"params\":{KEY: VALUE},\"param_origins\":{KEY: \"default\", \"user\" or\n"
      "                     how it was resolved, e.g. measured from the recording},\"tasks\",\"cpus\",\n"
      "                     \"fairness\",\"range\",\"totals\",\"cookies\" (with +coresched), \"energy_j\" (with +uclamp),\n"
      "                     \"model_counters\":{KEY: VALUE} (what \"Model:\" says), for a recording\n"
      "                     \"blocks\":{\"recorded\",\"replayed\",\"dataflow_gates\",\"dataflow_gates_blocked\",\n"
      "                     \"waker_past_median_ns\",\"waker_short_median_ns\"}\n"
      "                     (what \"Blocks:\" says),\n"
      "                     \"recorded\":{same schema},\"validation\":{\"makespan_recorded_ns\",\n"
      "                     \"makespan_replay_ns\",\"makespan_ratio\",\"work_conserved\",\"unmodelled\":{...},\n"
      "                     \"fidelity\":{\"verdict\",\"failed\",\"metrics\":[{\"key\",\"label\",\"recorded\",\n"
      "                     \"replayed\",\"ratio\",\"measure\",\"bound\",\"verdict\"}],\"tasks\":[...]}}}\n"
      "  --bench            time each stage (import, the recording's statistics, extraction, simulation,\n"
      "                     the replay's statistics and fidelity) and the whole command, wall and CPU\n"
      "                     time and minor page faults (pages touched for the first time), median of\n"
      "                     --repeat N (default 3), and print the ratios to the import\n"
      "Exit codes: 0 ok, 1 bad input file or a workload that does not fit, 2 bad usage (unknown model,\n"
      "bad parameter, impossible topology).\n";
  return s;
}

std::string msText(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1e6);
  return buf;
}
std::string usText(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(ns) / 1e3);
  return buf;
}

void writeParamValue(core::JsonWriter& j, const replay::Params::Spec& s) {
  using T = replay::Params::Type;
  switch (s.type) {
    case T::Int: j.value(static_cast<int64_t>(std::strtoll(s.value.c_str(), nullptr, 10))); break;
    case T::Double: j.value(std::strtod(s.value.c_str(), nullptr)); break;
    case T::Bool: j.value(s.value == "true"); break;
    default: j.value(s.value); break;
  }
}

// The "Blocks:" line's counts and drift, for a recording's replay.
void writeBlocksJson(core::JsonWriter& j, const replay::ReplayResult& r) {
  const replay::EngineStats& st = r.stats;
  j.key("blocks").beginObject();
  j.field("recorded", st.taskBlocks + st.taskBlocksSkipped);
  j.field("replayed", st.taskBlocks);
  j.field("dataflow_gates", st.gateBlocks + st.gatesPassed);
  j.field("dataflow_gates_blocked", st.gateBlocks);
  if (const auto& drift = r.wakerDrift) {
    if (drift->medianPastNs) j.field("waker_past_median_ns", *drift->medianPastNs);
    if (drift->medianShortNs) j.field("waker_short_median_ns", *drift->medianShortNs);
  }
  j.endObject();
}

void printValidation(std::ostream& out, const replay::Workload& w, const replay::ReplayResult& r) {
  const auto& v = r.validation;
  char buf[256];
  out << "Validation:\n";
  if (v.makespanRecordedNs >= 0) {
    std::snprintf(buf, sizeof buf, "  makespan     recorded %s  replay %s  (replay/recorded %.3f)\n",
                  formatDuration(v.makespanRecordedNs).c_str(), formatDuration(v.makespanReplayNs).c_str(),
                  v.makespanRatio());
  } else {
    std::snprintf(buf, sizeof buf, "  makespan     replay %s (no recording)\n", formatDuration(v.makespanReplayNs).c_str());
  }
  out << buf;
  if (v.workConserved) {
    std::snprintf(buf, sizeof buf, "  work         conserved: every one of %zu tasks did exactly its work (%s)\n",
                  w.tasks.size(), formatDuration(v.workRecordedNs).c_str());
  } else {
    std::snprintf(buf, sizeof buf,
                  "  work         NOT conserved: %llu of %zu tasks unfinished, %llu with other work; %s of %s done%s\n",
                  static_cast<unsigned long long>(v.tasksUnfinished), w.tasks.size(),
                  static_cast<unsigned long long>(v.tasksWorkMismatch), formatDuration(v.workReplayNs).c_str(),
                  formatDuration(v.workRecordedNs).c_str(),
                  w.durationNs > 0 ? " (the workload's duration cut it short)" : "");
  }
  out << buf;
  const auto& u = v.unmodelled;
  out << "  unmodelled   (counts; see --help)\n";
  for (const auto& item : u.items()) {
    std::snprintf(buf, sizeof buf, "    %10llu  %s\n", static_cast<unsigned long long>(item.count), item.what);
    out << buf;
  }
}

std::string fidelityValue(const core::analysis::FidelityMetric& m, double v) {
  using Unit = core::analysis::FidelityMetric::Unit;
  char buf[64];
  switch (m.unit) {
    case Unit::Ns: return formatDuration(static_cast<int64_t>(v));
    case Unit::Count: std::snprintf(buf, sizeof buf, "%.0f", v); return buf;
    case Unit::Distance: std::snprintf(buf, sizeof buf, "%.3f", v); return buf;
    case Unit::Pp: std::snprintf(buf, sizeof buf, "%.2f pp", v); return buf;
  }
  return {};
}

// Pads to `width` columns as a terminal shows them (printf's widths count bytes, and ± and µ take two).
std::string padded(const std::string& s, size_t width) {
  size_t columns = 0;
  for (unsigned char c : s) columns += (c & 0xC0) != 0x80;
  return columns >= width ? s : s + std::string(width - columns, ' ');
}

void printFidelity(std::ostream& out, const core::analysis::Fidelity& f, size_t top) {
  using core::analysis::Verdict;
  char buf[512];
  std::snprintf(buf, sizeof buf, "Fidelity:    %s (%zu of %zu judged metrics outside their bounds; README \"Replay fidelity\")\n",
                f.overall() == Verdict::Pass ? "PASS" : "FAIL", f.failed(),
                static_cast<size_t>(std::count_if(f.metrics.begin(), f.metrics.end(),
                                                  [](const auto& m) { return m.verdict != Verdict::Info; })));
  out << buf;
  std::snprintf(buf, sizeof buf, "  %-48s %14s %14s %7s  %-16s %s\n", "metric", "recorded", "replay", "ratio", "bound",
                "verdict");
  out << buf;
  for (const auto& m : f.metrics) {
    std::string ratio = "-";
    if (m.ratio) {
      char r[32];
      std::snprintf(r, sizeof r, "%.3f", *m.ratio);
      ratio = r;
    }
    const std::string rec = m.recorded ? fidelityValue(m, *m.recorded) : "";
    const std::string rep = m.replayed ? fidelityValue(m, *m.replayed) : fidelityValue(m, m.measure);
    std::snprintf(buf, sizeof buf, "  %s %14s %14s %7s  %s %s\n", padded(m.label, 48).c_str(), rec.c_str(),
                  rep.c_str(), ratio.c_str(), padded(m.bound, 16).c_str(),
                  std::string(core::analysis::toString(m.verdict)).c_str());
    out << buf;
  }
  out << "\n";
  std::snprintf(buf, sizeof buf, "%8s %-16s %9s %9s %8s %11s %11s %7s %7s %7s %7s  %s\n", "TID", "COMM", "CPU% rec",
                "CPU% rep", "diff pp", "WAIT ms rec", "WAIT ms rep", "VOL rec", "VOL rep", "INV rec", "INV rep",
                "verdict");
  out << buf;
  for (size_t i = 0; i < f.tasks.size() && i < top; ++i) {
    const auto& t = f.tasks[i];
    std::snprintf(buf, sizeof buf, "%8d %-16.16s %9.2f %9.2f %+8.2f %11.3f %11.3f %7llu %7llu %7llu %7llu  %s\n", t.tid,
                  t.comm.c_str(), 100 * t.shareRecorded, 100 * t.shareReplayed, t.shareDiffPp(),
                  static_cast<double>(t.waitRecordedNs) / 1e6, static_cast<double>(t.waitReplayedNs) / 1e6,
                  static_cast<unsigned long long>(t.voluntaryRecorded),
                  static_cast<unsigned long long>(t.voluntaryReplayed),
                  static_cast<unsigned long long>(t.involuntaryRecorded),
                  static_cast<unsigned long long>(t.involuntaryReplayed),
                  std::string(core::analysis::toString(t.verdict)).c_str());
    out << buf;
  }
  if (f.tasks.size() > top) out << "  ... " << f.tasks.size() - top << " more tasks (--top N)\n";
}

void printSideBySide(std::ostream& out, const core::analysis::RunStats* rec, const core::analysis::RunStats& rep,
                     size_t top) {
  char buf[512];
  auto row = [&](const char* name, const std::string& a, const std::string& b) {
    std::snprintf(buf, sizeof buf, "  %-28s %16s %16s\n", name, a.c_str(), b.c_str());
    out << buf;
  };
  auto num = [](uint64_t v) { return std::to_string(v); };
  std::snprintf(buf, sizeof buf, "  %-28s %16s %16s\n", "", rec ? "recorded" : "", "replay");
  out << buf;
  row("span ms", rec ? msText(rec->coveredNs) : "", msText(rep.coveredNs));
  row("busy CPU time ms", rec ? msText(rec->busyNs) : "", msText(rep.busyNs));
  row("switches voluntary", rec ? num(rec->switchesVoluntary) : "", num(rep.switchesVoluntary));
  row("switches involuntary", rec ? num(rec->switchesInvoluntary) : "", num(rep.switchesInvoluntary));
  row("migrations", rec ? num(rec->migrations) : "", num(rep.migrations));
  row("wakeup latency p50 us", rec ? usText(rec->wakeupLatency.p50) : "", usText(rep.wakeupLatency.p50));
  row("wakeup latency p99 us", rec ? usText(rec->wakeupLatency.p99) : "", usText(rep.wakeupLatency.p99));
  row("sched delay p50 us", rec ? usText(rec->schedDelay.p50) : "", usText(rep.schedDelay.p50));
  row("sched delay p99 us", rec ? usText(rec->schedDelay.p99) : "", usText(rep.schedDelay.p99));
  std::snprintf(buf, sizeof buf, "%.4f", rec ? rec->fairness.jain : 0.0);
  const std::string jr = buf;
  std::snprintf(buf, sizeof buf, "%.4f", rep.fairness.jain);
  row("Jain's index", rec ? jr : "", buf);
  row("GPS lag max ms", rec ? msText(rec->fairness.gpsLagMaxNs) : "", msText(rep.fairness.gpsLagMaxNs));
  for (const auto& c : rep.cpus) {
    const std::string name = "cpu" + std::to_string(c.cpu) + " utilisation %";
    std::string a;
    if (rec)
      for (const auto& rc : rec->cpus)
        if (rc.cpu == c.cpu) {
          std::snprintf(buf, sizeof buf, "%.1f", 100.0 * rc.utilisation);
          a = buf;
        }
    std::snprintf(buf, sizeof buf, "%.1f", 100.0 * c.utilisation);
    row(name.c_str(), a, buf);
  }
  out << "\n";
  // Tasks, matched by tid in order of appearance (tids of exited tasks can come back).
  std::map<int32_t, std::vector<const core::analysis::TaskStats*>> recByTid;
  if (rec)
    for (const auto& t : rec->tasks) recByTid[t.tid].push_back(&t);
  std::map<int32_t, size_t> used;
  std::vector<const core::analysis::TaskStats*> rows;
  for (const auto& t : rep.tasks) rows.push_back(&t);
  std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->runtimeNs > b->runtimeNs; });
  std::snprintf(buf, sizeof buf, "%8s %-16s %12s %12s %12s %12s %10s %10s\n", "TID", "COMM", "RUN ms rec",
                "RUN ms rep", "WAIT ms rec", "WAIT ms rep", "LAT99 rec", "LAT99 rep");
  out << buf;
  size_t shown = 0;
  for (const auto* t : rows) {
    const core::analysis::TaskStats* r = nullptr;
    auto it = recByTid.find(t->tid);
    if (it != recByTid.end()) {
      size_t& k = used[t->tid];
      if (k < it->second.size()) r = it->second[k++];
    }
    if (shown++ >= top) continue;
    std::snprintf(buf, sizeof buf, "%8d %-16.16s %12s %12s %12s %12s %10s %10s\n", t->tid, t->comm.c_str(),
                  r ? msText(r->runtimeNs).c_str() : "-", msText(t->runtimeNs).c_str(),
                  r ? msText(r->waitNs).c_str() : "-", msText(t->waitNs).c_str(),
                  r ? usText(r->wakeupLatency.p99).c_str() : "-", usText(t->wakeupLatency.p99).c_str());
    out << buf;
  }
  if (rows.size() > top) out << "  ... " << rows.size() - top << " more tasks (--top N)\n";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int replayCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  std::string error;
  auto args = Args::parse(argv,
                          {"--model", "--topology", "--topology-from", "--hz", "--param", "--out", "--top", "--repeat",
                           "--tasks", "--cookie", "--uclamp", "--sysctl", "--smt-factor"},
                          {"--json", "--bench", "--help"}, error);
  if (!args) {
    err << "schedlab-cli replay: " << error << " (see --help)\n";
    return kExitUsage;
  }
  // "baseline" is checked as eevdf until the recording says its kernel.
  std::string model = args->value("--model").value_or("");
  const std::string requestedModel = model;
  model = replay::resolveBaseline(model, "");
  if (args->flag("--help")) {
    out << replayHelp();
    if (!model.empty()) {
      auto params = replay::defaultParams(model);
      if (!params) {
        err << "schedlab-cli replay: " << params.error().message() << "\n";
        return kExitUsage;
      }
      out << "\nParameters of " << model << " (" << replay::parseModel(model)->source() << "):\n"
          << params->helpText();
    }
    return kExitOk;
  }
  if (args->positional().size() != 1) {
    err << "schedlab-cli replay: expected one FILE or WORKLOAD.json (see --help)\n";
    return kExitUsage;
  }
  if (model.empty()) {
    err << "schedlab-cli replay: --model is required (" << replay::policyNames() << ")\n";
    return kExitUsage;
  }
  auto defaults = replay::defaultParams(model);
  if (!defaults) {
    err << "schedlab-cli replay: " << defaults.error().message() << "\n";
    return kExitUsage;
  }
  {
    const auto spec = *replay::parseModel(model);  // valid: defaultParams() accepted it
    const char* missing = !spec.coresched && args->has("--cookie")
                              ? "--cookie needs core scheduling: a model with +coresched (e.g. cfs+coresched)"
                          : !spec.uclamp && (args->has("--uclamp") || args->has("--sysctl"))
                              ? "--uclamp and --sysctl need a model with +uclamp (e.g. cfs+uclamp)"
                              : nullptr;
    if (missing) {
      err << "schedlab-cli replay: " << missing << "\n";
      return kExitUsage;
    }
  }
  replay::ReplayOptions options;
  options.model = model;
  options.params = args->values("--param");
  // The attribute flags are sugar for their parameters (so the stored replay shows them).
  auto joined = [&](const char* flag) {
    std::string all;
    for (const auto& v : args->values(flag)) all += (all.empty() ? "" : ";") + v;
    return all;
  };
  if (auto v = joined("--cookie"); !v.empty()) options.params.push_back("coresched.cookie=" + v);
  if (auto v = joined("--uclamp"); !v.empty()) options.params.push_back("uclamp.clamp=" + v);
  if (auto v = joined("--smt-factor"); !v.empty()) options.params.push_back("smt.task_factor=" + v);
  for (const auto& v : args->values("--sysctl")) options.params.push_back("sysctl." + v);
  for (const auto& p : options.params)
    if (auto st = defaults->setAssignment(p); !st) {
      err << "schedlab-cli replay: " << st.message() << "\n";
      return kExitUsage;
    }
  if (auto hz = args->value("--hz")) {
    if (auto st = defaults->set("hz", *hz); !st) {
      err << "schedlab-cli replay: --hz " << *hz << ": " << st.message() << "\n";
      return kExitUsage;
    }
    options.params.push_back("hz=" + *hz);
  }
  if (auto spec = args->value("--topology")) {
    auto topo = core::Topology::parseSpec(*spec);
    if (!topo) {
      err << "schedlab-cli replay: " << topo.error().message() << "\n";
      return kExitUsage;
    }
    options.topology = *topo;
  } else if (auto dir = args->value("--topology-from")) {
    auto topo = core::Topology::fromSysfs(*dir);
    if (!topo) {
      err << "schedlab-cli replay: " << topo.error().message() << "\n";
      return kExitUsage;
    }
    options.topology = *topo;
  }
  options.outTrace = args->value("--out").value_or("");
  replay::ExtractOptions extract;
  if (auto tasks = args->value("--tasks")) {
    if (tasks->rfind("tree:", 0) == 0 && tasks->size() > 5) {
      extract.treeOf = tasks->substr(5);
    } else if (*tasks == "all" || *tasks == "created") {
      extract.onlyCreatedTasks = *tasks == "created";
    } else {
      err << "schedlab-cli replay: --tasks takes all, created or tree:COMM (not '" << *tasks << "')\n";
      return kExitUsage;
    }
  }
  const std::string& path = args->positional()[0];
  options.recordingPath = path;
  const bool isJson = replay::looksLikeWorkloadJson(path);

  std::string noArgsError;
  const auto importArgs = *Args::parse({}, {}, {}, noArgsError);  // the recording keeps its own topology

  if (args->flag("--bench")) {
    if (isJson) {
      err << "schedlab-cli replay: --bench needs a trace (it compares replay time with import time)\n";
      return kExitUsage;
    }
    const int repeat = std::max(1, std::atoi(args->value("--repeat").value_or("3").c_str()));
    // The stages of the whole command, one after another so that each can be
    // timed (import, the recording's statistics, extraction, the simulation,
    // the replay's statistics and fidelity), then the command as it runs.
    // CPU seconds (of all threads) beside wall seconds: on a busy machine the
    // wall clock also times the other processes.
    enum Stage { kImport, kRecordedStats, kExtract, kSimulate, kReplayStats, kStages };
    static constexpr const char* kStageNames[kStages] = {"import", "recorded_stats", "extract", "simulate",
                                                         "replay_stats_and_fidelity"};
    std::array<std::vector<double>, kStages> wallS, cpuS, faults;
    std::vector<double> stagedWallS, stagedCpuS, commandWallS, commandCpuS;
    uint64_t eventsIn = 0, eventsOut = 0;
    struct Stamp {
      std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
      std::clock_t cpu = std::clock();
      // First touches of fresh memory: at millions of events, the kernel's
      // clearing of those pages is a tenth of the command.
      long minorFaults = [] {
        rusage usage{};
        getrusage(RUSAGE_SELF, &usage);
        return usage.ru_minflt;
      }();
    };
    const auto wallSecs = [](const Stamp& a, const Stamp& b) { return std::chrono::duration<double>(b.wall - a.wall).count(); };
    const auto cpuSecs = [](const Stamp& a, const Stamp& b) { return static_cast<double>(b.cpu - a.cpu) / CLOCKS_PER_SEC; };
    for (int i = 0; i < repeat; ++i) {
      std::array<Stamp, kStages + 1> at;
      bool failed = false;
      auto recorded = loadTrace(path, importArgs, err, failed);
      at[kImport + 1] = Stamp();
      if (!recorded) return kExitFailure;
      const auto recStats = core::analysis::computeStats(*recorded);
      at[kRecordedStats + 1] = Stamp();
      auto workload = replay::extractWorkload(*recorded, replay::extractOptionsFor(options, extract));
      if (!workload) {
        err << "error: " << workload.error().message() << "\n";
        return kExitFailure;
      }
      at[kExtract + 1] = Stamp();
      auto result = replay::runReplay(*workload, options);
      at[kSimulate + 1] = Stamp();
      if (!result) {
        err << "error: " << result.error().message() << "\n";
        return kExitFailure;
      }
      replay::judgeAgainstRecording(*result, recStats);
      at[kReplayStats + 1] = Stamp();
      eventsIn = recorded->eventCount;
      eventsOut = result->model->eventCount;
      for (int s = 0; s < kStages; ++s) {
        wallS[s].push_back(wallSecs(at[s], at[s + 1]));
        cpuS[s].push_back(cpuSecs(at[s], at[s + 1]));
        faults[s].push_back(static_cast<double>(at[s + 1].minorFaults - at[s].minorFaults));
      }
      stagedWallS.push_back(wallSecs(at[0], at[kStages]));
      stagedCpuS.push_back(cpuSecs(at[0], at[kStages]));
      // The command as it runs: the recording's statistics beside the replay.
      const Stamp begin;
      auto again = loadTrace(path, importArgs, err, failed);
      if (!again || !replay::replayRecording(*again, options, extract)) return kExitFailure;
      const Stamp end;
      commandWallS.push_back(wallSecs(begin, end));
      commandCpuS.push_back(cpuSecs(begin, end));
    }
    core::JsonWriter j;
    j.beginObject();
    j.field("file", path);
    j.field("model", model);
    j.field("runs", static_cast<int64_t>(repeat));
    j.field("glibc_malloc_hugetlb", core::hugePageMallocSetting());
    j.field("malloc_one_arena", core::oneMallocArena());
    j.field("malloc_freed_memory_kept", core::freedMemoryKept());
    j.field("events_imported", eventsIn);
    j.field("events_replayed", eventsOut);
    for (int s = 0; s < kStages; ++s) {
      j.field(std::string(kStageNames[s]) + "_s_median", median(wallS[s]));
      j.field(std::string(kStageNames[s]) + "_cpu_s_median", median(cpuS[s]));
      j.field(std::string(kStageNames[s]) + "_minor_faults_median", median(faults[s]));
    }
    j.field("staged_s_median", median(stagedWallS));
    j.field("staged_cpu_s_median", median(stagedCpuS));
    j.field("command_s_median", median(commandWallS));
    j.field("command_cpu_s_median", median(commandCpuS));
    j.field("command_over_import", median(commandWallS) / std::max(1e-9, median(wallS[kImport])));
    j.field("command_over_import_cpu", median(commandCpuS) / std::max(1e-9, median(cpuS[kImport])));
    j.endObject();
    out << j.str() << "\n";
    return kExitOk;
  }

  std::shared_ptr<core::TraceModel> recorded;
  replay::Workload workload;
  replay::ReplayResult result;
  std::optional<core::analysis::RunStats> recStats;
  bool inputFailed = false;
  if (isJson) {
    auto w = replay::readRtAppWorkloadFile(path);
    if (!w) {
      err << "error: " << w.error().message() << "\n";
      return kExitFailure;
    }
    workload = std::move(*w);
    auto r = replay::runReplay(workload, options);
    if (!r) {
      err << "error: " << r.error().message() << "\n";
      return kExitFailure;
    }
    result = std::move(*r);
    result.runStats = core::analysis::computeStats(*result.model);
  } else {
    recorded = loadTrace(path, importArgs, err, inputFailed);
    if (!recorded) return kExitFailure;
    model = replay::resolveBaseline(requestedModel, recorded->kernelRelease());
    options.model = model;
    auto r = replay::replayRecording(*recorded, options, extract);
    if (!r) {
      err << "error: " << r.error().message() << "\n";
      return kExitFailure;
    }
    workload = std::move(r->workload);
    recStats = std::move(r->recordedStats);
    result = std::move(r->result);
  }
  const core::analysis::RunStats& repStats = *result.runStats;
  const auto spec = *replay::parseModel(model);

  if (args->flag("--json")) {
    core::JsonWriter j;
    j.beginObject();
    j.field("file", path);
    j.field("model", spec.name);
    j.field("model_title", spec.title());
    j.field("model_source", spec.source());
    j.field("workload", workload.kind);
    j.key("topology").beginObject();
    j.key("cores").beginArray();
    for (const auto& core : result.topology.cores()) {
      j.beginArray();
      for (int cpu : core) j.value(cpu);
      j.endArray();
    }
    j.endArray();
    j.field("source", result.topology.source());
    j.endObject();
    // The values used (defaults resolved, overrides applied), typed from the specs.
    auto typed = *replay::defaultParams(model);
    for (const auto& p : result.params) (void)typed.set(p.key, p.value);
    j.key("params").beginObject();
    for (const auto& s : typed.specs()) {
      j.key(s.key);
      writeParamValue(j, s);
    }
    j.endObject();
    j.key("param_origins").beginObject();
    for (const auto& p : result.params) j.field(p.key, p.origin);
    j.endObject();
    core::analysis::writeRunStatsJson(j, repStats, core::analysis::StatsGrouping::Task);
    if (result.energyJoules) j.field("energy_j", *result.energyJoules);
    if (!result.modelCounters.values.empty()) {
      j.key("model_counters").beginObject();
      for (const auto& [key, value] : result.modelCounters.values) j.field(key, value);
      j.endObject();
    }
    if (recStats) {
      j.key("recorded").beginObject();
      core::analysis::writeRunStatsJson(j, *recStats, core::analysis::StatsGrouping::Task);
      j.endObject();
    }
    if (workload.kind == "trace") writeBlocksJson(j, result);
    replay::writeValidationJson(j, result.validation);
    j.endObject();
    out << j.str() << "\n";
    return inputFailed ? kExitFailure : kExitOk;
  }

  const size_t top = static_cast<size_t>(std::max(1, std::atoi(args->value("--top").value_or("20").c_str())));
  out << "Replay:      " << path << " through " << spec.name << " - " << spec.title() << "\n";
  if (requestedModel != model)
    out << "Baseline:    " << spec.name << ", the model of the recording's kernel ("
        << (recorded && !recorded->kernelRelease().empty() ? recorded->kernelRelease() : "not recorded")
        << "): upstream kernel/sched of its release, with rules measured where kernels differ (docs/models.md "
           "§5.5); a build's own patches are not read\n";
  out << "Source:      " << spec.source() << "\n";
  out << "Topology:    " << result.topology.describe() << "\n";
  out << "Workload:    " << workload.tasks.size() << " tasks, " << workload.burstCount() << " bursts, "
      << formatDuration(result.validation.workRecordedNs) << " of CPU work (" << workload.kind << ")";
  if (workload.dataflowGates) out << ", " << workload.dataflowGates << " of them dataflow gates";
  out << "\n";
  out << "Parameters:  (a note says where a value came from; the others are the model's defaults, each\n"
         "              sourced in `replay --model " << spec.name << " --help`)\n";
  for (const auto& p : result.params) {
    out << "  " << p.key << " = " << p.value;
    if (p.origin != "default") out << "   (" << p.origin << ")";
    out << "\n";
  }
  if (!options.outTrace.empty()) out << "Wrote:       " << options.outTrace << " (ftrace text)\n";
  if (workload.kind == "trace")
    out << "Blocks:      " << replay::describeBlocks(result.stats, result.wakerDrift, workload) << "\n";
  if (!result.modelCounters.summary.empty()) out << "Model:       " << result.modelCounters.summary << "\n";
  out << "\n";
  printSideBySide(out, recStats ? &*recStats : nullptr, repStats, top);
  out << "\n";
  printValidation(out, workload, result);
  if (result.validation.fidelity) {
    out << "\n";
    printFidelity(out, *result.validation.fidelity, top);
  }
  return inputFailed ? kExitFailure : kExitOk;
}

}  // namespace app::cli
