// Independent references for the CTF importer tests: per-event-type counts from
// the babeltrace2 CLI's text output and from `perf script` text, per-tid
// sched_switch counts from `perf script`, and temporary copies of fixtures to
// corrupt. Used by the tests in tests/importers/ctf only.
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace ctftest {

namespace fs = std::filesystem;

inline std::string sharedPath(const std::string& rel) { return std::string(SCHEDLAB_SHARED_TRACES) + "/" + rel; }
inline std::string dataPath(const std::string& rel) { return std::string(SCHEDLAB_TEST_DATA) + "/" + rel; }

/// "sched:sched_switch" -> "sched_switch", as the importer names events.
inline std::string plainName(std::string_view name) {
  const size_t colon = name.rfind(':');
  return std::string(colon == std::string_view::npos ? name : name.substr(colon + 1));
}

inline bool babeltraceInstalled() { return std::system("command -v babeltrace2 >/dev/null 2>&1") == 0; }

/// Event counts as `babeltrace2 DIR` prints them: one line per event,
/// "[time] (+delta) [hostname ]NAME: { ...". nullopt when the CLI fails,
/// unless `evenIfItFails`: then what it printed before it gave up.
inline std::optional<std::map<std::string, uint64_t>> babeltraceCounts(const std::string& dir,
                                                                       bool evenIfItFails = false) {
  const std::string cmd = "babeltrace2 '" + dir + "' 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return std::nullopt;
  std::map<std::string, uint64_t> counts;
  std::string line;
  std::array<char, 65536> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe)) {
    line += buf.data();
    if (line.empty() || line.back() != '\n') continue;  // a longer line goes on
    const std::string current = std::move(line);
    line.clear();
    std::string_view l(current);
    if (l.empty() || l.front() != '[') continue;
    const size_t delta = l.find(") ");
    if (delta == std::string_view::npos) continue;
    std::string_view rest = l.substr(delta + 2);
    size_t end = rest.find(": {");
    if (end == std::string_view::npos) end = rest.find_last_of(':');
    if (end == std::string_view::npos) continue;
    std::string_view head = rest.substr(0, end);
    const size_t space = head.rfind(' ');
    ++counts[plainName(space == std::string_view::npos ? head : head.substr(space + 1))];
  }
  if (::pclose(pipe) != 0 && !evenIfItFails) return std::nullopt;
  return counts;
}

/// Per-event counts and per-prev-tid sched_switch counts of `perf script` text:
/// "  comm  tid [cpu] secs:  sched:sched_switch: prev_comm=... prev_pid=N ...".
struct PerfScriptCounts {
  std::map<std::string, uint64_t> events;
  std::map<int, uint64_t> switchesOutByTid;
};
inline PerfScriptCounts perfScriptCounts(const std::string& file) {
  PerfScriptCounts out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const size_t bracket = line.find("] ");
    if (bracket == std::string::npos) continue;
    const size_t colon1 = line.find(": ", bracket);
    if (colon1 == std::string::npos) continue;
    size_t nameStart = line.find_first_not_of(' ', colon1 + 1);
    const size_t nameEnd = line.find(": ", nameStart);
    if (nameStart == std::string::npos || nameEnd == std::string::npos) continue;
    const std::string name = plainName(std::string_view(line).substr(nameStart, nameEnd - nameStart));
    ++out.events[name];
    if (name == "sched_switch") {
      const size_t p = line.find("prev_pid=", nameEnd);
      if (p != std::string::npos) ++out.switchesOutByTid[std::atoi(line.c_str() + p + 9)];
    }
  }
  return out;
}

/// A temporary copy of a fixture folder, removed on destruction.
class TempCopy {
 public:
  explicit TempCopy(const std::string& source) {
    std::random_device rd;
    m_dir = (fs::temp_directory_path() / ("schedlab-ctf-test-" + std::to_string(rd()))).string();
    fs::create_directories(m_dir);
    fs::copy(source, m_dir, fs::copy_options::recursive);
    for (const auto& e : fs::recursive_directory_iterator(m_dir))
      fs::permissions(e.path(), fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::add);
  }
  ~TempCopy() {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  TempCopy(const TempCopy&) = delete;
  TempCopy& operator=(const TempCopy&) = delete;
  const std::string& dir() const { return m_dir; }
  std::string path(const std::string& rel) const { return m_dir + "/" + rel; }

 private:
  std::string m_dir;
};

/// Overwrites `count` bytes of `file` at `offset` with deterministic noise.
inline void scribble(const std::string& file, uint64_t offset, size_t count, uint32_t seed) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  std::mt19937 rng(seed);
  for (size_t i = 0; i < count; ++i) f.put(static_cast<char>(rng() & 0xff));
}

}  // namespace ctftest
