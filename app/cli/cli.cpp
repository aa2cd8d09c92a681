#include "app/cli/cli.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "importers/importer.h"

namespace app::cli {

std::optional<Args> Args::parse(const std::vector<std::string>& argv, const std::vector<std::string>& valueOptions,
                                const std::vector<std::string>& flags, std::string& error) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() > 1 && a[0] == '-' && !(a.size() > 1 && (std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.'))) {
      std::string name = a;
      std::optional<std::string> inlineValue;
      if (const auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
        name = a.substr(0, eq);
        inlineValue = a.substr(eq + 1);
      }
      if (std::find(valueOptions.begin(), valueOptions.end(), name) != valueOptions.end()) {
        if (!inlineValue) {
          if (i + 1 >= argv.size()) {
            error = name + " needs a value";
            return std::nullopt;
          }
          inlineValue = argv[++i];
        }
        args.m_values.emplace(name, *inlineValue);
      } else if (std::find(flags.begin(), flags.end(), name) != flags.end() && !inlineValue) {
        args.m_flags[name] = true;
      } else {
        error = "unknown option " + a;
        return std::nullopt;
      }
    } else {
      args.m_positional.push_back(a);
    }
  }
  return args;
}

std::optional<std::string> Args::value(const std::string& name) const {
  auto range = m_values.equal_range(name);
  if (range.first == range.second) return std::nullopt;
  return std::prev(range.second)->second;
}

std::vector<std::string> Args::values(const std::string& name) const {
  std::vector<std::string> out;
  auto range = m_values.equal_range(name);
  for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
  return out;
}

std::optional<int64_t> parseTime(const std::string& text, int64_t traceStart) {
  std::string_view s = text;
  bool absolute = false;
  if (!s.empty() && s.front() == '@') {
    absolute = true;
    s.remove_prefix(1);
  }
  size_t unitPos = s.size();
  while (unitPos > 0 && std::isalpha(static_cast<unsigned char>(s[unitPos - 1]))) --unitPos;
  const std::string number(s.substr(0, unitPos));
  const std::string_view unit = s.substr(unitPos);
  if (number.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(v)) return std::nullopt;
  double scale = 1e9;
  if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s" || unit.empty()) scale = 1e9;
  else return std::nullopt;
  // No trace time lies 2^62 ns (146 years) from its start: refusing more keeps
  // the conversion and the sums below in range (found by replay_text_fuzzer).
  const double scaled = v * scale;
  if (!(std::fabs(scaled) < 0x1p62)) return std::nullopt;
  const auto ns = static_cast<int64_t>(std::llround(scaled));
  int64_t at = ns;
  if (!absolute && __builtin_add_overflow(traceStart, ns, &at)) return std::nullopt;
  return at;
}

std::shared_ptr<core::TraceModel> loadTrace(const std::string& path, const Args& args, std::ostream& err,
                                            bool& failed) {
  importers::ImportOptions options;
  if (auto spec = args.value("--topology")) {
    auto topo = core::Topology::parseSpec(*spec);
    if (!topo) {
      err << "error: " << topo.error().message() << "\n";
      failed = true;
      return nullptr;
    }
    options.topology = *topo;
  } else if (auto dir = args.value("--topology-from")) {
    auto topo = core::Topology::fromSysfs(*dir);
    if (!topo) {
      err << "error: " << topo.error().message() << "\n";
      failed = true;
      return nullptr;
    }
    options.topology = *topo;
  }
  auto result = importers::importTrace(path, options);
  if (!result) {
    err << "error: " << result.error().message() << "\n";
    failed = true;
    return nullptr;
  }
  if (result->error) {
    err << "error: " << result->error->message() << "\n";
    err << "warning: " << path << ": kept what was readable (" << result->model->eventCount
        << " events); the model is partial\n";
    failed = true;
  }
  return result->model;
}

