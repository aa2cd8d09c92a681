// schedlab-cli: the headless face of SchedLab. Each command is a function over
// parsed arguments writing to the given streams, so tests run them in-process.
#pragma once

#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/stats_json.h"
#include "core/duration_text.h"
#include "core/trace_model.h"

namespace app::cli {

/// Parsed command line: positionals, --key value options, and --flags.
class Args {
 public:
  /// `valueOptions` take a value ("--from 1ms"); `multiOptions` may repeat; everything else starting with -- is a flag.
  static std::optional<Args> parse(const std::vector<std::string>& argv, const std::vector<std::string>& valueOptions,
                                   const std::vector<std::string>& flags, std::string& error);
  const std::vector<std::string>& positional() const { return m_positional; }
  bool has(const std::string& name) const { return m_values.count(name) || m_flags.count(name); }
  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;
  bool flag(const std::string& name) const { return m_flags.count(name) > 0; }

 private:
  std::vector<std::string> m_positional;
  std::multimap<std::string, std::string> m_values;
  std::map<std::string, bool> m_flags;
};

/// Exit codes: 0 ok, 1 bad input or failed work, 2 bad usage.
enum ExitCode { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

/// Imports a trace for a command: applies --topology / --topology-from, prints
/// the error (or the partial-import warning) to `err`. Sets `failed` when the
/// input was bad (the model may still hold what was readable).
std::shared_ptr<core::TraceModel> loadTrace(const std::string& path, const Args& args, std::ostream& err,
                                            bool& failed);

/// Parses a time: "1.5s", "250ms", "10us", "300ns", or plain seconds ("285.77").
/// Relative to the trace start unless it names an absolute trace time with '@' ("@285.77").
std::optional<int64_t> parseTime(const std::string& text, int64_t traceStart);

/// A --from/--to time as nanoseconds from the trace start: relative times as
/// given, absolute ones ('@') less `firstTs` (render and report take ranges so).
inline std::optional<int64_t> relativeTime(const std::string& text, int64_t firstTs) {
  auto t = parseTime(text, 0);
  if (!t) return std::nullopt;
  return !text.empty() && text.front() == '@' ? *t - firstTs : *t;
}

using core::formatDuration;

int run(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

using Command = int (*)(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

/// `render`, `report` and `sweep-report`: they need Qt, which schedlab-cli does
/// not load (app/cli/CMakeLists.txt says why); its main() hands them to the
/// program schedlab-cli-qt beside it.
bool isDrawingCommand(const std::string& command);
/// The program that runs the drawing commands: schedlab-cli-qt in the folder
/// of the running program.
std::string drawingProgramPath();
/// Makes run() carry out the drawing commands through `runDrawing` (argv from
/// the command's name on). schedlab-cli-qt and the tests that draw call it
/// through runDrawingCommandsHere(); without it run() refuses them.
void setDrawingCommands(Command runDrawing);

/// The human tables of `stats` (also used by `replay` and `diff`).
void printRunStatsTables(std::ostream& out, const core::analysis::RunStats& stats,
                         core::analysis::StatsGrouping grouping, size_t top);
/// --from/--to against the model's start; prints the error and returns nullopt when unreadable.
std::optional<core::analysis::TimeRange> parseRange(const Args& args, const core::TraceModel& model,
                                                    std::ostream& err);

int infoCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int diffCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int statsCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int replayCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int fidelityCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int scenarioCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int exportCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int whyCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int recordCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int sweepCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int sweepJobCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

}  // namespace app::cli
