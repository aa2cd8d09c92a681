// `schedlab-cli info`: what a trace holds. It imports the whole trace, so it is
// also the import benchmark (--bench repeats the import and reports medians).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <ostream>
#include <sys/resource.h>

#include "app/cli/cli.h"
#include "core/data_loss_text.h"
#include "core/huge_pages.h"
#include "core/malloc_arena.h"
#include "core/json_writer.h"
#include "importers/importer.h"

namespace app::cli {

namespace {
// What the model holds beyond the schedule: counters by kind, user slices by kind.
struct ModelContents {
  struct Counter {
    uint64_t tracks = 0;
    uint64_t samples = 0;
  };
  std::map<std::string, Counter> counters;
  uint64_t userSlices[3] = {};  // sync, async, instant
};
ModelContents contentsOf(const core::TraceModel& m) {
  ModelContents c;
  const auto& ct = m.counters;
  for (size_t k = 0; k < ct.tracks.size(); ++k) {
    auto& entry = c.counters[std::string(core::toString(ct.tracks[k].kind))];
    ++entry.tracks;
    entry.samples += ct.rowsBegin[k + 1] - ct.rowsBegin[k];
  }
  for (core::UserSliceKind kind : m.userSlices.kind) ++c.userSlices[static_cast<size_t>(kind)];
  return c;
}

// The tasks the autogroups saved beside the trace name (TRACE.autogroup).
struct AutogroupCounts {
  uint64_t tasks = 0, inRoot = 0, groups = 0;
};
AutogroupCounts autogroupCounts(const core::TraceModel& m) {
  AutogroupCounts c;
  std::set<int32_t> groups;
  for (const int32_t g : m.threads.autogroup) {
    if (g < 0) continue;
    ++c.tasks;
    if (g == 0) ++c.inRoot;
    else groups.insert(g);
  }
  c.groups = groups.size();
  return c;
}


void writeTopologyJson(core::JsonWriter& j, const core::Topology& topo) {
  j.key("topology").beginObject();
  j.key("cores").beginArray();
  for (const auto& core : topo.cores()) {
    j.beginArray();
    for (int cpu : core) j.value(cpu);
    j.endArray();
  }
  j.endArray();
  // Per CPU, for scripts that group by cache or node.
  j.key("cpus").beginArray();
  for (const auto& c : topo.cpus()) {
    j.beginObject();
    j.field("cpu", c.cpu);
    j.field("core", c.core);
    j.field("thread", c.thread);
    j.field("package", c.package);
    j.field("die", c.die);
    j.field("llc", c.llc);
    j.field("node", c.node);
    j.endObject();
  }
  j.endArray();
  j.field("description", topo.describe());
  j.field("source", topo.source());
  j.endObject();
}

void writeDiagnosticsJson(core::JsonWriter& j, const core::Diagnostics& d) {
  j.key("diagnostics").beginObject();
  for (size_t i = 0; i < core::kDiagCount; ++i) {
    const auto code = static_cast<core::DiagCode>(i);
    if (d.count(code) == 0) continue;
    j.key(core::diagName(code)).beginObject();
    j.field("count", d.count(code));
    j.field("severity", core::toString(core::diagSeverity(code)));
    j.field("description", core::diagDescription(code));
    j.endObject();
  }
  j.endObject();
}

long peakRssKb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

int infoCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  std::string error;
  auto args = Args::parse(argv, {"--topology", "--topology-from", "--repeat"}, {"--json", "--bench", "--help"}, error);
  if (!args || args->flag("--help") || args->positional().size() != 1) {
    (args && args->flag("--help") ? out : err)
        << (args ? "" : "schedlab-cli info: " + error + "\n")
        << "usage: schedlab-cli info FILE [--json] [--topology CxT | --topology-from DIR] [--bench [--repeat N]]\n"
           "Imports the whole trace and prints its format, CPU count, topology, time span, the count of\n"
           "every event type, lost events and import diagnostics. --bench repeats the import (default 5\n"
           "times) and prints the median wall time, events/s, MB/s, model bytes/event and peak RSS.\n";
    return args && args->flag("--help") ? kExitOk : kExitUsage;
  }
  const std::string& path = args->positional()[0];

