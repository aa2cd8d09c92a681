// MappedFile::releaseBefore: the released bytes leave the process's resident
// set (the mapping's Rss in /proc/self/smaps) and still read back as the file.
#include "core/mapped_file.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "support/scratch_dir.h"

namespace {

// Resident kB of the mapping that starts at `addr`, from /proc/self/smaps; -1 if not found.
long residentKb(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  std::ostringstream start;
  start << std::hex << reinterpret_cast<uintptr_t>(addr) << '-';
  std::string line;
  bool inMapping = false;
  while (std::getline(smaps, line)) {
    if (line.find('-') != std::string::npos && line.find(' ') > line.find('-') && isxdigit(line[0]))
      inMapping = line.rfind(start.str(), 0) == 0;
    else if (inMapping && line.rfind("Rss:", 0) == 0)
      return std::stol(line.substr(4));
  }
  return -1;
}

TEST(MappedFile, ReleasedBytesLeaveTheResidentSetAndStillReadBack) {
  test_support::ScratchDir dir("mapped-file");
  const std::string path = dir.file("data.bin");
  constexpr size_t kSize = size_t{8} << 20;  // 8 MiB: populated when mapped
  {
    std::ofstream out(path, std::ios::binary);
    for (size_t i = 0; i < kSize; ++i) out.put(static_cast<char>(i * 7 % 251));
  }
  core::MappedFile file;
  ASSERT_TRUE(file.open(path));
  ASSERT_EQ(file.size(), kSize);
  uint64_t sum = 0;
  for (size_t i = 0; i < kSize; i += 4096) sum += file.data()[i];
  const long before = residentKb(file.data());
  ASSERT_GE(before, 8000) << "the whole 8 MiB should be resident after reading it";

  file.releaseBefore(kSize / 2 + 100);  // rounds down to a page: 4 MiB leave
  const long after = residentKb(file.data());
  EXPECT_LE(after, before - 4000);
  EXPECT_GE(after, 4000);

  for (size_t i = 0; i < kSize; i += 997) ASSERT_EQ(file.data()[i], static_cast<uint8_t>(i * 7 % 251)) << i;
  uint64_t again = 0;
  for (size_t i = 0; i < kSize; i += 4096) again += file.data()[i];
  EXPECT_EQ(again, sum);
  file.releaseBefore(kSize / 4);  // already released: nothing to do
  file.releaseBefore(kSize * 2);  // past the end: up to the end
  EXPECT_EQ(file.data()[kSize - 1], static_cast<uint8_t>((kSize - 1) * 7 % 251));

  // A second pass (the Perfetto reader walks a file twice) reads everything
  // back in, and releases it again from the start.
  for (size_t i = 0; i < kSize; i += 4096) again += file.data()[i];
  ASSERT_GE(residentKb(file.data()), 8000);
  file.releaseBefore(kSize);  // without startPass: counted as released already
  EXPECT_GE(residentKb(file.data()), 8000);
  file.startPass();
  file.releaseBefore(kSize);
  EXPECT_LE(residentKb(file.data()), 100);
}

}  // namespace
