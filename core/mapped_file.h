// MappedFile: a whole input file mapped read-only, for the importers that walk
// their input once from memory (perf.data, perf script text). No Qt; errors are
// core::Status messages that name the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace core {

class MappedFile {
 public:
  /// Files up to this size are read into memory at open (MAP_POPULATE); bigger
  /// ones are read ahead as they are walked, and their readers release what
  /// they have read.
  static constexpr size_t kPopulateLimit = size_t{256} << 20;

  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  /// Maps `path` (a regular file; empty files map to an empty range).
  Status open(const std::string& path);

  const uint8_t* data() const { return static_cast<const uint8_t*>(m_map); }
  size_t size() const { return m_size; }
  std::string_view text() const { return {static_cast<const char*>(m_map), m_size}; }
  /// The caller is done with bytes [0, offset): their pages leave this
  /// process's resident set (they stay in the page cache, and reading them
  /// again faults them back in). A reader walking a big file once calls it as
  /// it goes, so that the file does not count in its peak RSS.
  void releaseBefore(size_t offset);
  /// A reader starting another pass over the file: what it reads comes back
  /// in, and releaseBefore counts from the start again.
  void startPass() { m_released = 0; }

 private:
  void* m_map = nullptr;
  size_t m_size = 0;
  size_t m_released = 0;
};

}  // namespace core