  if (args->flag("--bench")) {
    const int repeat = std::max(1, std::atoi(args->value("--repeat").value_or("5").c_str()));
    std::vector<double> seconds;
    std::shared_ptr<core::TraceModel> model;
    for (int i = 0; i < repeat; ++i) {
      model.reset();
      const auto t0 = std::chrono::steady_clock::now();
      bool failed = false;
      model = loadTrace(path, *args, err, failed);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (!model) return kExitFailure;
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    // A folder (CTF, perf record --threads) is as large as the files in it.
    double bytes = 0;
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(path, ec))
        if (e.is_regular_file(ec)) bytes += static_cast<double>(e.file_size(ec));
    } else {
      std::ifstream f(path, std::ios::binary | std::ios::ate);
      bytes = f ? static_cast<double>(f.tellg()) : 0.0;
    }
    core::JsonWriter j;
    j.beginObject();
    j.field("file", path);
    j.field("events", model->eventCount);
    j.field("runs", static_cast<int64_t>(repeat));
    j.field("import_s_median", median);
    j.field("import_s_min", seconds.front());
    j.field("events_per_s", static_cast<double>(model->eventCount) / median);
    j.field("mb_per_s", bytes / 1e6 / median);
    j.field("model_bytes", static_cast<uint64_t>(model->memoryBytes()));
    j.field("model_bytes_per_event",
            model->eventCount ? static_cast<double>(model->memoryBytes()) / static_cast<double>(model->eventCount) : 0.0);
    j.field("peak_rss_kb", static_cast<int64_t>(peakRssKb()));
    j.field("glibc_malloc_hugetlb", core::hugePageMallocSetting());
    j.field("malloc_one_arena", core::oneMallocArena());
    j.field("malloc_freed_memory_kept", core::freedMemoryKept());
    j.endObject();
    out << j.str() << "\n";
    return kExitOk;
  }

  bool failed = false;
  auto model = loadTrace(path, *args, err, failed);
  if (!model) return kExitFailure;
  const core::TraceModel& m = *model;

  if (args->flag("--json")) {
    core::JsonWriter j;
    j.beginObject();
    j.field("file", path);
    j.field("format", m.format);
    j.field("cpus", m.topology.cpuCount());
    writeTopologyJson(j, m.topology);
    j.field("first_ts_ns", m.firstTs);
    j.field("last_ts_ns", m.lastTs);
    j.field("span_ns", m.span());
    j.field("event_count", m.eventCount);
    j.key("events").beginObject();
    for (const auto& [name, count] : m.eventCounts) j.field(name, count);
    j.endObject();
    j.field("lost_events", m.lostEvents());
    j.field("lost_ranges", static_cast<uint64_t>(m.dataLoss.size()));
    // lost_events sums the counted ranges only; these have no count to add.
    j.field("lost_ranges_unknown_count", static_cast<uint64_t>(m.lostRangesOfUnknownCount()));
    j.field("tasks", static_cast<uint64_t>(m.taskCount()));
    j.field("processes", static_cast<uint64_t>(m.processes.size()));
    if (const AutogroupCounts ag = autogroupCounts(m); ag.tasks > 0) {
      j.key("autogroups").beginObject();
      j.field("tasks", ag.tasks);
      j.field("root_tasks", ag.inRoot);
      j.field("groups", ag.groups);
      j.endObject();
    }
    j.field("slices", m.sliceCount());
    j.field("model_bytes", static_cast<uint64_t>(m.memoryBytes()));
    const ModelContents contents = contentsOf(m);
    j.key("counters").beginObject();
    for (const auto& [kind, c] : contents.counters) {
      j.key(kind).beginObject();
      j.field("tracks", c.tracks);
      j.field("samples", c.samples);
      j.endObject();
    }
    j.endObject();
    j.key("user_slices").beginObject();
    j.field("sync", contents.userSlices[0]);
    j.field("async", contents.userSlices[1]);
    j.field("instant", contents.userSlices[2]);
    j.endObject();
    j.key("metadata").beginObject();
    for (const auto& [k, v] : m.metadata) j.field(k, v);
    j.endObject();
    j.field("partial", m.partial);
    if (m.partial) j.field("partial_reason", m.partialReason);
    writeDiagnosticsJson(j, m.diagnostics);
    j.endObject();
    out << j.str() << "\n";
    return failed ? kExitFailure : kExitOk;
  }

