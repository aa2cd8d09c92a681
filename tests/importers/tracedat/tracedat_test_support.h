// Helpers shared by the trace.dat tests (importer, writer, recorder): fixture and
// shared-trace paths, file bytes in and out, event counts as a map, and the
// counts `trace-cmd report` prints, the reference they are compared with.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
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
    // The folder goes with its last file (remove() leaves a non-empty one):
    // a folder per test process piled up in /tmp.
    std::filesystem::remove(std::filesystem::path(m_path).parent_path(), ec);
  }
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

/// The model of a trace that must import whole (a failure or a partial model fails the test).
inline std::shared_ptr<core::TraceModel> importWhole(const std::string& path) {
  auto r = importers::importTrace(path);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  if (!r) return nullptr;
  EXPECT_FALSE(r->error) << r->error->message();
  return r->model;
}

inline std::map<std::string, uint64_t> counts(const core::TraceModel& m) {
  return {m.eventCounts.begin(), m.eventCounts.end()};
}

inline bool haveTraceCmd() { return std::system("trace-cmd -h >/dev/null 2>&1") != 127 * 256; }

// Whether a token of a `trace-cmd report` line is its timestamp: "secs.usecs:"
// after the "[cpu]" token, or "[cpu]nanoseconds:" in one token, which trace-cmd
// 3.1.6 prints now and then for the same file (one run of about sixty on
// trappy/raw_trace.dat, more often with the CPUs busy).
inline bool isTraceCmdTimestamp(std::string_view t) {
  if (t.size() < 2 || t.back() != ':') return false;
  t.remove_suffix(1);
  const bool glued = t.front() == '[';
  if (glued) {
    const size_t close = t.find(']');
    if (close == std::string_view::npos) return false;
    t.remove_prefix(close + 1);
  }
  return !t.empty() && t.find_first_not_of("0123456789.") == std::string_view::npos &&
         (glued || t.find('.') != std::string_view::npos);
}

// `trace-cmd report FILE`, event names counted: in each event line the name
// follows the timestamp token.
inline std::map<std::string, uint64_t> traceCmdReportCounts(const std::string& path) {
  std::map<std::string, uint64_t> out;
  const std::string cmd = "trace-cmd report '" + path + "' 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return out;
  char buf[8192];
  while (fgets(buf, sizeof buf, pipe.get())) {
    std::string_view line(buf);
    size_t pos = 0;
    std::string_view prev;
    while (pos < line.size()) {
      while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\n')) ++pos;
      const size_t end = std::min(line.find(' ', pos), line.size());
      std::string_view tok = line.substr(pos, end - pos);
      if (tok.size() > 1 && tok.back() == ':' && isTraceCmdTimestamp(prev)) {
        ++out[std::string(tok.substr(0, tok.size() - 1))];
        break;
      }
      prev = tok;
      pos = end;
    }
  }
  return out;
}

}  // namespace tracedat_test
