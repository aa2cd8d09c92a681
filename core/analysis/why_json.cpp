// The stable `why --json` schema (names fixed by issue 16; other tools read them).
#include "core/analysis/why.h"

#include <cmath>

namespace core::analysis {

namespace {
void writeTid(JsonWriter& j, const TraceModel& m, Utid u) {
  if (u.isValid()) j.field("tid", static_cast<int64_t>(m.threads.tid[u.value]));
  else j.nullField("tid");
}
}  // namespace

void writeWhyJson(JsonWriter& j, const TraceModel& m, const WhyReport& why) {
  j.key("task").beginObject();
  writeTid(j, m, why.utid);
  j.field("comm", m.comm(why.utid));
  j.endObject();
  j.key("range").beginObject();
  j.field("from_ns", why.range.from);
  j.field("to_ns", why.range.to);
  j.endObject();
  j.field("running_ns", why.runningNs);
  j.field("runnable_ns", why.runnableNs);
  j.field("sleeping_ns", why.sleepingNs);
  j.field("blocked_ns", why.blockedNs);
  j.field("unknown_ns", why.unknownNs);
  j.field("idle_while_runnable_ns", why.idleWhileRunnableNs);
  j.key("antagonists").beginArray();
  for (const Antagonist& a : why.antagonists) {
    j.beginObject();
    writeTid(j, m, a.utid);
    j.field("comm", m.comm(a.utid));
    j.field("ns", a.ns);
    j.endObject();
  }
  j.endArray();
  j.key("wakers").beginArray();
  for (const WakerShare& w : why.wakers) {
    j.beginObject();
    writeTid(j, m, w.utid);
    j.field("comm", w.utid.isValid() ? m.comm(w.utid) : std::string_view("<irq>"));
    j.field("count", w.count);
    j.field("ns", w.sleepNs);
    j.endObject();
  }
  j.endArray();
  j.key("critical_path").beginArray();
  for (const PathSegment& s : why.criticalPath.segments) {
    j.beginObject();
    writeTid(j, m, s.utid);
    j.field("comm", m.comm(s.utid));
    j.field("state", toString(s.state));
    j.field("from_ns", s.from);
    j.field("to_ns", s.to);
    if (s.waitedBehind.isValid()) {
      j.key("waited_behind").beginObject();
      writeTid(j, m, s.waitedBehind);
      j.field("comm", m.comm(s.waitedBehind));
      j.endObject();
    }
    j.endObject();
  }
  j.endArray();
  j.field("critical_path_stop", toString(why.criticalPath.stop));
}

void writeWhyDiffJson(JsonWriter& j, const WhyDiff& diff) {
  // Nanoseconds as integers (a double's %g would round them).
  j.key("changes").beginObject();
  for (const MetricDelta& d : diff.metrics) {
    j.key(d.name).beginObject();
    j.field("a", static_cast<int64_t>(std::llround(d.a)));
    j.field("b", static_cast<int64_t>(std::llround(d.b)));
    j.field("abs", static_cast<int64_t>(std::llround(d.delta())));
    if (auto r = d.relative()) j.field("rel", *r);
    else j.nullField("rel");
    j.endObject();
  }
  j.endObject();
  j.key("antagonists").beginArray();
  for (const auto& a : diff.antagonists) {
    j.beginObject();
    j.field("comm", a.comm);
    j.field("a_ns", a.aNs);
    j.field("b_ns", a.bNs);
    j.endObject();
  }
  j.endArray();
}

}  // namespace core::analysis
