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

namespace {

bool configHas(std::string_view config, std::string_view option) {
  for (size_t at = config.find(option); at != std::string_view::npos; at = config.find(option, at + 1)) {
    const bool lineStart = at == 0 || config[at - 1] == '\n';
    const std::string_view rest = config.substr(at + option.size());
    if (lineStart && rest.starts_with("=y") && (rest.size() == 2 || rest[2] == '\n')) return true;
  }
  return false;
}

bool knownMode(std::string_view mode) {
  return mode == "none" || mode == "voluntary" || mode == "full" || mode == "lazy";
}

}  // namespace

std::string preemptionModel(std::string_view debugfs, std::string_view config, std::string_view cmdline) {
  if (const size_t open = debugfs.find('('); open != std::string_view::npos) {
    const size_t close = debugfs.find(')', open);
    const std::string_view mode = debugfs.substr(open + 1, close - open - 1);
    if (close != std::string_view::npos && knownMode(mode)) return std::string(mode);
  }
  if (configHas(config, "CONFIG_PREEMPT_DYNAMIC")) {
    for (size_t at = cmdline.find("preempt="); at != std::string_view::npos; at = cmdline.find("preempt=", at + 1)) {
      if (at > 0 && !isSpace(cmdline[at - 1])) continue;  // not e.g. "nopreempt=" or "rcupdate.preempt="
      std::string_view mode = cmdline.substr(at + 8);
      mode = mode.substr(0, mode.find_first_of(" \t\n"));
      if (knownMode(mode)) return std::string(mode);
    }
  }
  if (configHas(config, "CONFIG_PREEMPT_RT") || configHas(config, "CONFIG_PREEMPT")) return "full";
  if (configHas(config, "CONFIG_PREEMPT_LAZY")) return "lazy";
  if (configHas(config, "CONFIG_PREEMPT_VOLUNTARY")) return "voluntary";
  if (configHas(config, "CONFIG_PREEMPT_NONE")) return "none";
  return {};
}

}  // namespace core
