#include "app/cli/drawing_commands.h"

#include "app/cli/cli.h"

namespace app::cli {

namespace {
int runDrawing(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (argv.front() == "render") return renderCommand(rest, out, err);
  if (argv.front() == "report") return reportCommand(rest, out, err);
  return sweepReportCommand(rest, out, err);
}
}  // namespace

void runDrawingCommandsHere() { setDrawingCommands(runDrawing); }

}  // namespace app::cli
