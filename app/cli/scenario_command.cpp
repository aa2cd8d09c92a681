// `schedlab-cli scenario coresched-fairness`: the core-scheduling fairness
// experiment of docs/models.md §6.1 run through every variant, printed as the
// experiment's table (and as JSON rows).
#include <cstdio>
#include <ostream>

#include "app/cli/cli.h"
#include "core/json_writer.h"
#include "replay/scenarios/coresched_fairness.h"

namespace app::cli {

namespace {

constexpr const char* kHelp =
    "usage: schedlab-cli scenario coresched-fairness [--runs N] [--seconds S] [--base cfs|eevdf]\n"
    "                                               [--param KEY=VALUE]... [--json]\n"
    "The core-scheduling fairness experiment of the RFC v3 thread (Julien Desfossez, Aug-Sep 2019;\n"
    "docs/models.md §6.1) in the simulator: one core with two SMT threads; sysbench-cpu (CPU-bound) pinned to thread 0\n"
    "and sysbench-mem (memory-bound) pinned to thread 1, both always runnable. While both threads run,\n"
    "each progresses at smt.factor (default 0.65; a task's own factor with\n"
    "--param 'smt.task_factor=comm:^sysbench-mem$=0.8'). For the four tagging cases (no tag, cpu tagged,\n"
    "mem tagged, both tagged with different cookies) and every coresched.variant, N runs (default 10)\n"
    "of S seconds (default 30) with start phases spread over a tick period; the value is the CPU-bound\n"
    "task's throughput relative to running alone on the core, mean and sample stddev over the runs.\n"
    "Reference rows: alone (1.0 by definition) and nosmt (both tasks on one thread: half the core).\n"
    "The table also shows the values in the experiment's units (x 1306.90 events/s, its `alone` figure).\n"
    "A third table shows how finely the core is shared: the mean length of the CPU-bound task's\n"
    "uninterrupted runs (ms), which is where the variants differ when their averages agree.\n"
    "  --json   {\"rows\":[{\"variant\",\"tagging\",\"mean\",\"stddev\",\"run_ms\"}...]}\n";

}  // namespace

int scenarioCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  std::string error;
  auto args = Args::parse(argv, {"--runs", "--seconds", "--base", "--param"}, {"--json", "--help"}, error);
  if (!args) {
    err << "schedlab-cli scenario: " << error << " (see --help)\n";
    return kExitUsage;
  }
  if (args->flag("--help")) {
    out << kHelp;
    return kExitOk;
  }
  if (args->positional().size() != 1 || args->positional()[0] != "coresched-fairness") {
    err << "schedlab-cli scenario: expected the scenario name: coresched-fairness (see --help)\n";
    return kExitUsage;
  }
  replay::scenario::FairnessOptions o;
  o.runs = std::atoi(args->value("--runs").value_or("10").c_str());
  o.seconds = std::atof(args->value("--seconds").value_or("30").c_str());
  o.base = args->value("--base").value_or("cfs");
  o.params = args->values("--param");
  auto rows = replay::scenario::runCoreschedFairness(o);
  if (!rows) {
    err << "schedlab-cli scenario: " << rows.error().message() << "\n";
    return kExitUsage;
  }

  if (args->flag("--json")) {
    core::JsonWriter j;
    j.beginObject();
    j.field("scenario", "coresched-fairness");
    j.field("base", o.base);
    j.field("runs", static_cast<int64_t>(o.runs));
    j.field("seconds", o.seconds);
    j.key("rows").beginArray();
    for (const auto& r : *rows) {
      j.beginObject();
      j.field("variant", r.variant);
      j.field("tagging", r.tagging);
      j.field("mean", r.mean);
      j.field("stddev", r.stddev);
      j.field("run_ms", r.runMs);
      j.endObject();
    }
    j.endArray();
    j.endObject();
    out << j.str() << "\n";
    return kExitOk;
  }

  const double scale = replay::scenario::kSeedAloneEventsPerSecond;
  char buf[256];
  out << "Core-scheduling fairness (docs/models.md §6.1): sysbench-cpu throughput relative to alone, " << o.runs
      << " runs of " << o.seconds << " s, " << o.base << "+coresched on one core x 2 threads\n\n";
  enum class Show { Relative, SeedUnits, RunLength };
  auto cell = [&](const replay::scenario::FairnessRow& r, Show show) {
    char c[48];
    if (show == Show::RunLength)
      std::snprintf(c, sizeof c, "%8.2f ms     ", r.runMs);
    else if (show == Show::SeedUnits)
      std::snprintf(c, sizeof c, "%6.1f ± %-7.1f", r.mean * scale, r.stddev * scale);
    else
      std::snprintf(c, sizeof c, "%5.3f ± %-8.3f", r.mean, r.stddev);
    return std::string(c);
  };
  for (Show show : {Show::Relative, Show::SeedUnits, Show::RunLength}) {
    out << (show == Show::SeedUnits   ? "In the experiment's units (events/s, alone = 1306.90):\n"
            : show == Show::RunLength ? "Mean length of the CPU-bound task's uninterrupted runs:\n"
                                      : "Relative to alone:\n");
    for (const auto& r : *rows)
      if (r.tagging == "-") {
        std::snprintf(buf, sizeof buf, "  %-12s %s\n", r.variant.c_str(), cell(r, show).c_str());
        out << buf;
      }
    std::snprintf(buf, sizeof buf, "  %-12s", "tagging");
    out << buf;
    for (const auto& v : replay::scenario::coreschedVariants()) {
      std::snprintf(buf, sizeof buf, " %-18s", v.c_str());
      out << buf;
    }
    out << "\n";
    for (const auto& tagging : replay::scenario::fairnessTaggings()) {
      std::snprintf(buf, sizeof buf, "  %-12s", tagging.c_str());
      out << buf;
      for (const auto& v : replay::scenario::coreschedVariants())
        for (const auto& r : *rows)
          if (r.variant == v && r.tagging == tagging) out << " " << cell(r, show) << "  ";
      out << "\n";
    }
    out << "\n";
  }
  return kExitOk;
}

}  // namespace app::cli
