// `schedlab-cli why`: why a task was not running — its time by state, the
// antagonists, idle-while-runnable, its wakers and its critical path — over the
// whole trace or a [from, to) range; against a second run (--against) the
// breakdown diff. Definitions: core/analysis/why.h and the README.
#include <chrono>
#include <cstdio>
#include <ostream>

#include "app/cli/cli.h"
#include "core/analysis/why.h"

namespace app::cli {

namespace {

constexpr const char* kWhyHelp =
    "usage: schedlab-cli why FILE --task TID|COMM [--from T] [--to T] [--critical-path] [--json]\n"
    "                            [--against FILE2] [--top N] [--bench N] [--topology CxT | --topology-from DIR]\n"
    "Why the task was not running, over the whole trace or the range [from, to). A COMM that names\n"
    "several tasks picks the one that ran the most in the range (a TID picks exactly).\n"
    "  running / runnable / sleeping / blocked   its time in each state (unknown: lost data)\n"
    "  antagonists   who ran on the CPUs it could run on while it was runnable, CPU time summed\n"
    "                over those CPUs\n"
    "  idle while runnable   wall time it waited on a CPU busy with another task while a CPU it\n"
    "                could run on was idle (a placement or balancing miss)\n"
    "  wakers        who made it runnable (<irq>: interrupt context or the idle task), how often,\n"
    "                and the sleep those wakeups ended\n"
    "  critical path (--critical-path) from the task's end (or --to) back to --from through the\n"
    "                wakeup chain: its own running and runnable time; at each wakeup, the waker's\n"
    "                activity before it; an interrupt wakeup ends the chain of wakers and the task's\n"
    "                own sleep is on the path. Segments sum to the range up to the task's end.\n"
    "  --against FILE2  the same task (same comm and process) in a second run (a replay's or another\n"
    "                recording's trace): both breakdowns and their changes\n"
    "  --bench N     time N breakdowns (after the import) and print milliseconds per breakdown\n"
    "JSON: {\"task\":{\"tid\",\"comm\"},\"range\":{\"from_ns\",\"to_ns\"},\"running_ns\",\"runnable_ns\",\n"
    "\"sleeping_ns\",\"blocked_ns\",\"unknown_ns\",\"idle_while_runnable_ns\",\"antagonists\":[{\"tid\",\"comm\",\n"
    "\"ns\"}],\"wakers\":[{\"tid\" (null: interrupt),\"comm\",\"count\",\"ns\"}],\"critical_path\":[{\"tid\",\"comm\",\n"
    "\"state\":\"running|runnable|sleeping|blocked\",\"from_ns\",\"to_ns\",\"waited_behind\":{\"tid\",\"comm\"} (runnable\n"
    "pieces ending at a switch-in from another task)}],\"critical_path_stop\"}; with\n"
    "--against: {\"a\":{...},\"b\":{...},\"changes\":{\"running_ns\":{a,b,abs,rel},...},\"antagonists\":[{\"comm\",\n"
    "\"a_ns\",\"b_ns\"}]}.\n";

std::string taskName(const core::TraceModel& m, core::Utid u) {
  if (!u.isValid()) return "<irq>";
  return std::string(m.comm(u)) + "-" + std::to_string(m.threads.tid[u.value]);
}

void printWhy(std::ostream& out, const core::TraceModel& m, const core::analysis::WhyReport& w, bool path,
              size_t top) {
  char buf[256];
  out << taskName(m, w.utid) << ", range " << formatDuration(w.range.from - m.firstTs) << " .. "
      << formatDuration(w.range.to - m.firstTs) << "\n";
  std::snprintf(buf, sizeof buf, "  running %s  runnable %s  sleeping %s  blocked %s%s\n", formatDuration(w.runningNs).c_str(),
                formatDuration(w.runnableNs).c_str(), formatDuration(w.sleepingNs).c_str(), formatDuration(w.blockedNs).c_str(),
                w.unknownNs ? ("  unknown " + formatDuration(w.unknownNs)).c_str() : "");
  out << buf;
  out << "  idle while runnable " << formatDuration(w.idleWhileRunnableNs) << "\n";
  out << "  antagonists (CPU time while it was runnable):\n";
  for (size_t i = 0; i < w.antagonists.size() && i < top; ++i)
    out << "    " << formatDuration(w.antagonists[i].ns) << "  " << taskName(m, w.antagonists[i].utid) << "\n";
  if (w.antagonists.size() > top) out << "    ... " << w.antagonists.size() - top << " more (--top N)\n";
  out << "  wakers (wakeups, sleep they ended):\n";
  for (size_t i = 0; i < w.wakers.size() && i < top; ++i)
    out << "    " << w.wakers[i].count << "  " << formatDuration(w.wakers[i].sleepNs) << "  " << taskName(m, w.wakers[i].utid)
        << "\n";
  if (w.wakers.size() > top) out << "    ... " << w.wakers.size() - top << " more (--top N)\n";
  if (!path) return;
  const auto& cp = w.criticalPath;
  out << "  critical path, " << formatDuration(cp.from() - m.firstTs) << " .. " << formatDuration(cp.end - m.firstTs)
      << " (" << cp.segments.size() << " segments; starts at the " << core::analysis::toString(cp.stop) << "):\n";
  for (const auto& s : cp.segments) {
    const std::string behind = s.waitedBehind.isValid() ? "  (behind " + taskName(m, s.waitedBehind) + ")" : "";
    std::snprintf(buf, sizeof buf, "    %14s .. %-14s %12s  %-9s %s%s\n", formatDuration(s.from - m.firstTs).c_str(),
                  formatDuration(s.to - m.firstTs).c_str(), formatDuration(s.length()).c_str(),
                  std::string(core::analysis::toString(s.state)).c_str(), taskName(m, s.utid).c_str(), behind.c_str());
    out << buf;
  }
}

// The task --task names in the model, or an invalid id (the error printed).
core::Utid pickTask(const core::TraceModel& m, const std::string& spec, core::analysis::TimeRange range,
                    std::ostream& err, bool quiet) {
  const auto tasks = core::analysis::findTasks(m, spec);
  if (tasks.empty()) {
    err << "error: no task with tid or comm '" << spec << "'\n";
    return {};
  }
  const core::Utid u = core::analysis::busiestTask(m, tasks, range);
  if (tasks.size() > 1 && !quiet)
    err << "note: " << tasks.size() << " tasks match '" << spec << "'; showing the busiest in the range, tid "
        << m.threads.tid[u.value] << "\n";
  return u;
}

}  // namespace

int whyCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  std::string error;
  auto args = Args::parse(argv, {"--task", "--from", "--to", "--against", "--top", "--bench", "--topology",
                                 "--topology-from"},
                          {"--json", "--critical-path", "--help"}, error);
  if (!args || args->flag("--help") || args->positional().size() != 1 || !args->value("--task")) {
    const bool help = args && args->flag("--help");
    (help ? out : err) << (args ? (help ? "" : "schedlab-cli why: needs FILE and --task\n")
                                : "schedlab-cli why: " + error + "\n")
                       << kWhyHelp;
    return help ? kExitOk : kExitUsage;
  }
  const bool json = args->flag("--json");
  bool failed = false;
  auto model = loadTrace(args->positional()[0], *args, err, failed);
  if (!model) return kExitFailure;
  const auto range = parseRange(*args, *model, err);
  if (!range) return kExitUsage;
  const std::string spec = *args->value("--task");
  const core::Utid u = pickTask(*model, spec, *range, err, json);
  if (!u.isValid()) return kExitFailure;

