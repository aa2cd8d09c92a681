#include "app/gui/details_view.h"

#include <QUrl>
#include <algorithm>

#include "app/render/time_axis.h"

namespace app::gui {

namespace {
QString esc(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())).toHtmlEscaped(); }
QString dur(int64_t ns) { return render::formatDuration(ns); }

QString taskLink(const core::TraceModel& m, core::Utid u) {
  if (!u.isValid() || u.value >= m.threadCount()) return QObject::tr("unknown");
  if (u == core::kIdleUtid) return QObject::tr("<i>idle</i>");
  return QStringLiteral("<a href='task:%2'>%1 %2</a>").arg(esc(m.comm(u))).arg(m.threads.tid[u.value]);
}

QString row(const QString& key, const QString& value) {
  return QStringLiteral("<tr><td style='color:#555;padding-right:12px'>%1</td><td>%2</td></tr>").arg(key, value);
}

QString cpuName(const core::TraceModel& m, int cpu) {
  const auto* c = m.topology.cpu(cpu);
  if (c && m.topology.hasSmt()) return QObject::tr("CPU %1 (core %2 \u00b7 thread %3)").arg(cpu).arg(c->core).arg(c->thread);
  return QObject::tr("CPU %1").arg(cpu);
}

/// Who made the task runnable before `start`, and how long it waited.
QString wakeupRows(const core::TraceModel& m, core::Utid u, int64_t start, int64_t origin) {
  QString out;
  const auto [first, last] = m.stateRowsOf(u);
  const auto& st = m.threadStates;
  auto it = std::upper_bound(st.ts.begin() + first, st.ts.begin() + last, start);
  auto r = static_cast<uint32_t>(it - st.ts.begin());
  // r-1 is the row covering `start` (Running); r-2 what came before it.
  if (r < first + 2) return row(QObject::tr("before"), QObject::tr("<i>first state seen in the trace</i>"));
  const uint32_t before = r - 2;
  const core::TaskState prevState = st.state[before];
  const int64_t waited = start - st.ts[before];
  if (prevState == core::TaskState::RunnablePreempted) {
    out += row(QObject::tr("before"), QObject::tr("preempted, waited %1 on the runqueue (scheduling delay)").arg(dur(waited)));
    return out;
  }
  if (prevState != core::TaskState::Runnable) {
    out += row(QObject::tr("before"), QObject::tr("%1 (no wakeup seen)").arg(esc(core::toString(prevState))));
    return out;
  }
  const auto wakeups = m.wakeupsOf(u);
  const auto& w = m.wakeups;
  // The last wakeup at or before the runnable interval's start (small slack: waking precedes wakeup).
  int64_t bestTs = INT64_MIN;
  uint32_t best = UINT32_MAX;
  for (auto wi = wakeups.rbegin(); wi != wakeups.rend(); ++wi) {
    if (w.ts[*wi] <= st.ts[before]) {
      best = *wi;
      bestTs = w.ts[*wi];
      break;
    }
  }
  if (best == UINT32_MAX) {
    out += row(QObject::tr("before"), QObject::tr("runnable for %1 (no wakeup event)").arg(dur(waited)));
    return out;
  }
  QString waker;
  if (w.flags[best] & core::kWakeupFromIrq)
    waker = QObject::tr("interrupt or timer (no task context) on CPU %1").arg(w.wakerCpu[best]);
  else
    waker = QObject::tr("%1 on CPU %2").arg(taskLink(m, w.waker[best])).arg(w.wakerCpu[best]);
  if (w.flags[best] & core::kWakeupNew) waker += QObject::tr(" (first wakeup after fork)");
  out += row(QObject::tr("woken by"), waker);
  out += row(QObject::tr("woken at"), QObject::tr("%1, target CPU %2").arg(dur(bestTs - origin)).arg(w.targetCpu[best]));
  out += row(QObject::tr("wakeup latency"), QStringLiteral("<b>%1</b>").arg(dur(start - bestTs)));
  return out;
}
}  // namespace