namespace {
void printUsage(std::ostream& out) {
  out << "usage: schedlab-cli COMMAND [ARGS]\n\n"
         "Commands:\n"
         "  info FILE [--json]                      format, CPUs, topology, span, events per type, losses, diagnostics\n"
         "  stats FILE [--from T] [--to T] [--by task|process|cpu] [--json|--csv]\n"
         "                                          per-task, per-process or per-CPU scheduling statistics\n"
         "  replay FILE|WORKLOAD.json --model baseline|cfs|eevdf|bfs|gc|vrq[+coresched][+uclamp] [--topology CxT]\n"
         "         [--hz N] [--param K=V]... [--cookie R]... [--uclamp S=MIN:MAX]... [--sysctl N=V]... [--json]\n"
         "         [--out FILE]                     the workload replayed through a scheduler model, with its fidelity\n"
         "  fidelity PATH... [--model M] [--formats dat,perf,txt,script] [--json]\n"
         "                                          identity replays of many recordings: the fidelity table\n"
         "  scenario coresched-fairness [--runs N] [--json]\n"
         "                                          the core-scheduling fairness experiment of docs/models.md §6.1\n"
         "  why FILE --task TID|COMM [--from T] [--to T] [--critical-path] [--against FILE2] [--json]\n"
         "                                          why a task was not running: states, antagonists, wakers, critical path\n"
         "  diff A B [--json]                       two runs compared task by task and as a whole\n"
         "  render FILE -o OUT.png [--width N] [--from T] [--to T] [--bench] [--json]\n"
         "                                          the timeline as a PNG (the GUI's renderer); --bench times frames\n"
         "  report A [B] -o OUT.pdf|.html|.json|.csv [--replay MODEL]... [--from T] [--to T] [--page a4|letter]\n"
         "                                          a report of one run or two compared, with replays of A\n"
         "  export FILE -o OUT.perfetto-trace [--replay MODEL]...\n"
         "                                          the run (and replays of it) as Perfetto traces\n"
         "  record -o OUT.dat [--events sched|sched+power|LIST] [--buffer-kb N] [--duration T] [-- COMMAND ARGS...]\n"
         "                                          a trace of this machine (root): trace.dat v7 + its topology\n"
         "  sweep PLAN.json -o RESULTS/ [-j N] [--emit parallel|slurm]   (or --trace G... --model M... --param K=V1,V2...)\n"
         "                                          many replays (traces x models x parameters), here or on a cluster\n"
         "  sweep-job RESULTS/ ID...                one job of a sweep: what every runner runs\n"
         "  sweep-report RESULTS/ -o OUT.pdf|.html|.csv|.json\n"
         "                                          every job of a sweep, best and worst settings, charts\n\n"
         "Common options:\n"
         "  --topology TOPO         overriding what the trace says: CxT (cores x threads per core, 4x2) or\n"
         "                          fields as lscpu counts them: s sockets, c cores per socket, t threads\n"
         "                          per core, d dies per socket, n NUMA nodes, l LLCs (2s:64c:2t:8l:2n)\n"
         "  --topology-from PATH    a sysfs-style topology folder (/sys/devices/system/cpu layout) or a\n"
         "                          topology snapshot (OUT.dat.topology, written by record)\n\n"
         "Times (T): 1.5s, 250ms, 10us, 300ns or plain seconds, relative to the trace start;\n"
         "prefix with @ for absolute trace time (@285.77).\n"
         "Formats are detected from the file's content: ftrace text (trace, trace_pipe, trace-cmd report,\n"
         "atrace/systrace), trace.dat v6/v7, perf.data, perf script text, CTF folders (LTTng, perf),\n"
         "Perfetto protobuf traces; each also gzip- or zstd-compressed (trace.txt.gz), decompressed into a\n"
         "copy in the temp folder (TMPDIR) while it is read.\n"
         "Run 'schedlab-cli COMMAND --help' for a command's details.\n";
}

Command g_drawingCommands = nullptr;
}  // namespace

bool isDrawingCommand(const std::string& command) {
  return command == "render" || command == "report" || command == "sweep-report";
}

std::string drawingProgramPath() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ((ec ? std::filesystem::path(".") : self.parent_path()) / "schedlab-cli-qt").string();
}

void setDrawingCommands(Command runDrawing) { g_drawingCommands = runDrawing; }

int run(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help") {
    printUsage(argv.empty() ? err : out);
    return argv.empty() ? kExitUsage : kExitOk;
  }
  const std::string command = argv[0];
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (command == "info") return infoCommand(rest, out, err);
  if (command == "stats") return statsCommand(rest, out, err);
  if (command == "replay") return replayCommand(rest, out, err);
  if (command == "fidelity") return fidelityCommand(rest, out, err);
  if (command == "scenario") return scenarioCommand(rest, out, err);
  if (command == "diff") return diffCommand(rest, out, err);
  if (isDrawingCommand(command)) {
    if (g_drawingCommands) return g_drawingCommands(argv, out, err);
    err << "schedlab-cli: '" << command << "' is carried out by " << drawingProgramPath() << ", not in this process\n";
    return kExitUsage;
  }
  if (command == "export") return exportCommand(rest, out, err);
  if (command == "why") return whyCommand(rest, out, err);
  if (command == "record") return recordCommand(rest, out, err);
  if (command == "sweep") return sweepCommand(rest, out, err);
  if (command == "sweep-job") return sweepJobCommand(rest, out, err);
  err << "schedlab-cli: unknown command '" << command << "'\n";
  printUsage(err);
  return kExitUsage;
}

}  // namespace app::cli
