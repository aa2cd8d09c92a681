#include "core/sched_settings.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace core {

namespace {

namespace fs = std::filesystem;

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return s;
}

// A value as sysctl prints it: the file's text with each run of whitespace
// (several numbers, a trailing newline) made one space.
std::string sysctlValue(std::string_view text) {
  std::string out;
  bool gap = false;
  for (const char c : trimmed(text)) {
    if (isSpace(c)) {
      gap = true;
      continue;
    }
    if (gap) out += ' ';
    gap = false;
    out += c;
  }
  return out;
}

}  // namespace

Result<std::string> captureSchedSettings(const std::string& procSysKernel) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(procSysKernel, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("sched") && entry.is_regular_file(ec)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::ostringstream out;
  out << "# SchedLab: the scheduler settings of " << procSysKernel << " as sysctl prints them, saved with the trace beside it\n";
  size_t read = 0;
  for (const std::string& name : names) {
    std::ifstream in(fs::path(procSysKernel) / name);
    std::ostringstream text;
    if (!in || !(text << in.rdbuf())) continue;  // the kernel refuses to show it (write-only, locked down)
    out << "kernel." << name << " = " << sysctlValue(text.str()) << '\n';
    ++read;
  }
  if (read == 0) return Error(procSysKernel + ": no readable sched_* setting");
  return out.str();
}

ParsedSchedSettings parseSchedSettings(std::string_view text) {
  ParsedSchedSettings parsed;
  uint64_t lineNo = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = trimmed(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++lineNo;
    if (line.empty() || line.front() == '#') continue;
    const size_t eq = line.find('=');
    const std::string_view name = trimmed(line.substr(0, eq));
    if (eq == std::string_view::npos || name.empty() ||
        std::any_of(name.begin(), name.end(), [](char c) { return isSpace(c); })) {
      parsed.badLines.push_back({lineNo, "expected NAME = VALUE (as sysctl prints a setting)"});
      continue;
    }
    parsed.settings.push_back({std::string(name), sysctlValue(line.substr(eq + 1))});
  }
  return parsed;
}

std::string schedSettingsPath(const std::string& tracePath) { return tracePath + ".sched"; }

}  // namespace core
