// core/huge_pages.cpp: when SCHEDLAB_HUGE_PAGES asks for them, large C++
// allocations carry MADV_HUGEPAGE, which the kernel shows as the "hg" flag of
// the mapping in /proc/self/smaps, and without it none do; and the
// glibc.malloc.hugetlb setting read back from GLIBC_TUNABLES.
#include "core/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace {

// The VmFlags line of the mapping that holds address, or "" when none does.
std::string vmFlagsOf(const void* address) {
  const auto wanted = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= wanted && wanted < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line + " ";
    }
  }
  return "";
}

class HugePageNew : public testing::Test {
 protected:
  void SetUp() override {
    if (!core::hugePagesPossible()) GTEST_SKIP() << "sanitizer build: its runtime's operator new is used";
    // The advice is a flag of the mapping that madvise sets whatever the mode
    // (even `never`), so only a kernel without THP has nothing to show.
    if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"))
      GTEST_SKIP() << "this kernel has no transparent huge pages";
    setenv("SCHEDLAB_HUGE_PAGES", "1", 1);
  }
  void TearDown() override { unsetenv("SCHEDLAB_HUGE_PAGES"); }
};

bool hasFlag(const std::string& vmFlags, const std::string& flag) {
  return vmFlags.find(" " + flag + " ") != std::string::npos;
}

TEST_F(HugePageNew, LargeBlocksAreAdvisedAsAWhole) {
  // 40 MiB is above glibc's largest dynamic mmap threshold (32 MiB), so the
  // block is a mapping of its own and the flag can only come from its advice.
  constexpr size_t kSize = size_t{40} << 20;
  const auto block = std::make_unique<char[]>(kSize);
  const std::string first = vmFlagsOf(block.get());
  const std::string last = vmFlagsOf(block.get() + kSize - 1);
  ASSERT_FALSE(first.empty()) << "no mapping holds the block in /proc/self/smaps";
  EXPECT_TRUE(hasFlag(first, "hg")) << first;
  EXPECT_TRUE(hasFlag(last, "hg")) << last;
}

TEST_F(HugePageNew, LargeBlocksAreLeftAloneUnlessAskedFor) {
  constexpr size_t kSize = size_t{40} << 20;  // a mapping of its own, as above
  for (const char* setting : {static_cast<const char*>(nullptr), "", "0"}) {
    if (setting)
      setenv("SCHEDLAB_HUGE_PAGES", setting, 1);
    else
      unsetenv("SCHEDLAB_HUGE_PAGES");
    EXPECT_FALSE(core::hugePagesRequested()) << (setting ? setting : "unset");
    const auto block = std::make_unique<char[]>(kSize);
    const std::string flags = vmFlagsOf(block.get());
    ASSERT_FALSE(flags.empty());
    EXPECT_FALSE(hasFlag(flags, "hg")) << (setting ? setting : "unset") << ": " << flags;
  }
}

TEST_F(HugePageNew, SmallBlocksAreLeftAlone) {
  // 1 MiB: below a huge page, and a mapping of its own (above glibc's first
  // mmap threshold of 128 KiB; only freeing a mapped block of at most 32 MiB
  // raises it, which nothing here does before).
  constexpr size_t kSize = size_t{1} << 20;
  const auto block = std::make_unique<char[]>(kSize);
  const std::string flags = vmFlagsOf(block.get());
  ASSERT_FALSE(flags.empty());
  EXPECT_FALSE(hasFlag(flags, "hg")) << flags;
}

TEST(HugePageMalloc, SettingIsReadFromTheTunablesString) {
  EXPECT_EQ(core::hugePageMallocSettingIn(""), "");
  EXPECT_EQ(core::hugePageMallocSettingIn("glibc.malloc.hugetlb=1"), "1");
  EXPECT_EQ(core::hugePageMallocSettingIn("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0"), "0");
  EXPECT_EQ(core::hugePageMallocSettingIn("glibc.malloc.hugetlb=2:glibc.malloc.arena_max=2"), "2");
  // Another tunable whose name ends the same is not this one.
  EXPECT_EQ(core::hugePageMallocSettingIn("x.glibc.malloc.hugetlb=1"), "");
  EXPECT_EQ(core::hugePageMallocSettingIn("glibc.malloc.arena_max=2"), "");
}

}  // namespace
