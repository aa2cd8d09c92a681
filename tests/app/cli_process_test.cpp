// `schedlab-cli` as a process: asked for huge pages (SCHEDLAB_HUGE_PAGES=1),
// it re-runs itself under glibc's huge page support for malloc
// (core/huge_pages.cpp) with the same arguments, and leaves a choice already
// made in the environment alone; not asked, it runs as started. `info --bench`
// reports the setting it ran with. It never loads Qt: the commands that draw
// run in schedlab-cli-qt, which it starts in its own place.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/huge_pages.h"

namespace {

const std::string kDemo = std::string(SCHEDLAB_TEST_DATA) + "/../../resources/demo/pipe-and-hogs.txt";

// What a shell command prints (stdout and stderr), and its exit status.
std::string outputOf(const std::string& command, int* status = nullptr) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return out;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int rc = ::pclose(pipe);
  if (status) *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

// What `info DEMO --bench --repeat 1` prints, run with the environment changes
// in envArgs (as `env` takes them).
std::string benchJsonWith(const std::string& envArgs) {
  return outputOf("env -u GLIBC_TUNABLES -u SCHEDLAB_HUGE_PAGES " + envArgs + " '" SCHEDLAB_CLI_BINARY "' info '" +
                  kDemo + "' --bench --repeat 1");
}

std::filesystem::path scratchDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("schedlab-cli-process-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(CliProcess, RunsOnSmallPagesUnlessAskedForHugeOnes) {
  const std::string plain = benchJsonWith("");
  EXPECT_NE(plain.find("\"glibc_malloc_hugetlb\": \"\""), std::string::npos) << plain;
  EXPECT_NE(plain.find("\"runs\": 1"), std::string::npos) << plain;
  const std::string declined = benchJsonWith("SCHEDLAB_HUGE_PAGES=0");
  EXPECT_NE(declined.find("\"glibc_malloc_hugetlb\": \"\""), std::string::npos) << declined;
}

TEST(CliProcess, AskedForHugePagesRerunsItselfWithHugePageMallocUnlessTheEnvironmentChose) {
  if (!core::hugePagesPossible()) GTEST_SKIP() << "sanitizer build: malloc is the sanitizer's, not glibc's";
  if (!core::kernelGivesHugePages()) GTEST_SKIP() << "this kernel has transparent huge pages off or absent";

  const std::string asked = benchJsonWith("SCHEDLAB_HUGE_PAGES=1");
  EXPECT_NE(asked.find("\"glibc_malloc_hugetlb\": \"1\""), std::string::npos) << asked;
  // The re-run got the same arguments: it read the same file, once.
  EXPECT_NE(asked.find("pipe-and-hogs.txt\""), std::string::npos) << asked;
  EXPECT_NE(asked.find("\"runs\": 1"), std::string::npos) << asked;

  const std::string usersChoice = benchJsonWith("SCHEDLAB_HUGE_PAGES=1 GLIBC_TUNABLES=glibc.malloc.hugetlb=0");
  EXPECT_NE(usersChoice.find("\"glibc_malloc_hugetlb\": \"0\""), std::string::npos) << usersChoice;

  const std::string otherTunable = benchJsonWith("SCHEDLAB_HUGE_PAGES=1 GLIBC_TUNABLES=glibc.malloc.arena_max=4");
  EXPECT_NE(otherTunable.find("\"glibc_malloc_hugetlb\": \"1\""), std::string::npos) << otherTunable;
}

TEST(CliProcess, LoadsNoQtLibrary) {
  // LD_TRACE_LOADED_OBJECTS makes the dynamic loader list what the program
  // loads and stop, as ldd does.
  const std::string loaded = outputOf("env LD_TRACE_LOADED_OBJECTS=1 '" SCHEDLAB_CLI_BINARY "'");
  EXPECT_NE(loaded.find("libc.so"), std::string::npos) << loaded;
  EXPECT_EQ(loaded.find("libQt6"), std::string::npos) << loaded;
}

TEST(CliProcess, HandsTheDrawingCommandsToTheQtProgramBesideIt) {
  const auto dir = scratchDir("render");
  const std::string png = (dir / "demo.png").string();
  int status = -1;
  const std::string out = outputOf("'" SCHEDLAB_CLI_BINARY "' render '" + kDemo + "' -o '" + png + "' --width 400", &status);
  const std::string usage = outputOf("'" SCHEDLAB_CLI_BINARY "' report --help");
#ifdef SCHEDLAB_HAVE_RENDER
  EXPECT_EQ(status, 0) << out;
  std::ifstream file(png, std::ios::binary);
  char signature[8] = {};
  file.read(signature, sizeof signature);
  EXPECT_EQ(std::string(signature + 1, 3), "PNG") << out;
#else
  EXPECT_NE(out.find("no renderer"), std::string::npos) << out;
#endif
  EXPECT_NE(usage.find("usage: schedlab-cli report A [B]"), std::string::npos) << usage;
  std::filesystem::remove_all(dir);
}

TEST(CliProcess, WithoutTheQtProgramADrawingCommandSaysWhatIsMissing) {
  const auto dir = scratchDir("alone");
  const auto alone = dir / "schedlab-cli";
  std::filesystem::copy_file(SCHEDLAB_CLI_BINARY, alone);
  int status = -1;
  const std::string out = outputOf("'" + alone.string() + "' render '" + kDemo + "' -o '" + (dir / "x.png").string() + "'",
                                   &status);
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("'render' needs " + (dir / "schedlab-cli-qt").string() + ", which could not be run"),
            std::string::npos)
      << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.png"));
  std::filesystem::remove_all(dir);
}

}  // namespace
