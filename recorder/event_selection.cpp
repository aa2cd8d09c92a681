#include "recorder/event_selection.h"

#include <algorithm>
#include <filesystem>

namespace recorder {

const std::vector<TraceEvent>& schedEvents() {
  static const std::vector<TraceEvent> events = {
      {"sched", "sched_switch"},       {"sched", "sched_wakeup"},       {"sched", "sched_waking"},
      {"sched", "sched_wakeup_new"},   {"sched", "sched_migrate_task"}, {"sched", "sched_process_fork"},
      {"sched", "sched_process_exit"}, {"sched", "sched_process_exec"},
  };
  return events;
}

const std::vector<TraceEvent>& powerEvents() {
  static const std::vector<TraceEvent> events = {{"power", "cpu_frequency"}, {"power", "cpu_idle"}};
  return events;
}

namespace {

namespace fs = std::filesystem;

bool exists(const std::string& eventsDir, const TraceEvent& e) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(eventsDir) / e.system / e.name / "enable", ec);
}

// An event folder holds "enable"; the system folder's own enable/filter files are no events.
std::vector<TraceEvent> systemEvents(const std::string& eventsDir, const std::string& system) {
  std::vector<TraceEvent> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(eventsDir) / system, ec))
    if (entry.is_directory(ec) && fs::is_regular_file(entry.path() / "enable", ec))
      out.push_back({system, entry.path().filename().string()});
  std::sort(out.begin(), out.end(), [](const TraceEvent& a, const TraceEvent& b) { return a.name < b.name; });
  return out;
}

}  // namespace

core::Result<std::vector<TraceEvent>> selectEvents(std::string_view spec, const std::string& eventsDir,
                                                   std::vector<std::string>& notes) {
  std::vector<TraceEvent> selected;
  std::vector<std::string> missing;
  auto add = [&](const TraceEvent& e) {
    if (std::find(selected.begin(), selected.end(), e) == selected.end()) selected.push_back(e);
  };
  auto addPreset = [&](const std::vector<TraceEvent>& preset) {
    for (const auto& e : preset) {
      if (exists(eventsDir, e)) {
        add(e);
      } else if (e.name == "sched_switch") {
        missing.push_back(e.id());
      } else {
        notes.push_back("this kernel has no " + e.id() + " event: recording without it");
      }
    }
  };
  size_t terms = 0;
  while (!spec.empty()) {
    const size_t end = spec.find_first_of(",+");
    std::string_view term = spec.substr(0, end);
    spec = end == std::string_view::npos ? std::string_view() : spec.substr(end + 1);
    while (!term.empty() && term.front() == ' ') term.remove_prefix(1);
    while (!term.empty() && term.back() == ' ') term.remove_suffix(1);
    if (term.empty()) continue;
    ++terms;
    const size_t colon = term.find(':');
    if (colon == std::string_view::npos) {
      if (term == "sched") {
        addPreset(schedEvents());
      } else if (term == "power") {
        addPreset(powerEvents());
      } else {
        return core::Error("unknown event set '" + std::string(term) +
                           "': use sched, power, SYSTEM:EVENT or SYSTEM:* (e.g. sched+power,irq:softirq_entry)");
      }
      continue;
    }
    const TraceEvent e{std::string(term.substr(0, colon)), std::string(term.substr(colon + 1))};
    if (e.system.empty() || e.name.empty() || e.system.find('/') != std::string::npos ||
        e.name.find('/') != std::string::npos || e.system.front() == '.' || e.name.front() == '.')
      return core::Error("bad event name '" + std::string(term) + "': expected SYSTEM:EVENT or SYSTEM:*");
    if (e.name == "*") {
      const auto all = systemEvents(eventsDir, e.system);
      if (all.empty()) missing.push_back(e.id());
      for (const auto& one : all) add(one);
    } else if (exists(eventsDir, e)) {
      add(e);
    } else {
      missing.push_back(e.id());
    }
  }
  if (!missing.empty()) {
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
    return core::Error("this kernel has no such event" + std::string(missing.size() > 1 ? "s: " : ": ") + names +
                       " (see " + eventsDir + ")");
  }
  if (terms == 0) return core::Error("no events named: use sched, power, SYSTEM:EVENT or SYSTEM:*");
  return selected;
}

}  // namespace recorder
