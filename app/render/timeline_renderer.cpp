#include "app/render/timeline_renderer.h"

#include <QPainter>
#include <algorithm>

#include "app/render/colors.h"

namespace app::render {

namespace {
constexpr double kLabelMinPx = 24;  // narrower slices get no text (the style's 5 px floor, plus room for glyphs)
constexpr float kCookieStrip = 0.2f;

QRgb withAlpha(QRgb c, int alpha) { return qRgba(qRed(c), qGreen(c), qBlue(c), alpha); }

QString taskLabel(const core::TraceModel& m, core::Utid u) {
  return QString::fromUtf8(m.comm(u).data(), static_cast<qsizetype>(m.comm(u).size())) + QLatin1Char(' ') +
         QString::number(m.threads.tid[u.value]);
}

struct RowBuilder {
  const RunRenderData& run;
  const core::TimelineTrack& track;
  const Viewport& view;
  int64_t origin;  // absolute ts of relative 0
  RowDrawList& out;

  float px(int64_t absTs) const { return static_cast<float>(view.xOf(absTs - origin)); }
  void add(float x0, float x1, float y0, float y1, QRgb color, PrimStyle style, float minW = 1.0f) {
    x0 = std::max(x0, -2.0f);
    x1 = std::min(x1, static_cast<float>(view.width) + 2.0f);
    if (x1 - x0 < minW) x1 = x0 + minW;
    out.prims.push_back(Prim{x0, x1, y0, y1, color, style});
  }
  QRgb taskRgb(core::Utid u) const {
    return u.value < run.taskColors.size() ? run.taskColors[u.value] : qRgb(0x88, 0x88, 0x88);
  }
};

void buildCpuRow(RowBuilder& b, int cpu, const HighlightSet* hl) {
  const core::TraceModel& m = b.run.model();
  const auto& slices = m.cpuSlices[static_cast<size_t>(cpu)];
  const int64_t t0 = b.origin + b.view.start;
  const int64_t t1 = b.origin + b.view.end();
  std::vector<core::DrawItem> items;
  b.track.query(t0, t1, b.view.nsPerPx, items);
  b.out.drawItems += items.size();
  const bool dim = hl && hl->active();
  const Palette& pal = palette();
  for (const core::DrawItem& it : items) {
    const float x0 = b.px(it.ts);
    const float x1 = b.px(it.end);
    switch (it.kind) {
      case core::DrawKind::Running: {
        const uint32_t row = b.track.sourceRow(it.firstIdx);
        const core::Utid u = slices.utid[row];
        QRgb c = b.taskRgb(u);
        if (dim) c = withAlpha(c, 70);
        b.add(x0, x1, 0.0f, 1.0f, c, PrimStyle::Solid);
        const uint32_t cookie = m.threads.cookie[u.value];
        if (cookie) b.add(x0, x1, 0.0f, kCookieStrip, cookieColor(cookie).rgba(), PrimStyle::Solid);
        if (x1 - x0 >= kLabelMinPx)
          b.out.labels.push_back(PrimLabel{x0, x1, textColorOn(QColor::fromRgba(c)).rgba(), taskLabel(m, u)});
        break;
      }
      case core::DrawKind::ForcedIdle: b.add(x0, x1, 0.0f, 1.0f, pal.forcedIdle.rgb(), PrimStyle::Hatched); break;
      case core::DrawKind::Loss: b.add(x0, x1, 0.0f, 1.0f, pal.loss.rgb(), PrimStyle::Loss, 2.0f); break;
      case core::DrawKind::Folded: {
        const float run = it.share[static_cast<size_t>(core::foldCategory(core::TrackKind::Running))];
        const float fi = it.share[static_cast<size_t>(core::foldCategory(core::TrackKind::ForcedIdle))];
        if (run > 0) {
          const float h = std::max(run, 0.12f);
          QRgb c = it.dominantIdx != core::TimelineTrack::kNoRow
                       ? b.taskRgb(slices.utid[b.track.sourceRow(it.dominantIdx)])
                       : qRgb(0x90, 0x90, 0x90);
          if (dim) c = withAlpha(c, 70);
          b.add(x0, x1, 1.0f - h, 1.0f, c, PrimStyle::Solid);
        }
        if (fi > 0) {
          const float top = 1.0f - std::max(run, 0.0f);
          b.add(x0, x1, std::max(0.0f, top - std::max(fi, 0.12f)), top, pal.forcedIdle.rgb(), PrimStyle::Hatched);
        }
        break;
      }
      default: break;
    }
  }
  // Losses the tracer could not attribute to a CPU cover every CPU.
  const auto& dl = m.dataLoss;
  for (size_t i = 0; i < dl.size(); ++i)
    if (dl.cpu[i] < 0 && dl.tsEnd[i] >= t0 && dl.tsBegin[i] <= t1)
      b.add(b.px(dl.tsBegin[i]), b.px(dl.tsEnd[i]), 0.0f, 1.0f, pal.loss.rgb(), PrimStyle::Loss, 2.0f);

  if (dim && static_cast<size_t>(cpu) < hl->cpuTracks.size()) {
    const core::TimelineTrack& ht = hl->cpuTracks[static_cast<size_t>(cpu)];
    items.clear();
    ht.query(t0, t1, b.view.nsPerPx, items);
    for (const core::DrawItem& it : items) {
      const float x0 = b.px(it.ts);
      const float x1 = b.px(it.end);
      if (it.kind == core::DrawKind::Running) {
        const core::Utid u = slices.utid[ht.sourceRow(it.firstIdx)];
        b.add(x0, x1, 0.0f, 1.0f, b.taskRgb(u), PrimStyle::Highlight, 2.0f);
        if (x1 - x0 >= kLabelMinPx)
          b.out.labels.push_back(PrimLabel{x0, x1, textColorOn(QColor::fromRgb(b.taskRgb(u))).rgba(), taskLabel(m, u)});
      } else if (it.kind == core::DrawKind::Folded) {
        const float run = it.share[0];
        const QRgb c = it.dominantIdx != core::TimelineTrack::kNoRow
                           ? b.taskRgb(slices.utid[ht.sourceRow(it.dominantIdx)])
                           : pal.highlight.rgb();
        b.add(x0, x1, 1.0f - std::max(run, 0.25f), 1.0f, c, PrimStyle::Highlight, 2.0f);
      }
    }
  }
}

void buildTaskRow(RowBuilder& b) {
  const int64_t t0 = b.origin + b.view.start;
  const int64_t t1 = b.origin + b.view.end();
  std::vector<core::DrawItem> items;
  b.track.query(t0, t1, b.view.nsPerPx, items);
  b.out.drawItems += items.size();
  using core::TrackKind;
  auto full = [&](TrackKind k, float x0, float x1) {
    if (k == TrackKind::Sleeping)
      b.add(x0, x1, 0.38f, 0.62f, stateColor(k).rgb(), PrimStyle::Solid);
    else
      b.add(x0, x1, 0.0f, 1.0f, stateColor(k).rgb(), PrimStyle::Solid);
  };
  for (const core::DrawItem& it : items) {
    const float x0 = b.px(it.ts);
    const float x1 = b.px(it.end);
    switch (it.kind) {
      case core::DrawKind::Running: full(TrackKind::Running, x0, x1); break;
      case core::DrawKind::Runnable: full(TrackKind::Runnable, x0, x1); break;
      case core::DrawKind::Sleeping: full(TrackKind::Sleeping, x0, x1); break;
      case core::DrawKind::Blocked: full(TrackKind::Blocked, x0, x1); break;
      case core::DrawKind::Loss: b.add(x0, x1, 0.0f, 1.0f, palette().loss.rgb(), PrimStyle::Loss, 2.0f); break;
      case core::DrawKind::Folded: {
        // Stacked shares from the bottom: running, runnable, blocked, sleeping.
        float y = 1.0f;
        for (TrackKind k : {TrackKind::Running, TrackKind::Runnable, TrackKind::Blocked, TrackKind::Sleeping}) {
          const float s = it.share[static_cast<size_t>(core::foldCategory(k))];
          if (s <= 0.005f) continue;
          b.add(x0, x1, std::max(0.0f, y - s), y, stateColor(k).rgb(), PrimStyle::Solid);
          y -= s;
        }
        break;
      }
      default: break;
    }
    if (it.kind == core::DrawKind::Running && x1 - x0 >= kLabelMinPx) {
      const uint32_t row = b.track.sourceRow(it.firstIdx);
      b.out.labels.push_back(PrimLabel{x0, x1, qRgb(0xff, 0xff, 0xff),
                                       QStringLiteral("CPU ") + QString::number(b.run.model().threadStates.cpu[row])});
    }
  }
}
}  // namespace

std::shared_ptr<RunRenderData> RunRenderData::create(std::shared_ptr<const core::TraceModel> model,
                                                     std::optional<int64_t> origin) {
  auto data = std::make_shared<RunRenderData>();
  data->origin = origin.value_or(model->firstTs);
  data->index = std::make_shared<core::TimelineIndex>(std::move(model));
  const core::TraceModel& m = data->model();
  data->taskColors.resize(m.threadCount());
  for (size_t u = 0; u < m.threadCount(); ++u)
    data->taskColors[u] = taskColor(m.comm(core::Utid(static_cast<uint32_t>(u))), m.threads.tid[u]).rgb();
  return data;
}

std::vector<TimelineRow> cpuRows(const core::TraceModel& model, int rowHeight) {
  std::vector<TimelineRow> rows;
  const core::Topology& topo = model.topology;
  const bool smt = topo.hasSmt();
  std::vector<char> placed(static_cast<size_t>(std::max(model.cpuCount(), topo.cpuLimit())), 0);
  for (size_t c = 0; c < topo.cores().size(); ++c) {
    const auto& cpus = topo.cores()[c];
    for (size_t k = 0; k < cpus.size(); ++k) {
      TimelineRow r;
      r.type = RowType::Cpu;
      r.cpu = cpus[k];
      r.core = static_cast<int>(c);
      r.thread = static_cast<int>(k);
      r.smt = smt;
      r.firstOfCore = k == 0;
      r.label = QStringLiteral("CPU %1").arg(r.cpu);
      if (smt) r.sublabel = QStringLiteral("core %1 \u00b7 thread %2").arg(c).arg(k);
      r.height = rowHeight;
      rows.push_back(std::move(r));
      if (static_cast<size_t>(cpus[k]) < placed.size()) placed[static_cast<size_t>(cpus[k])] = 1;
    }
  }
  // CPUs with slices that the topology does not name (should not happen after finalize).
  for (int cpu = 0; cpu < model.cpuCount(); ++cpu) {
    if (placed[static_cast<size_t>(cpu)] || model.cpuSlices[static_cast<size_t>(cpu)].size() == 0) continue;
    TimelineRow r;
    r.cpu = cpu;
    r.core = static_cast<int>(rows.size());
    r.label = QStringLiteral("CPU %1").arg(cpu);
    r.height = rowHeight;
    rows.push_back(std::move(r));
  }
  return rows;
}

TimelineRow taskRow(const core::TraceModel& model, core::Utid utid, int rowHeight) {
  TimelineRow r;
  r.type = RowType::Task;
  r.utid = utid;
  const auto comm = model.comm(utid);
  r.label = QString::fromUtf8(comm.data(), static_cast<qsizetype>(comm.size()));
  r.sublabel = QStringLiteral("tid %1").arg(model.threads.tid[utid.value]);
  r.height = rowHeight;
  return r;
}

int rowsHeight(const std::vector<TimelineRow>& rows) {
  int h = 0;
  for (const auto& r : rows) h += r.height;
  return h;
}

std::shared_ptr<HighlightSet> HighlightSet::build(const core::TraceModel& model, const QString& text) {
  auto hl = std::make_shared<HighlightSet>();
  const QString needle = text.trimmed();
  if (needle.isEmpty()) return hl;
  bool isNumber = false;
  const int tid = needle.toInt(&isNumber);
  hl->utidMatch.assign(model.threadCount(), 0);
  bool any = false;
  for (size_t u = 1; u < model.threadCount(); ++u) {
    const auto comm = model.comm(core::Utid(static_cast<uint32_t>(u)));
    const bool match = (isNumber && model.threads.tid[u] == tid) ||
                       QString::fromUtf8(comm.data(), static_cast<qsizetype>(comm.size())).contains(needle, Qt::CaseInsensitive);
    hl->utidMatch[u] = match ? 1 : 0;
    any = any || match;
  }
  if (!any) {
    // Keep active() true so the panes dim everything: "no match" is visible.
    hl->cpuTracks.resize(static_cast<size_t>(model.cpuCount()));
    return hl;
  }
  for (int cpu = 0; cpu < model.cpuCount(); ++cpu)
    hl->cpuTracks.push_back(core::TimelineTrack::fromCpuFiltered(model, cpu, [&](core::Utid u) { return hl->matches(u); }));
  return hl;
}

size_t PaneDrawList::drawItems() const {
  size_t n = 0;
  for (const auto& r : rows) n += r.drawItems;
  return n;
}

RowDrawList computeRow(const RunRenderData& run, const TimelineRow& row, const Viewport& view,
                       const HighlightSet* highlight) {
  RowDrawList out;
  const core::TraceModel& m = run.model();
  if (view.width <= 0) return out;
  if (row.type == RowType::Cpu) {
    if (row.cpu < 0 || row.cpu >= m.cpuCount()) return out;
    RowBuilder b{run, run.index->cpuTrack(row.cpu), view, run.origin, out};
    buildCpuRow(b, row.cpu, highlight);
  } else {
    const auto track = run.index->threadTrack(row.utid);
    RowBuilder b{run, *track, view, run.origin, out};
    buildTaskRow(b);
  }
  return out;
}

PaneDrawList computePane(const RunRenderData& run, const std::vector<TimelineRow>& rows, const Viewport& view,
                         const HighlightSet* highlight) {
  PaneDrawList list;
  list.view = view;
  list.dimmed = highlight && highlight->active();
  list.rows.reserve(rows.size());
  for (const auto& r : rows) list.rows.push_back(computeRow(run, r, view, highlight));
  return list;
}

void paintRowBackgrounds(QPainter& p, const QRect& area, const std::vector<TimelineRow>& rows) {
  const Palette& pal = palette();
  int y = area.top();
  int coreParity = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const TimelineRow& r = rows[i];
    if (i > 0 && (r.type != rows[i - 1].type || r.firstOfCore)) coreParity ^= 1;
    const QColor back = r.type == RowType::Task ? pal.background : (coreParity ? pal.coreBandA : pal.coreBandB);
    p.fillRect(QRect(area.left(), y, area.width(), r.height), back);
    const bool coreEdge = i + 1 < rows.size() && rows[i + 1].firstOfCore && rows[i + 1].type == RowType::Cpu;
    p.setPen(coreEdge && r.smt ? pal.coreSeparator : pal.separator);
    p.drawLine(area.left(), y + r.height - 1, area.right(), y + r.height - 1);
    y += r.height;
  }
}