  if (auto bench = args->value("--bench")) {
    const int n = std::max(1, std::atoi(bench->c_str()));
    const auto t0 = std::chrono::steady_clock::now();
    int64_t sink = 0;
    for (int i = 0; i < n; ++i) sink += core::analysis::explainTask(*model, u, *range).runnableNs;
    const double msPer = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / n;
    char buf[200];
    std::snprintf(buf, sizeof buf, "why %s: %llu events, task %s: %.1f ms per breakdown (%d runs; runnable %lld ns)\n",
                  args->positional()[0].c_str(), static_cast<unsigned long long>(model->eventCount),
                  taskName(*model, u).c_str(), msPer, n, static_cast<long long>(sink / n));
    out << buf;
    return failed ? kExitFailure : kExitOk;
  }

  const auto why = core::analysis::explainTask(*model, u, *range);
  if (auto againstPath = args->value("--against")) {
    auto other = loadTrace(*againstPath, *args, err, failed);
    if (!other) return kExitFailure;
    const auto otherRange = parseRange(*args, *other, err);
    if (!otherRange) return kExitUsage;
    const core::Utid v = core::analysis::matchTask(*model, u, *other);
    if (!v.isValid()) {
      err << "error: " << *againstPath << " has no task named '" << model->comm(u) << "'\n";
      return kExitFailure;
    }
    const auto whyB = core::analysis::explainTask(*other, v, *otherRange);
    const auto diff = core::analysis::diffWhy(*model, why, *other, whyB);
    if (json) {
      core::JsonWriter j;
      j.beginObject();
      j.key("a").beginObject();
      core::analysis::writeWhyJson(j, *model, why);
      j.endObject();
      j.key("b").beginObject();
      core::analysis::writeWhyJson(j, *other, whyB);
      j.endObject();
      core::analysis::writeWhyDiffJson(j, diff);
      j.endObject();
      out << j.str() << "\n";
    } else {
      const size_t top = static_cast<size_t>(std::max(1, std::atoi(args->value("--top").value_or("10").c_str())));
      out << "A: " << args->positional()[0] << "\n";
      printWhy(out, *model, why, args->flag("--critical-path"), top);
      out << "\nB: " << *againstPath << "\n";
      printWhy(out, *other, whyB, args->flag("--critical-path"), top);
      out << "\nB against A:\n";
      char buf[200];
      for (const auto& d : diff.metrics) {
        const auto rel = d.relative();
        std::snprintf(buf, sizeof buf, "  %-24s %14s -> %14s  %+.3f ms%s\n", d.name.c_str(),
                      formatDuration(static_cast<int64_t>(d.a)).c_str(), formatDuration(static_cast<int64_t>(d.b)).c_str(), d.delta() / 1e6,
                      rel ? (" (" + std::to_string(static_cast<int>(*rel * 100)) + "%)").c_str() : "");
        out << buf;
      }
      out << "  antagonists (A -> B):\n";
      for (size_t i = 0; i < diff.antagonists.size() && i < top; ++i)
        out << "    " << formatDuration(diff.antagonists[i].aNs) << " -> " << formatDuration(diff.antagonists[i].bNs) << "  "
            << diff.antagonists[i].comm << "\n";
    }
    return failed ? kExitFailure : kExitOk;
  }
  if (json) {
    core::JsonWriter j;
    j.beginObject();
    core::analysis::writeWhyJson(j, *model, why);
    j.endObject();
    out << j.str() << "\n";
  } else {
    const size_t top = static_cast<size_t>(std::max(1, std::atoi(args->value("--top").value_or("10").c_str())));
    printWhy(out, *model, why, args->flag("--critical-path"), top);
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace app::cli
