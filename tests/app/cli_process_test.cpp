// `schedlab-cli` as a process: asked for huge pages (SCHEDLAB_HUGE_PAGES=1),
// it re-runs itself under glibc's huge page support for malloc
// (core/huge_pages.cpp) with the same arguments, and leaves a choice already
// made in the environment alone; not asked, it runs as started. `info --bench`
// reports the setting it ran with.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "core/huge_pages.h"

namespace {

const std::string kDemo = std::string(SCHEDLAB_TEST_DATA) + "/../../resources/demo/pipe-and-hogs.txt";

// What `info DEMO --bench --repeat 1` prints, run with the environment changes
// in envArgs (as `env` takes them).
std::string benchJsonWith(const std::string& envArgs) {
  const std::string command = "env -u GLIBC_TUNABLES -u SCHEDLAB_HUGE_PAGES " + envArgs + " '" SCHEDLAB_CLI_BINARY
                              "' info '" + kDemo + "' --bench --repeat 1 2>&1";
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return out;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  ::pclose(pipe);
  return out;
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

}  // namespace