void paintPane(QPainter& p, const QRect& area, const std::vector<TimelineRow>& rows, const PaneDrawList& list,
               const Viewport& view) {
  p.save();
  p.setClipRect(area);
  p.setRenderHint(QPainter::Antialiasing, false);
  const Palette& pal = palette();
  // Map the list's pixels to the current viewport.
  const double scale = list.view.nsPerPx / view.nsPerPx;
  const double shift = static_cast<double>(list.view.start - view.start) / view.nsPerPx;
  auto mapX = [&](float x) { return area.left() + shift + static_cast<double>(x) * scale; };

  QBrush hatch(pal.forcedIdle, Qt::BDiagPattern);
  QBrush lossBrush(pal.loss, Qt::DiagCrossPattern);
  const QFontMetrics fm(p.font());
  int y = area.top();
  const size_t n = std::min(rows.size(), list.rows.size());
  for (size_t i = 0; i < n; ++i) {
    const int h = rows[i].height - 2;  // one pixel of air above and below
    const int top = y + 1;
    y += rows[i].height;
    if (y < area.top() || top > area.bottom()) continue;
    for (const Prim& pr : list.rows[i].prims) {
      const double x0 = mapX(pr.x0);
      double x1 = mapX(pr.x1);
      if (x1 < area.left() || x0 > area.right()) continue;
      if (x1 - x0 < 1.0) x1 = x0 + 1.0;
      const QRectF r(x0, top + static_cast<double>(pr.y0) * h, x1 - x0, static_cast<double>(pr.y1 - pr.y0) * h);
      switch (pr.style) {
        case PrimStyle::Solid: p.fillRect(r, QColor::fromRgba(pr.color)); break;
        case PrimStyle::Hatched:
          p.fillRect(r, pal.forcedIdleBack);
          p.fillRect(r, hatch);
          break;
        case PrimStyle::Loss:
          p.fillRect(r, pal.lossBack);
          p.fillRect(r, lossBrush);
          p.fillRect(QRectF(r.left(), r.top(), std::min(2.0, r.width()), r.height()), pal.loss);
          break;
        case PrimStyle::Highlight:
          p.fillRect(r, QColor::fromRgba(pr.color));
          p.fillRect(QRectF(r.left(), r.top(), r.width(), 2), pal.highlight);
          p.fillRect(QRectF(r.left(), r.bottom() - 2, r.width(), 2), pal.highlight);
          break;
        case PrimStyle::Frame:
          p.setPen(QPen(QColor::fromRgba(pr.color), 2));
          p.setBrush(Qt::NoBrush);
          p.drawRect(r);
          break;
      }
    }
    for (const PrimLabel& l : list.rows[i].labels) {
      const double x0 = std::max<double>(mapX(l.x0), area.left());
      const double x1 = std::min<double>(mapX(l.x1), area.right());
      if (x1 - x0 < kLabelMinPx) continue;
      const QString text = fm.elidedText(l.text, Qt::ElideRight, static_cast<int>(x1 - x0) - 6);
      if (text.size() < 2) continue;
      p.setPen(QColor::fromRgba(l.color));
      p.drawText(QRectF(x0 + 3, top, x1 - x0 - 6, h), Qt::AlignVCenter | Qt::AlignLeft, text);
    }
  }
  p.restore();
}