QString sliceDetailsHtml(const Run& run, const SliceRef& ref) {
  if (!run.model) return {};
  const core::TraceModel& m = *run.model;
  const int64_t origin = run.render ? run.render->origin : m.firstTs;
  QString rows;
  QString heading;
  if (ref.userSlice) {
    const core::UserSliceTable& us = m.userSlices;
    if (ref.row >= us.size()) return {};
    const uint32_t i = ref.row;
    const core::Utid u = us.utid[i];
    heading = QStringLiteral("%1 <span style='color:#666'>user-space slice</span>").arg(esc(m.strings.get(us.name[i])));
    rows += row(QObject::tr("name"), esc(m.strings.get(us.name[i])));
    rows += row(QObject::tr("task"), taskLink(m, u));
    const QString kind = us.kind[i] == core::UserSliceKind::Sync    ? QObject::tr("begin/end (atrace B/E)")
                         : us.kind[i] == core::UserSliceKind::Async ? QObject::tr("async (atrace S/F)")
                                                                    : QObject::tr("instant marker");
    rows += row(QObject::tr("kind"), kind);
    rows += row(QObject::tr("start"), dur(us.ts[i] - origin));
    if (us.kind[i] != core::UserSliceKind::Instant) {
      rows += row(QObject::tr("duration"), QStringLiteral("<b>%1</b>").arg(dur(us.dur[i])) +
                                               ((us.flags[i] & core::kUserSliceOpenAtEnd)
                                                    ? QObject::tr(" (at least: no end traced, runs to the trace end)")
                                                    : QString()));
      rows += row(QObject::tr("depth"), us.kind[i] == core::UserSliceKind::Sync
                                            ? QObject::tr("%1 (slices of this thread open around it)").arg(us.depth[i])
                                            : QObject::tr("lane %1").arg(us.depth[i]));
    }
  } else if (ref.type == render::RowType::Cpu) {
    if (ref.cpu < 0 || ref.cpu >= m.cpuCount() || ref.row >= m.cpuSlices[static_cast<size_t>(ref.cpu)].size()) return {};
    const auto& s = m.cpuSlices[static_cast<size_t>(ref.cpu)];
    const uint32_t i = ref.row;
    const core::Utid u = s.utid[i];
    rows += row(QObject::tr("where"), cpuName(m, ref.cpu));
    rows += row(QObject::tr("start"), QObject::tr("%1 from trace start (absolute %2 s)")
                                          .arg(dur(s.ts[i] - origin))
                                          .arg(QString::number(static_cast<double>(s.ts[i]) / 1e9, 'f', 9)));
    rows += row(QObject::tr("duration"), QStringLiteral("<b>%1</b>").arg(dur(s.dur[i])) +
                                             ((s.flags[i] & core::kSliceStartUnknown) ? QObject::tr(" (at least: began before the CPU's first event)") : QString()));
    switch (s.kind[i]) {
      case core::SliceKind::Task: {
        heading = QStringLiteral("%1 <span style='color:#666'>tid %2</span>").arg(esc(m.comm(u))).arg(m.threads.tid[u.value]);
        QString task = taskLink(m, u);
        if (m.threads.tgid[u.value] >= 0) task += QObject::tr(", tgid %1").arg(m.threads.tgid[u.value]);
        if (m.threads.upid[u.value].isValid() && m.threads.upid[u.value].value < m.processes.size())
          task += QObject::tr(" (%1)").arg(esc(m.strings.get(m.processes.name[m.threads.upid[u.value].value])));
        task += QStringLiteral(" \u2014 <a href='row:%1:%2'>%3</a>").arg(run.id).arg(u.value).arg(QObject::tr("show task row"));
        rows += row(QObject::tr("task"), task);
        if (s.prio[i] < 0 && s.prio[i] != core::kPrioUnknown)
          rows += row(QObject::tr("prio"), QObject::tr("%1 (SCHED_DEADLINE)").arg(s.prio[i]));
        else if (s.prio[i] >= 0)
          rows += row(QObject::tr("prio"), s.prio[i] < 100 ? QObject::tr("%1 (RT)").arg(s.prio[i])
                                                           : QObject::tr("%1 (nice %2)").arg(s.prio[i]).arg(s.prio[i] - 120));
        rows += row(QObject::tr("ended"), esc(core::describeSliceEnd(s, i)));
        if (const int32_t group = m.threads.autogroup[u.value]; group >= 0)
          rows += row(QObject::tr("autogroup"), group == 0 ? QObject::tr("the root task group (saved beside the trace)")
                                                           : QObject::tr("/autogroup-%1, nice %2 (saved beside the trace)")
                                                                 .arg(group)
                                                                 .arg(m.threads.autogroupNice[u.value]));
        if (m.threads.cookie[u.value]) rows += row(QObject::tr("core cookie"), QStringLiteral("0x%1").arg(m.threads.cookie[u.value], 0, 16));
        if (m.threads.uclampMin[u.value] >= 0 || m.threads.uclampMax[u.value] >= 0)
          rows += row(QObject::tr("uclamp (requested)"), QStringLiteral("min %1, max %2").arg(m.threads.uclampMin[u.value]).arg(m.threads.uclampMax[u.value]));
        rows += wakeupRows(m, u, s.ts[i], origin);
        break;
      }
      case core::SliceKind::ForcedIdle: {
        heading = QObject::tr("Forced idle");
        QStringList sib;
        for (int c : m.topology.siblingsOf(ref.cpu)) {
          if (c >= m.cpuCount()) continue;
          const auto& ss = m.cpuSlices[static_cast<size_t>(c)];
          auto it = std::upper_bound(ss.ts.begin(), ss.ts.end(), s.ts[i]);
          if (it == ss.ts.begin()) continue;
          const auto j = static_cast<uint32_t>(it - ss.ts.begin() - 1);
          if (ss.end(j) > s.ts[i] && ss.kind[j] == core::SliceKind::Task)
            sib << QObject::tr("CPU %1 ran %2 (cookie 0x%3)").arg(c).arg(taskLink(m, ss.utid[j])).arg(m.threads.cookie[ss.utid[j].value], 0, 16);
        }
        rows += row(QObject::tr("why"), QObject::tr("core scheduling kept this SMT sibling idle: no task with a compatible cookie was runnable"));
        if (!sib.isEmpty()) rows += row(QObject::tr("sibling"), sib.join(QStringLiteral("<br>")));
        break;
      }
      case core::SliceKind::Lost: {
        heading = QObject::tr("Lost data");
        int64_t count = -1;
        for (size_t d = 0; d < m.dataLoss.size(); ++d)
          if ((m.dataLoss.cpu[d] == ref.cpu || m.dataLoss.cpu[d] < 0) && m.dataLoss.tsBegin[d] <= s.ts[i] && m.dataLoss.tsEnd[d] >= s.end(i))
            count = m.dataLoss.count[d];
        rows += row(QObject::tr("what"), count >= 0 ? QObject::tr("the tracer dropped %L1 events here").arg(count)
                                                   : QObject::tr("the tracer dropped events here (count unknown)"));
        rows += row(QObject::tr("effect"), QObject::tr("who ran in this span is unknown; statistics exclude it"));
        break;
      }
      case core::SliceKind::Idle: heading = QObject::tr("Idle"); break;
    }
    if (i > 0) rows += row(QObject::tr("before on this CPU"), taskLink(m, s.utid[i - 1]));
    if (i + 1 < s.size()) rows += row(QObject::tr("after on this CPU"), taskLink(m, s.utid[i + 1]));
  } else {
    if (ref.row >= m.threadStates.size()) return {};
    const core::Utid u = ref.utid;
    const uint32_t i = ref.row;
    const auto state = m.threadStates.state[i];
    heading = QStringLiteral("%1 <span style='color:#666'>tid %2</span> \u2014 %3")
                  .arg(esc(m.comm(u))).arg(m.threads.tid[u.value]).arg(esc(core::toString(state)));
    rows += row(QObject::tr("task"), taskLink(m, u));
    rows += row(QObject::tr("state"), esc(core::toString(state)));
    rows += row(QObject::tr("CPU"), cpuName(m, m.threadStates.cpu[i]));
    rows += row(QObject::tr("start"), dur(m.threadStates.ts[i] - origin));
    rows += row(QObject::tr("duration"), QStringLiteral("<b>%1</b>").arg(dur(m.stateEnd(i) - m.threadStates.ts[i])));
    if (state == core::TaskState::Running) rows += wakeupRows(m, u, m.threadStates.ts[i], origin);
  }
  return QStringLiteral("<h3 style='margin:2px 0 6px 0'>%1</h3><p style='color:#666;margin:0 0 6px 0'>%2</p><table>%3</table>")
      .arg(heading, run.title.toHtmlEscaped(), rows);
}

DetailsView::DetailsView(QWidget* parent) : QTextBrowser(parent) {
  setOpenLinks(false);
  setOpenExternalLinks(false);
  connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
    const QString s = url.toString();
    if (s.startsWith(QLatin1String("task:"))) emit highlightRequested(s.mid(5));
    if (s.startsWith(QLatin1String("row:"))) {
      const auto parts = s.mid(4).split(QLatin1Char(':'));
      if (parts.size() == 2) emit taskRowRequested(parts[0].toInt(), core::Utid(parts[1].toUInt()));
    }
  });
  clearSlice();
}

void DetailsView::showSlice(const Run* run, const SliceRef& slice) {
  if (!run || slice.runId < 0) {
    clearSlice();
    return;
  }
  setHtml(sliceDetailsHtml(*run, slice));
}

void DetailsView::clearSlice() {
  setHtml(tr("<p style='color:#666'>Click a slice in the timeline to see its task, times, how it ended, who woke "
             "it and its wakeup latency. Double-click zooms to it.</p>"));
}

}  // namespace app::gui
