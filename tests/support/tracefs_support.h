// For the tests that record (tests/recorder, the GUI's Record dialog): whether
// this machine can record at all, and the machine's top-level tracing state,
// which a recording must leave exactly as it found it.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "recorder/tracefs_instance.h"

namespace tracefs_test {

/// Why recording cannot be tested here, or empty when it can: it needs root,
/// tracefs and hackbench (rt-tests, installed by `make setup`); CI has all three.
inline std::string recordingUnavailable() {
  if (::geteuid() != 0) return "recording needs root (CI runs as root)";
  auto tracefs = recorder::locateTracefs("");
  if (!tracefs) return "no tracefs here: " + tracefs.error().message();
  if (std::system("command -v hackbench >/dev/null 2>&1") != 0) return "hackbench (rt-tests) is not installed";
  return "";
}

inline std::string tracefsRoot() {
  auto t = recorder::locateTracefs("");
  return t ? *t : std::string();
}

/// Every file a recording could change at the top level: each event's and
/// system's enable, buffer_size_kb (also per CPU), tracing_on, the tracer,
/// the clock; and the instances present, but for those of other SchedLab
/// processes: tests recording at the same time, and the instances of dead ones
/// that any recording removes (a test that kills a recorder checks its own).
inline std::map<std::string, std::string> tracingState(const std::string& tracefs) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> state;
  auto read = [&](const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream text;
    text << in.rdbuf();
    state[fs::relative(p, tracefs).string()] = text.str();
  };
  for (const char* f : {"tracing_on", "buffer_size_kb", "current_tracer", "trace_clock", "set_event"})
    read(fs::path(tracefs) / f);
  std::error_code ec;
  for (const auto& cpu : fs::directory_iterator(fs::path(tracefs) / "per_cpu", ec)) read(cpu.path() / "buffer_size_kb");
  for (auto it = fs::recursive_directory_iterator(fs::path(tracefs) / "events", ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->path().filename() == "enable") read(it->path());
  std::vector<std::string> instances;
  for (const auto& i : fs::directory_iterator(fs::path(tracefs) / "instances", ec)) {
    const std::string name = i.path().filename().string();
    const std::string prefix(recorder::TracefsInstance::kNamePrefix);
    if (name.starts_with(prefix) && std::atol(name.c_str() + prefix.size()) != ::getpid()) continue;
    instances.push_back(name);
  }
  std::sort(instances.begin(), instances.end());
  for (const auto& name : instances) state["instances"] += name + "\n";
  return state;
}

/// The files whose content differs between two states, one per line ("" when none).
inline std::string changes(const std::map<std::string, std::string>& before,
                           const std::map<std::string, std::string>& after) {
  std::string out;
  for (const auto& [file, value] : before) {
    const auto it = after.find(file);
    if (it == after.end()) out += file + ": gone\n";
    else if (it->second != value) out += file + ": '" + value + "' -> '" + it->second + "'\n";
  }
  for (const auto& [file, value] : after)
    if (!before.count(file)) out += file + ": new\n";
  return out;
}

}  // namespace tracefs_test
