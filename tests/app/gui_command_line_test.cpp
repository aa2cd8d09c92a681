// `schedlab --help` and `--version` run as a newcomer would, with no display
// at all (no X11, no Wayland, no platform chosen): they print and exit 0
// instead of aborting in QApplication. The expected text is what
// app/gui/main.cpp declares for the parser.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct ProcessRun {
  int status = -1;
  std::string out;
  std::string err;
};

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ProcessRun runWithoutDisplay(const std::string& args) {
  const auto errPath = std::filesystem::temp_directory_path() / ("schedlab-gui-cli-" + std::to_string(::getpid()) + ".err");
  const std::string command = "env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM '" SCHEDLAB_GUI_BINARY "' " + args +
                              " 2>'" + errPath.string() + "'";
  ProcessRun r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  r.status = ::pclose(pipe);
  r.err = readFile(errPath);
  std::filesystem::remove(errPath);
  return r;
}

bool exitedZero(int status) { return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

}  // namespace

TEST(GuiCommandLine, HelpNeedsNoDisplay) {
  for (const char* flag : {"--help", "-h"}) {
    const ProcessRun r = runWithoutDisplay(flag);
    EXPECT_TRUE(exitedZero(r.status)) << flag << ": status " << r.status << ", stderr: " << r.err;
    // Qt names the program as it was started: here by its full path.
    EXPECT_NE(r.out.find("Usage: " SCHEDLAB_GUI_BINARY " [options] [FILES...]"), std::string::npos) << flag << ": " << r.out;
    EXPECT_NE(r.out.find("SchedLab: scheduler traces, replays and statistics side by side."), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--screenshot <OUT.png>"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Render the main window to OUT.png once loaded, then"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--export-report <OUT>"), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find("could not connect to display"), std::string::npos) << r.err;
  }
}

TEST(GuiCommandLine, VersionNeedsNoDisplay) {
  for (const char* flag : {"--version", "-v"}) {
    const ProcessRun r = runWithoutDisplay(flag);
    EXPECT_TRUE(exitedZero(r.status)) << flag << ": status " << r.status << ", stderr: " << r.err;
    EXPECT_EQ(r.out, "SchedLab 0.1.0\n") << flag;
  }
}

// Help wins over everything else on the line, as QCommandLineParser::process does it.
TEST(GuiCommandLine, HelpWithFilesStillPrintsHelp) {
  const ProcessRun r = runWithoutDisplay("--help /nonexistent/trace.dat");
  EXPECT_TRUE(exitedZero(r.status)) << r.err;
  EXPECT_NE(r.out.find("Usage: " SCHEDLAB_GUI_BINARY " [options]"), std::string::npos) << r.out;
}
