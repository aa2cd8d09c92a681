// JSON and CSV forms of a report, built on the stable schemas of
// core/analysis/stats_json.h (the same blocks `stats --json` and `diff --json`
// print), plus each replay's model, parameters (with docs) and validation.
#include "app/report/report_data.h"
#include "core/analysis/stats_json.h"
#include "core/json_writer.h"
#include "replay/policies/registry.h"

namespace app::report {

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string reportJson(const ReportData& d) {
  core::JsonWriter j;
  j.beginObject();
  j.key("report").beginObject();
  j.field("title", d.title.toStdString());
  j.field("date", d.date.toUTC().toString(Qt::ISODate).toStdString());
  j.field("generator", "SchedLab");
  j.key("range").beginObject();
  if (d.spec.fromNs) j.field("from_ns", *d.spec.fromNs);
  else j.nullField("from_ns");
  if (d.spec.toNs) j.field("to_ns", *d.spec.toNs);
  else j.nullField("to_ns");
  j.endObject();
  j.endObject();

  j.key("runs").beginArray();
  for (const RunEntry& r : d.runs) {
    const core::TraceModel& m = *r.model;
    j.beginObject();
    j.field("tag", r.tag.toStdString());
    j.field("label", r.label.toStdString());
    j.field("kind", r.isReplay() ? "replay" : "recording");
    j.field("file", m.sourceFiles.empty() ? std::string() : m.sourceFiles.front());
    j.field("format", m.format);
    j.field("cpus", m.cpuCount());
    j.field("topology", m.topology.describe());
    j.field("first_ts", m.firstTs);
    j.field("last_ts", m.lastTs);
    j.field("span_ns", m.span());
    j.field("events", m.eventCount);
    j.field("partial", m.partial);
    j.key("metadata").beginObject();
    for (const auto& [k, v] : m.metadata) j.field(k, v);
    j.endObject();
    if (r.isReplay()) {
      j.key("replay").beginObject();
      j.field("model", m.replay ? m.replay->model : std::string());
      if (const auto info = replay::parseModel(m.replay ? m.replay->model : std::string())) {
        j.field("model_title", info->title());
        j.field("model_source", info->source());
      }
      j.field("recording", d.runs[r.recording].tag.toStdString());
      j.key("params").beginArray();
      if (m.replay)
        for (const auto& p : m.replay->params) {
          j.beginObject();
          j.field("key", p.key);
          j.field("value", p.value);
          j.field("origin", p.origin);
          j.field("doc", p.doc);
          j.endObject();
        }
      j.endArray();
      if (r.replay->validation) replay::writeValidationJson(j, *r.replay->validation);
      else j.nullField("validation");
      j.endObject();
    }
    j.key("stats").beginObject();
    core::analysis::writeRunStatsJson(j, r.stats, core::analysis::StatsGrouping::Task);
    j.endObject();
    j.endObject();
  }
  j.endArray();

  if (d.diff) {
    j.key("diff").beginObject();
    core::analysis::writeRunDiffJson(j, *d.diff);
    j.endObject();
  } else {
    j.nullField("diff");
  }
  j.key("replay_diffs").beginArray();
  for (size_t k = 0; k < d.replayDiffs.size(); ++k) {
    const RunEntry& rep = d.runs[d.recordings + k];
    j.beginObject();
    j.field("recording", d.runs[rep.recording].tag.toStdString());
    j.field("replay", rep.tag.toStdString());
    j.key("diff").beginObject();
    core::analysis::writeRunDiffJson(j, d.replayDiffs[k]);
    j.endObject();
    j.endObject();
  }
  j.endArray();
  j.endObject();
  return j.str() + "\n";
}

std::string reportCsv(const ReportData& d) {
  // One table: every run's per-task rows (the `stats --csv` columns) behind the run's tag and kind.
  std::string out;
  for (const RunEntry& r : d.runs) {
    const std::string csv = core::analysis::runStatsCsv(r.stats, core::analysis::StatsGrouping::Task);
    size_t pos = 0;
    bool header = true;
    while (pos < csv.size()) {
      size_t end = csv.find('\n', pos);
      if (end == std::string::npos) end = csv.size();
      const std::string line = csv.substr(pos, end - pos);
      pos = end + 1;
      if (line.empty()) continue;
      if (header) {
        if (out.empty()) out += "run,kind," + line + "\n";
        header = false;
        continue;
      }
      out += csvField(r.tag.toStdString()) + "," + (r.isReplay() ? "replay" : "recording") + "," + line + "\n";
    }
  }
  return out;
}

}  // namespace app::report
