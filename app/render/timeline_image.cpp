#include "app/render/timeline_image.h"

#include <QFileInfo>
#include <QPainter>
#include <QDir>
#include <algorithm>

#include "app/render/colors.h"

namespace app::render {

Viewport viewportFor(int64_t from, int64_t to, int timelineWidth) {
  Viewport v;
  v.width = std::max(1, timelineWidth);
  v.start = from;
  v.nsPerPx = std::max(1e-3, static_cast<double>(std::max<int64_t>(1, to - from)) / v.width);
  return v;
}

int64_t longestSpan(const std::vector<ImageRun>& runs) {
  int64_t span = 1;
  for (const auto& r : runs)
    if (r.data) span = std::max(span, r.data->model().lastTs - r.data->origin);
  return span;
}

QString runTitle(const core::TraceModel& m) {
  if (m.replay) {
    // Every parameter with its value is in the tooltip and the runs list; the
    // title stays short enough for a pane header.
    return QStringLiteral("replay: ") + QString::fromStdString(m.replay->model) + QStringLiteral(" on ") +
           QString::fromStdString(m.topology.describe());
  }
  if (m.sourceFiles.empty()) return QStringLiteral("(unnamed run)");
  const QFileInfo fi(QString::fromStdString(m.sourceFiles.front()));
  const QString dir = fi.dir().dirName();
  return dir.isEmpty() || dir == QLatin1String(".") ? fi.fileName() : dir + QLatin1Char('/') + fi.fileName();
}

QString runShortTitle(const core::TraceModel& m) {
  if (m.replay) return QString::fromStdString(m.replay->model);
  if (m.sourceFiles.empty()) return QStringLiteral("run");
  const QFileInfo fi(QString::fromStdString(m.sourceFiles.front()));
  static const std::pair<const char*, const char*> generic[] = {
      {"trace.txt", "txt"}, {"trace.dat", "dat"}, {"perf.data", "perf"}, {"perf-script.txt", "script"},
      {"ctf", "ctf"},       {"trace", "trace"},   {"kernel", "ctf"}};
  for (const auto& [name, tag] : generic)
    if (fi.fileName() == QLatin1String(name)) return fi.dir().dirName() + QLatin1Char(' ') + QLatin1String(tag);
  return fi.completeBaseName();
}

QString runSubtitle(const core::TraceModel& m) {
  QStringList parts;
  if (!m.format.empty()) parts << QString::fromStdString(m.format);
  parts << QString::fromStdString(m.topology.describe());
  parts << formatDuration(m.span());
  parts << QStringLiteral("%L1 slices").arg(m.sliceCount());
  if (m.lostEvents() > 0 || m.dataLoss.size() > 0)
    parts << QStringLiteral("%L1 lost ranges").arg(m.dataLoss.size());
  return parts.join(QStringLiteral(" \u00b7 "));
}

void paintPaneHeader(QPainter& p, const QRect& rect, const QString& title, const QString& subtitle, bool replay,
                     const QString& warning) {
  const Palette& pal = palette();
  p.save();
  p.fillRect(rect, replay ? pal.paneHeaderReplay : pal.paneHeader);
  QFont bold = p.font();
  bold.setBold(true);
  const QFontMetrics bfm(bold);
  p.setFont(bold);
  p.setPen(pal.paneHeaderText);
  const QRect inner = rect.adjusted(6, 0, -6, 0);
  const QString t = bfm.elidedText(title, Qt::ElideMiddle, inner.width() / 2);
  p.drawText(inner, Qt::AlignVCenter | Qt::AlignLeft, t);
  int x = inner.left() + bfm.horizontalAdvance(t) + 12;
  QFont normal = p.font();
  normal.setBold(false);
  p.setFont(normal);
  const QFontMetrics fm(normal);
  if (!warning.isEmpty()) {
    const QString w = fm.elidedText(warning, Qt::ElideRight, std::max(40, inner.right() - x));
    const QRect wr(x, rect.top() + 3, fm.horizontalAdvance(w) + 10, rect.height() - 6);
    p.fillRect(wr, QColor(0xff, 0xd8, 0x6b));
    p.setPen(QColor(0x5a, 0x3b, 0x00));
    p.drawText(wr, Qt::AlignCenter, w);
    x = wr.right() + 10;
  }
  p.setPen(pal.gutterSubText);
  if (x < inner.right())
    p.drawText(QRect(x, rect.top(), inner.right() - x, rect.height()), Qt::AlignVCenter | Qt::AlignLeft,
               fm.elidedText(subtitle, Qt::ElideRight, inner.right() - x));
  p.setPen(pal.separator);
  p.drawLine(rect.left(), rect.bottom(), rect.right(), rect.bottom());
  p.restore();
}

void paintLegend(QPainter& p, const QRect& rect) {
  const Palette& pal = palette();
  p.save();
  p.fillRect(rect, pal.gutter);
  const QFontMetrics fm(p.font());
  int x = rect.left() + 8;
  const int h = rect.height() - 10;
  auto swatch = [&](const QString& text, auto&& draw) {
    const QRect sw(x, rect.top() + 5, 22, h);
    draw(sw);
    p.setPen(pal.gutterText);
    p.drawText(QRect(sw.right() + 5, rect.top(), fm.horizontalAdvance(text) + 4, rect.height()),
               Qt::AlignVCenter | Qt::AlignLeft, text);
    x = sw.right() + 5 + fm.horizontalAdvance(text) + 18;
  };
  swatch(QStringLiteral("task (colour per comm+tid)"), [&](const QRect& r) {
    p.fillRect(QRect(r.left(), r.top(), r.width() / 3, r.height()), taskColor("a", 1));
    p.fillRect(QRect(r.left() + r.width() / 3, r.top(), r.width() / 3, r.height()), taskColor("b", 2));
    p.fillRect(QRect(r.left() + 2 * r.width() / 3, r.top(), r.width() - 2 * r.width() / 3, r.height()), taskColor("c", 3));
  });
  swatch(QStringLiteral("folded: bar height = busy share"), [&](const QRect& r) {
    for (int i = 0; i < r.width(); i += 2) {
      const int hh = r.height() * (3 + (i * 7) % 8) / 10;
      p.fillRect(QRect(r.left() + i, r.bottom() - hh + 1, 2, hh), taskColor("fold", i));
    }
  });
  swatch(QStringLiteral("forced idle"), [&](const QRect& r) {
    p.fillRect(r, pal.forcedIdleBack);
    p.fillRect(r, QBrush(pal.forcedIdle, Qt::BDiagPattern));
  });
  swatch(QStringLiteral("lost data"), [&](const QRect& r) {
    p.fillRect(r, pal.lossBack);
    p.fillRect(r, QBrush(pal.loss, Qt::DiagCrossPattern));
  });
  swatch(QStringLiteral("cookie"), [&](const QRect& r) {
    p.fillRect(r, taskColor("x", 7));
    p.fillRect(QRect(r.left(), r.top(), r.width(), r.height() / 5 + 1), cookieColor(1));
  });
  for (core::TrackKind k : {core::TrackKind::Running, core::TrackKind::Runnable, core::TrackKind::Blocked,
                            core::TrackKind::Sleeping}) {
    static const char* names[] = {"", "running", "runnable", "sleeping", "blocked"};
    swatch(QString::fromLatin1(names[static_cast<int>(k)]), [&](const QRect& r) { p.fillRect(r, stateColor(k)); });
  }
  p.restore();
}

namespace {
// The heat map's lines follow the CPU rows; with every group collapsed, topology order.
std::vector<int> heatCpusOf(const ImageRun& run, const std::vector<TimelineRow>& rows) {
  if (!run.heatCpus.empty()) return run.heatCpus;
  std::vector<int> cpus;
  for (const TimelineRow& r : rows)
    if (r.type == RowType::Cpu) cpus.push_back(r.cpu);
  if (cpus.empty())
    for (const TimelineRow& r : cpuRows(run.data->model())) cpus.push_back(r.cpu);
  return cpus;
}
}  // namespace

QImage paintTimelineImage(const std::vector<ImageRun>& runs, const std::vector<PaneDrawList>& lists,
                          const ImageOptions& options, const Viewport& view) {
  int height = kRulerHeight + (options.legend ? kLegendHeight : 0);
  std::vector<const std::vector<TimelineRow>*> rowSets;
  std::vector<std::vector<TimelineRow>> defaults(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].rows.empty()) defaults[i] = cpuRows(runs[i].data->model(), options.rowHeight);
    rowSets.push_back(runs[i].rows.empty() ? &defaults[i] : &runs[i].rows);
    height += kPaneHeaderHeight + rowsHeight(*rowSets.back()) + (options.heatmap ? kHeatmapHeight : 0);
  }
  QImage image(options.width, std::max(height, 40), QImage::Format_RGB32);
  image.fill(palette().background);
  QPainter p(&image);
  QFont f = p.font();
  f.setPixelSize(11);
  p.setFont(f);
  const int gutter = options.gutterWidth;
  paintRuler(p, QRect(0, 0, options.width, kRulerHeight), gutter, view);
  int y = kRulerHeight;
  for (size_t i = 0; i < runs.size(); ++i) {
    const core::TraceModel& m = runs[i].data->model();
    const QString title = runs[i].title.isEmpty() ? runTitle(m) : runs[i].title;
    const QString warning = m.partial ? QStringLiteral("partial: ") + QString::fromStdString(m.partialReason) : QString();
    paintPaneHeader(p, QRect(0, y, options.width, kPaneHeaderHeight), title, runSubtitle(m), m.replay.has_value(),
                    warning);
    y += kPaneHeaderHeight;
    const auto& rows = *rowSets[i];
    if (options.heatmap) {
      const QRect band(0, y, options.width, kHeatmapHeight);
      const int64_t span = longestSpan(runs);
      const QImage heat = computeHeatmap(*runs[i].data, heatCpusOf(runs[i], rows), 0, span,
                                         QSize(options.width - gutter, kHeatmapHeight), *options.heatmap);
      paintHeatOverview(p, band, gutter, *options.heatmap, heat, static_cast<double>(view.start) / span,
                        static_cast<double>(view.end()) / span);
      y += kHeatmapHeight;
    }
    const int h = rowsHeight(rows);
    const QRect area(gutter, y, options.width - gutter, h);
    paintRowBackgrounds(p, area, rows);
    if (i < lists.size()) paintPane(p, area, rows, lists[i], view);
    paintGutter(p, QRect(0, y, gutter, h), rows);
    y += h;
  }
  if (options.legend) paintLegend(p, QRect(0, y, options.width, kLegendHeight));
  p.end();
  return image;
}

QImage renderTimelineImage(const std::vector<ImageRun>& runs, const ImageOptions& options) {
  const int64_t from = options.from.value_or(0);
  const int64_t to = options.to.value_or(longestSpan(runs));
  const Viewport view = viewportFor(from, to, options.width - options.gutterWidth);
  std::vector<PaneDrawList> lists;
  for (const auto& r : runs) {
    const auto rows = r.rows.empty() ? cpuRows(r.data->model(), options.rowHeight) : r.rows;
    lists.push_back(computePane(*r.data, rows, view, r.highlight.get()));
  }
  return paintTimelineImage(runs, lists, options, view);
}

}  // namespace app::render