void paintGutter(QPainter& p, const QRect& gutter, const std::vector<TimelineRow>& rows) {
  const Palette& pal = palette();
  p.save();
  p.fillRect(gutter, pal.gutter);
  QFont f = p.font();
  QFont small = f;
  small.setPointSizeF(std::max(6.5, f.pointSizeF() * 0.8));
  const QFontMetrics fm(f);
  const QFontMetrics sfm(small);
  int y = gutter.top();
  for (size_t i = 0; i < rows.size(); ++i) {
    const TimelineRow& r = rows[i];
    const QRect cell(gutter.left() + 6, y, gutter.width() - 10, r.height);
    if (r.type == RowType::Cpu && r.smt && r.firstOfCore) {
      // A bracket that ties the siblings of one core together.
      int span = 0;
      for (size_t j = i; j < rows.size() && (j == i || !rows[j].firstOfCore) && rows[j].type == RowType::Cpu; ++j)
        span += rows[j].height;
      p.setPen(QPen(pal.coreSeparator, 2));
      p.drawLine(gutter.left() + 2, y + 3, gutter.left() + 2, y + span - 3);
    }
    p.setFont(f);
    p.setPen(r.type == RowType::Task ? QColor(0x1a, 0x4f, 0x8a) : pal.gutterText);
    const int labelW = std::min(cell.width() / 2 + 10, fm.horizontalAdvance(r.label) + 8);
    const QString main = fm.elidedText(r.label, Qt::ElideRight, r.sublabel.isEmpty() ? cell.width() : labelW);
    p.drawText(cell, Qt::AlignVCenter | Qt::AlignLeft, main);
    if (!r.sublabel.isEmpty()) {
      p.setFont(small);
      p.setPen(pal.gutterSubText);
      const QRect sub = cell.adjusted(fm.horizontalAdvance(main) + 6, 0, 0, 0);
      p.drawText(sub, Qt::AlignVCenter | Qt::AlignLeft, sfm.elidedText(r.sublabel, Qt::ElideRight, sub.width()));
    }
    p.setPen(pal.separator);
    p.drawLine(gutter.left(), y + r.height - 1, gutter.right(), y + r.height - 1);
    y += r.height;
  }
  p.setPen(pal.separator);
  p.drawLine(gutter.right(), gutter.top(), gutter.right(), gutter.bottom());
  p.restore();
}

}  // namespace app::render
