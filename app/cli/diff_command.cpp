// `schedlab-cli diff A B`: two runs of a workload compared task by task (matched
// by comm within process) and as a whole.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "app/cli/cli.h"
#include "core/analysis/diff.h"

namespace app::cli {

namespace {

constexpr const char* kDiffHelp =
    "usage: schedlab-cli diff A B [--from T] [--to T] [--json] [--top N] [--topology CxT]\n"
    "Compares two runs (two recordings, or a recording and a replay written with replay --out).\n"
    "Tasks are matched by comm within their process (tids differ between runs); several tasks of\n"
    "one name in a process are summed. Every metric is given for A and B with its absolute and\n"
    "relative change; latency distributions are compared by the Kolmogorov-Smirnov distance\n"
    "(largest gap between the two CDFs, 0..1). --from/--to apply to both runs, each relative to its\n"
    "own start. JSON: {\"a\":{run}, \"b\":{run}, \"tasks\":[{\"comm\",\"process\",\"a\":{stats}|null,\n"
    "\"b\":{stats}|null,\"delta\":{metric:{a,b,abs,rel}}}], \"summary\":{metric:{a,b,abs,rel},\n"
    "\"cpus\":{...}, \"frequencies\":{\"cpuN mean_freq_mhz\":{...}} where either run has frequencies}}.\n";

std::string fmt(const core::analysis::MetricDelta& m) {
  char buf[160];
  const bool ns = m.name.find("_ns") != std::string::npos;
  const double scale = ns ? 1e6 : 1.0;
  const char* unit = ns ? " ms" : "";
  std::string rel = "      -";
  if (auto r = m.relative()) {
    char rb[32];
    std::snprintf(rb, sizeof rb, "%+7.1f%%", 100.0 * *r);
    rel = rb;
  }
  std::snprintf(buf, sizeof buf, "  %-26s %14.3f %14.3f %+14.3f%s %s\n", m.name.c_str(), m.a / scale, m.b / scale,
                m.delta() / scale, unit, rel.c_str());
  return buf;
}

}  // namespace

int diffCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  std::string error;
  auto args = Args::parse(argv, {"--from", "--to", "--top", "--topology", "--topology-from"}, {"--json", "--help"},
                          error);
  if (!args || args->flag("--help") || args->positional().size() != 2) {
    (args && args->flag("--help") ? out : err) << (args ? "" : "schedlab-cli diff: " + error + "\n") << kDiffHelp;
    return args && args->flag("--help") ? kExitOk : kExitUsage;
  }
  bool failed = false;
  auto a = loadTrace(args->positional()[0], *args, err, failed);
  if (!a) return kExitFailure;
  auto b = loadTrace(args->positional()[1], *args, err, failed);
  if (!b) return kExitFailure;
  const auto ra = parseRange(*args, *a, err);
  const auto rb = parseRange(*args, *b, err);
  if (!ra || !rb) return kExitUsage;
  const auto diff = core::analysis::diffRuns(*a, core::analysis::computeStats(*a, *ra), args->positional()[0], *b,
                                             core::analysis::computeStats(*b, *rb), args->positional()[1]);
  if (args->flag("--json")) {
    core::JsonWriter j;
    j.beginObject();
    core::analysis::writeRunDiffJson(j, diff);
    j.endObject();
    out << j.str() << "\n";
    return failed ? kExitFailure : kExitOk;
  }
  out << "A: " << diff.a.label << " (" << a->format << ", " << diff.a.cpus << " CPUs, " << formatDuration(diff.a.spanNs)
      << ")\n";
  out << "B: " << diff.b.label << " (" << b->format << ", " << diff.b.cpus << " CPUs, " << formatDuration(diff.b.spanNs)
      << ")\n\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-26s %14s %14s %14s    %s\n", "RUN", "A", "B", "B-A", "REL");
  out << buf;
  for (const auto& m : diff.summary) out << fmt(m);
  for (const auto& m : diff.cpus) out << fmt(m);
  for (const auto& m : diff.frequencies) out << fmt(m);
  std::snprintf(buf, sizeof buf, "  KS distance: wakeup latency %.3f, scheduling delay %.3f\n\n",
                diff.wakeupLatencyKs, diff.schedDelayKs);
  out << buf;
  const size_t top = static_cast<size_t>(std::max(1, std::atoi(args->value("--top").value_or("25").c_str())));
  std::snprintf(buf, sizeof buf, "%-16s %-16s %5s %5s %11s %11s %9s %9s %7s %7s %7s %7s %9s %9s\n", "PROCESS", "COMM",
                "N(A)", "N(B)", "RUN A ms", "RUN B ms", "dRUN%", "WAIT d%", "VOL A", "VOL B", "INV A", "INV B",
                "LAT99 A", "LAT99 B");
  out << buf;
  size_t shown = 0;
  for (const auto& t : diff.tasks) {
    if (shown++ >= top) break;
    const core::analysis::TaskStats none;
    const auto& x = t.a ? *t.a : none;
    const auto& y = t.b ? *t.b : none;
    auto pct = [](const core::analysis::MetricDelta& m) {
      char b2[32];
      if (auto r = m.relative()) std::snprintf(b2, sizeof b2, "%+.1f%%", 100.0 * *r);
      else std::snprintf(b2, sizeof b2, "%s", m.b != 0 ? "new" : "-");
      return std::string(b2);
    };
    std::snprintf(buf, sizeof buf, "%-16.16s %-16.16s %5zu %5zu %11.3f %11.3f %9s %9s %7llu %7llu %7llu %7llu %9.1f %9.1f\n",
                  t.process.c_str(), t.comm.c_str(), t.tasksA, t.tasksB, static_cast<double>(x.runtimeNs) / 1e6,
                  static_cast<double>(y.runtimeNs) / 1e6, pct(t.metrics[0]).c_str(), pct(t.metrics[1]).c_str(),
                  static_cast<unsigned long long>(x.switchesVoluntary),
                  static_cast<unsigned long long>(y.switchesVoluntary),
                  static_cast<unsigned long long>(x.switchesInvoluntary),
                  static_cast<unsigned long long>(y.switchesInvoluntary),
                  static_cast<double>(x.wakeupLatency.p99) / 1e3, static_cast<double>(y.wakeupLatency.p99) / 1e3);
    out << buf;
  }
  if (diff.tasks.size() > top) out << "  ... " << diff.tasks.size() - top << " more (--top N)\n";
  return failed ? kExitFailure : kExitOk;
}

}  // namespace app::cli
