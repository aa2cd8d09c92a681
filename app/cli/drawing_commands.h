// The commands that draw with Qt: `render`, `report` and `sweep-report`. They
// live in schedlab_cli_drawing and run in the program schedlab-cli-qt, so that
// schedlab-cli itself never loads Qt (app/cli/CMakeLists.txt says why).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace app::cli {

int renderCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int reportCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int sweepReportCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

/// From now on run() carries out the drawing commands in this process.
void runDrawingCommandsHere();

}  // namespace app::cli
