// An independent, regex-based reading of ftrace text for the tests: counts
// event names per line and sums per-tid runtime from the raw sched_switch
// lines, so the importer's numbers can be checked against a second parser.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace ftrace_test {

struct IndependentReading {
  std::map<std::string, uint64_t> eventCounts;
  /// ns on CPU, idle (tid 0) excluded, of the runs whose both ends the trace
  /// shows: switched in by a sched_switch (or running at the CPU's first event)
  /// and out by one.
  std::map<int, int64_t> runtimeByTid;
  /// Lines whose "comm-pid" names another task than the one the switches left
  /// running on that CPU: switches the trace lacks.
  uint64_t untracedSwitches = 0;
  uint64_t lostEvents = 0;
};

inline int64_t secondsToNs(const std::string& sec, const std::string& frac) {
  std::string f = frac.substr(0, 9);
  while (f.size() < 9) f += '0';
  return std::stoll(sec) * 1000000000LL + std::stoll(f);
}

/// Reads `path` line by line. The runtime follows the model's conventions: a
/// CPU's first slice starts at that CPU's first event, the task running at the
/// end runs until the trace's last timestamp, and a LOST EVENTS line ends the
/// running slice at the CPU's previous event. A line in the context of another
/// task than the CPU's current one (or a switch whose prev is not it) cuts the
/// current run and starts an untraced one; neither is counted in runtimeByTid.
inline IndependentReading readIndependently(const std::string& path) {
  static const std::regex kEvent(R"(\[(\d+)\] +(?:[^ ]+ +)?(\d+)\.(\d+): (\w+)(:|\(| -> ))");
  static const std::regex kSwitchPids(R"(prev_pid=(\d+) .*next_pid=(\d+))");
  static const std::regex kPluginSwitchPids(R"(:(\d+) \[-?\d+\] \S+ ==> .*:(\d+) \[-?\d+\]$)");
  static const std::regex kLost(R"(^CPU:(\d+) \[LOST (\d+) EVENTS\])");
  static const std::regex kContextPid(R"(-(\d+) +(?:\([^)]*\) +)?\[\d+\])");
  struct Cpu {
    bool seen = false, open = false, lossPending = false, traced = true;
    int current = 0;
    int64_t start = 0, unknownSince = 0, lastTs = 0;
  };
  IndependentReading out;
  std::map<int, Cpu> cpus;
  int64_t lastTs = INT64_MIN;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  std::smatch m;
  auto run = [&](int tid, int64_t from, int64_t to) {
    if (tid != 0 && to > from) out.runtimeByTid[tid] += to - from;
  };
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() >= 3 && line.compare(line.size() - 3, 3, "\\n\\") == 0) line.resize(line.size() - 3);
    if (std::regex_search(line, m, kLost)) {
      cpus[std::stoi(m[1])].lossPending = true;
      out.lostEvents += std::stoull(m[2]);
      continue;
    }
    if (!std::regex_search(line, m, kEvent)) continue;
    std::string name = m[4];
    const std::string sep = m[5];
    if (sep == "(") name = "sys_enter_" + name.substr(name.rfind("sys_", 0) == 0 ? 4 : 0);
    if (sep == " -> ") name = "sys_exit_" + name.substr(name.rfind("sys_", 0) == 0 ? 4 : 0);
    if (name == "0") name = "tracing_mark_write";
    ++out.eventCounts[name];
    const int cpuNo = std::stoi(m[1]);
    int64_t ts = secondsToNs(m[2], m[3]);
    // systrace's clock-sync marker at time 0 is not on the trace clock.
    if (ts == 0 && line.find("trace_event_clock_sync") != std::string::npos) continue;
    ts = std::max(ts, lastTs);  // the model clamps time that goes backwards
    lastTs = ts;
    Cpu& c = cpus[cpuNo];
    if (c.lossPending) {
      c.lossPending = false;
      if (c.open) run(c.current, c.start, c.lastTs);
      c.open = false;
      c.seen = true;
      c.unknownSince = ts;
    }
    if (!c.seen) {
      c.seen = true;
      c.unknownSince = ts;
    }
    c.lastTs = ts;
    std::smatch ctx;
    const std::string head = m.prefix().str() + m[0].str();
    if (c.open && std::regex_search(head, ctx, kContextPid) && std::stoi(ctx[1]) != c.current) {
      ++out.untracedSwitches;
      c.current = std::stoi(ctx[1]);
      c.traced = false;
    }
    if (name != "sched_switch") continue;
    const std::string payload = m.suffix();
    std::smatch pids;
    if (!std::regex_search(payload, pids, kSwitchPids) && !std::regex_search(payload, pids, kPluginSwitchPids)) continue;
    const int prev = std::stoi(pids[1]);
    const int next = std::stoi(pids[2]);
    if (c.open && c.current != prev) {
      ++out.untracedSwitches;
    } else if (c.open) {
      if (c.traced) run(prev, c.start, ts);
    } else {
      run(prev, c.unknownSince, ts);
    }
    c.open = true;
    c.traced = true;
    c.current = next;
    c.start = ts;
  }
  for (auto& [cpu, c] : cpus)
    if (c.open && c.traced) run(c.current, c.start, lastTs);
  return out;
}

}  // namespace ftrace_test
