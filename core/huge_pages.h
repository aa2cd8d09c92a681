#pragma once

#include <string>
#include <string_view>

namespace core {

/// Whether this build asks for transparent huge pages (core/huge_pages.cpp):
/// false under sanitizers, whose runtimes bring their own allocator and
/// operator new.
bool hugePagesPossible();

/// Whether the user asked for huge pages: SCHEDLAB_HUGE_PAGES set, and not to
/// "" or "0". Without it the program uses the kernel's small pages throughout.
bool hugePagesRequested();

/// Whether the kernel has transparent huge pages and not set to `never`.
bool kernelGivesHugePages();

/// Runs the program again, with the same arguments, under glibc's own huge
/// page support for malloc (GLIBC_TUNABLES=glibc.malloc.hugetlb=1), which glibc
/// reads only at start-up. Returns without doing so when the environment
/// already names that tunable (the user's choice, or the run it started),
/// when !hugePagesRequested(), when the kernel has transparent huge
/// pages off, when !hugePagesPossible(), or when the exec fails. Call it first
/// in main().
void rerunWithHugePageMalloc(char** argv);

/// The value of tunable `name` in a GLIBC_TUNABLES string ("" when it names none).
std::string glibcTunableIn(std::string_view tunables, std::string_view name);

/// The glibc.malloc.hugetlb value in a GLIBC_TUNABLES string ("" when it
/// names none).
std::string hugePageMallocSettingIn(std::string_view tunables);

/// The glibc.malloc.hugetlb value in this process's GLIBC_TUNABLES, which is
/// what glibc applied at start-up ("" when unset), for benchmark output.
std::string hugePageMallocSetting();

}  // namespace core
