// `schedlab-cli export`: a run as a Perfetto trace for ui.perfetto.dev (and
// SchedLab itself): the recording, and each --replay of it beside it.
#include <filesystem>
#include <optional>
#include <ostream>

#include "app/cli/cli.h"
#include "importers/importer.h"
#include "importers/perfetto/perfetto_writer.h"
#include "replay/replay.h"
#include "replay/workload/trace_extractor.h"

namespace app::cli {

namespace {

constexpr const char* kUsage =
    "usage: schedlab-cli export FILE -o OUT.perfetto-trace [--replay MODEL]... [--param K=V]...\n"
    "                           [--topology CxT] [--topology-from DIR]\n\n"
    "Writes the run as a Perfetto protobuf trace: per-CPU sched_switch, sched_waking/wakeup(_new),\n"
    "migrations, forks, execs and exits, thread names and tgids, CPU frequency counters (uclamp\n"
    "replays), and forced-idle and lost-data spans as named tracks. ui.perfetto.dev opens it;\n"
    "SchedLab reads it back to the same statistics. The scheduler settings and autogroups saved\n"
    "beside FILE (FILE.sched, FILE.autogroup) are copied beside OUT, which replays the same.\n"
    "Switch-ins the import inferred are marked as such and read back as the same repairs. Lost-data\n"
    "counts ride in ftrace_stats overrun readings, one after each loss: a range of unknown count\n"
    "stays of unknown count (as does one the tracer counted as 0), and a loss of no known CPU has no\n"
    "place in the format and is not written. Events other than the scheduler's are not written.\n\n"
    "  -o OUT             the recording's trace\n"
    "  --replay MODEL     also replay FILE through MODEL and write it to OUT with .MODEL before the\n"
    "                     extension (OUT.cfs+coresched.perfetto-trace); repeatable\n"
    "  --param K=V        a parameter of every --replay model\n";

// OUT.perfetto-trace -> OUT.MODEL.perfetto-trace
std::string replayPath(const std::string& out, const std::string& model) {
  const std::filesystem::path p(out);
  std::string stem = p.stem().string(), ext = p.extension().string();
  return (p.parent_path() / (stem + "." + model + ext)).string();
}

}  // namespace

int exportCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  std::string error;
  auto args = Args::parse(argv, {"-o", "--output", "--replay", "--param", "--topology", "--topology-from"}, {"--help"},
                          error);
  if (!args) {
    err << "schedlab-cli export: " << error << " (see --help)\n";
    return kExitUsage;
  }
  if (args->flag("--help")) {
    out << kUsage;
    return kExitOk;
  }
  const auto output = args->value("-o") ? args->value("-o") : args->value("--output");
  if (args->positional().size() != 1 || !output) {
    err << "schedlab-cli export: expected one FILE and -o OUT.perfetto-trace (see --help)\n";
    return kExitUsage;
  }
  const std::vector<std::string> models = args->values("--replay");
  for (const auto& m : models)
    if (auto d = replay::defaultParams(m); !d) {
      err << "schedlab-cli export: " << d.error().message() << "\n";
      return kExitUsage;
    }
  bool failed = false;
  auto model = loadTrace(args->positional()[0], *args, err, failed);
  if (!model) return kExitFailure;
  importers::perfetto::PerfettoExportLosses losses;
  if (auto st = importers::perfetto::writePerfetto(*model, *output, &losses); !st) {
    err << "schedlab-cli export: " << st.message() << "\n";
    return kExitFailure;
  }
  out << *output << "\n";
  if (auto beside = importers::copyFilesBeside(*model, *output); !beside) {
    err << "schedlab-cli export: " << beside.error().message() << "\n";
    failed = true;
  } else {
    for (const std::string& f : *beside) out << f << "\n";
  }
  if (losses.any()) err << "schedlab-cli export: " << *output << ": not carried: " << losses.describe() << "\n";
  if (models.empty()) return failed ? kExitFailure : kExitOk;

  // Extracted again only for a model whose parameters shape it differently.
  std::optional<replay::Workload> workload;
  replay::ExtractOptions extractedWith;
  for (const auto& m : models) {
    replay::ReplayOptions options;
    options.model = m;
    options.params = args->values("--param");
    options.recordingPath = args->positional()[0];
    const replay::ExtractOptions extract = replay::extractOptionsFor(options);
    if (!workload || extract != extractedWith) {
      auto extracted = replay::extractWorkload(*model, extract);
      if (!extracted) {
        err << "schedlab-cli export: " << extracted.error().message() << "\n";
        return kExitFailure;
      }
      workload = std::move(*extracted);
      extractedWith = extract;
    }
    auto result = replay::runReplay(*workload, options);
    if (!result) {
      err << "schedlab-cli export: replay " << m << ": " << result.error().message() << "\n";
      return kExitFailure;
    }
    const std::string path = replayPath(*output, m);
    if (auto st = importers::perfetto::writePerfetto(*result->model, path); !st) {
      err << "schedlab-cli export: " << st.message() << "\n";
      return kExitFailure;
    }
    out << path << "\n";
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace app::cli
