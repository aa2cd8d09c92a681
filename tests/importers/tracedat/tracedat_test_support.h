// Helpers shared by the trace.dat importer tests: fixture and shared-trace
// paths, file bytes in and out, importing a file, event counts as a map.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "importers/importer.h"

namespace tracedat_test {

inline std::string fixture(const std::string& name) { return std::string(SCHEDLAB_TEST_DATA) + "/tracedat/" + name; }

inline std::vector<std::string> fixtures() {
  return {fixture("tiny-v6.dat"), fixture("tiny-v7-none.dat"), fixture("tiny-v7-zstd.dat")};
}

inline std::string sharedTraces() { return SCHEDLAB_SHARED_TRACES; }

/// Every trace.dat of the shared traces (empty when the folder is absent).
inline std::vector<std::string> sharedTraceDats() {
  std::vector<std::string> out;
  const std::string root = sharedTraces();
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) return out;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (it->is_regular_file(ec) && name.size() > 4 && name.substr(name.size() - 4) == ".dat") {
      std::ifstream in(it->path(), std::ios::binary);
      char magic[10] = {};
      in.read(magic, sizeof magic);
      if (std::string(magic, 10) == std::string("\x17\x08\x44tracing", 10)) out.push_back(it->path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<uint8_t> readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A file in the test's temporary folder, removed when the object goes.
class TempFile {
 public:
  explicit TempFile(const std::vector<uint8_t>& bytes, const std::string& name = "case.dat") {
    const auto dir = std::filesystem::temp_directory_path() / ("schedlab-tracedat-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    m_path = (dir / name).string();
    std::ofstream out(m_path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(m_path, ec);
  }
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

inline std::map<std::string, uint64_t> counts(const core::TraceModel& m) {
  return {m.eventCounts.begin(), m.eventCounts.end()};
}

}  // namespace tracedat_test
