#include "core/autogroup_snapshot.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <optional>
#include <sstream>

namespace core {

namespace {

namespace fs = std::filesystem;

bool isNumber(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

template <typename T>
bool parseInt(std::string_view s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// "/autogroup-267 nice 0" (autogroup.c's proc_sched_autogroup_show_task());
// nothing at all for a process in the root task group.
bool parseProcAutogroup(std::string_view text, int32_t& group, int& nice) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty()) {
    group = 0;
    nice = 0;
    return true;
  }
  constexpr std::string_view prefix = "/autogroup-";
  constexpr std::string_view middle = " nice ";
  const size_t gap = text.find(middle);
  return text.starts_with(prefix) && gap != std::string_view::npos &&
         parseInt(text.substr(prefix.size(), gap - prefix.size()), group) && group > 0 &&
         parseInt(text.substr(gap + middle.size()), nice);
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t begin = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > begin) out.push_back(line.substr(begin, i - begin));
  }
  return out;
}

// A /proc file whole, or nullopt when it cannot be opened or read: a process
// that exits between the open and the read makes read() fail (ESRCH), which
// std::ifstream reports by throwing.
std::optional<std::string> readProcFile(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[512];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return n == 0 ? std::optional<std::string>(std::move(text)) : std::nullopt;
    }
    text.append(buf, static_cast<size_t>(n));
  }
}

// The numeric entries of a /proc folder. It changes while it is listed: an
// entry that cannot be read ends the listing there (error_code increments;
// a range-for would throw).
std::vector<std::string> numericEntries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (isNumber(name)) names.push_back(std::move(name));
  }
  return names;
}

}  // namespace

Result<std::string> captureAutogroups(SnapshotWhen when, const std::string& procRoot) {
  const char* whenWord = when == SnapshotWhen::Start ? "start" : "end";
  std::ostringstream out;
  if (when == SnapshotWhen::Start)
    out << "# SchedLab: each task's autogroup (" << procRoot
        << "/PID/autogroup) when tracing started and when it stopped\n"
           "# WHEN TID AUTOGROUP NICE (AUTOGROUP 0: the root task group)\n";
  size_t shown = 0;
  for (const std::string& pid : numericEntries(procRoot)) {
    const fs::path process = fs::path(procRoot) / pid;
    // A process that exits meanwhile leaves no file, or one that cannot be read: it is not listed.
    const std::optional<std::string> text = readProcFile(process / "autogroup");
    int32_t group = 0;
    int nice = 0;
    if (!text || !parseProcAutogroup(*text, group, nice)) continue;
    ++shown;
    for (const std::string& tid : numericEntries(process / "task"))
      out << whenWord << ' ' << tid << ' ' << group << ' ' << nice << '\n';
  }
  if (shown == 0)
    return Error(procRoot + ": no process shows its autogroup (a kernel without CONFIG_SCHED_AUTOGROUP)");
  return out.str();
}

ParsedAutogroups parseAutogroups(std::string_view text) {
  ParsedAutogroups parsed;
  uint64_t lineNo = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++lineNo;
    const std::vector<std::string_view> w = words(line);
    if (w.empty() || w[0].front() == '#') continue;
    AutogroupEntry e;
    int nice = 0;
    const bool when = w.size() == 4 && (w[0] == "start" || w[0] == "end");
    if (!when || !parseInt(w[1], e.tid) || e.tid < 0 || !parseInt(w[2], e.group) || e.group < 0 ||
        !parseInt(w[3], nice) || nice < -20 || nice > 19) {
      parsed.badLines.push_back(
          {lineNo, "expected WHEN TID AUTOGROUP NICE (start or end, a tid, a group number >= 0, nice -20..19)"});
      continue;
    }
    e.when = w[0] == "start" ? SnapshotWhen::Start : SnapshotWhen::End;
    e.nice = static_cast<int8_t>(nice);
    parsed.entries.push_back(e);
  }
  return parsed;
}

std::string autogroupsPath(const std::string& tracePath) { return tracePath + ".autogroup"; }

}  // namespace core