  char buf[256];
  out << "File:        " << path << "\n";
  out << "Format:      " << m.format << "\n";
  for (const auto& [k, v] : m.metadata) {
    std::string label = k + ":";
    label.resize(std::max<size_t>(label.size(), 12), ' ');
    out << label << " " << v << "\n";  // no fixed buffer: cmdlines can be long
  }
  out << "CPUs:        " << m.topology.cpuCount() << "\n";
  out << "Topology:    " << m.topology.describe() << "\n";
  for (size_t c = 0; c < m.topology.cores().size() && m.topology.hasSmt(); ++c) {
    out << "  core " << c << ":";
    for (int cpu : m.topology.cores()[c]) out << " cpu" << cpu;
    out << "\n";
  }
  std::snprintf(buf, sizeof buf, "Span:        %s (%.6f .. %.6f s)\n", formatDuration(m.span()).c_str(),
                static_cast<double>(m.firstTs) / 1e9, static_cast<double>(m.lastTs) / 1e9);
  out << buf;
  out << "Tasks:       " << m.taskCount() << " (" << m.processes.size() << " processes with known tgid)\n";
  if (const AutogroupCounts ag = autogroupCounts(m); ag.tasks > 0)
    out << "Autogroups:  " << ag.tasks << " tasks as saved beside the trace: " << ag.inRoot << " in the root group, "
        << ag.tasks - ag.inRoot << " in " << ag.groups << " session groups\n";
  out << "Events:      " << m.eventCount << "\n";
  for (const auto& [name, count] : m.eventCounts) {
    std::snprintf(buf, sizeof buf, "  %-28s %12llu\n", name.c_str(), static_cast<unsigned long long>(count));
    out << buf;
  }
  out << "Lost events: " << core::describeLostEvents(m) << "\n";
  const ModelContents contents = contentsOf(m);
  if (!contents.counters.empty()) {
    out << "Counters:\n";
    for (const auto& [kind, c] : contents.counters) {
      std::snprintf(buf, sizeof buf, "  %-28s %12llu samples on %llu tracks\n", kind.c_str(),
                    static_cast<unsigned long long>(c.samples), static_cast<unsigned long long>(c.tracks));
      out << buf;
    }
  }
  if (m.userSlices.size()) {
    std::snprintf(buf, sizeof buf, "User slices: %llu (%llu async), %llu instant markers\n",
                  static_cast<unsigned long long>(contents.userSlices[0] + contents.userSlices[1]),
                  static_cast<unsigned long long>(contents.userSlices[1]),
                  static_cast<unsigned long long>(contents.userSlices[2]));
    out << buf;
  }
  out << "Model:       " << m.memoryBytes() << " bytes";
  if (m.eventCount) {
    std::snprintf(buf, sizeof buf, " (%.1f B/event)", static_cast<double>(m.memoryBytes()) / static_cast<double>(m.eventCount));
    out << buf;
  }
  out << "\n";
  bool any = false;
  for (size_t i = 0; i < core::kDiagCount; ++i) {
    const auto code = static_cast<core::DiagCode>(i);
    if (m.diagnostics.count(code) == 0) continue;
    if (!any) out << "Diagnostics:\n";
    any = true;
    std::snprintf(buf, sizeof buf, "  %-28s %-9s %10llu  ", std::string(core::diagName(code)).c_str(),
                  std::string(core::toString(core::diagSeverity(code))).c_str(),
                  static_cast<unsigned long long>(m.diagnostics.count(code)));
    out << buf << core::diagDescription(code) << "\n";
  }
  // Info records are mostly counts; the kernel-runtime cross-check's say per task what differs.
  for (const auto& rec : m.diagnostics.records())
    if (core::diagSeverity(rec.code) != core::Severity::Info || rec.code == core::DiagCode::runtime_differs_from_kernel)
      out << "  at " << rec.format() << "\n";
  if (m.partial) out << "Partial:     " << m.partialReason << "\n";
  return failed ? kExitFailure : kExitOk;
}

}  // namespace app::cli
