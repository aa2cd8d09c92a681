#include "app/gui/timeline_view.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QLabel>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QThreadPool>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>

#include "app/gui/runs_model.h"
#include "app/gui/why_overlay.h"
#include "app/render/colors.h"
#include "app/render/timeline_image.h"

namespace app::gui {

using render::RowType;
using render::TimelineRow;

// ---------------------------------------------------------------- view state

TimelineViewState::TimelineViewState(QObject* parent) : QObject(parent) {}

render::Viewport TimelineViewState::clamp(render::Viewport v) const {
  v.width = std::max(1, v.width);
  const auto len = static_cast<double>(m_end - m_begin);
  const double maxNsPerPx = std::max(1.0, len * 4.0 / v.width);
  v.nsPerPx = std::clamp(v.nsPerPx, 0.01, maxNsPerPx);
  const auto visible = static_cast<double>(v.span());
  const auto lo = static_cast<int64_t>(static_cast<double>(m_begin) - 0.9 * visible - 0.1 * len);
  const auto hi = static_cast<int64_t>(static_cast<double>(m_end) + 0.1 * len - 0.1 * visible);
  v.start = std::clamp(v.start, std::min(lo, hi), std::max(lo, hi));
  return v;
}

void TimelineViewState::setViewport(render::Viewport view) {
  view = clamp(view);
  if (view == m_view) return;
  m_view = view;
  emit viewChanged();
}

void TimelineViewState::setWidth(int width) {
  render::Viewport v = m_view;
  v.width = width;
  setViewport(v);
}

void TimelineViewState::setExtent(int64_t begin, int64_t end) {
  m_begin = std::min<int64_t>(0, begin);
  m_end = std::max<int64_t>(m_begin + 1, end);
}

void TimelineViewState::zoomAt(double x, double factor) { setViewport(m_view.zoomedAt(x, factor)); }

void TimelineViewState::panPixels(double dx) {
  render::Viewport v = m_view;
  v.start += static_cast<int64_t>(std::llround(dx * v.nsPerPx));
  setViewport(v);
}

void TimelineViewState::showRange(int64_t from, int64_t to, double margin) {
  if (to <= from) to = from + 1;
  const double len = static_cast<double>(to - from);
  render::Viewport v = m_view;
  v.nsPerPx = len * (1.0 + 2 * margin) / std::max(1, v.width);
  v.start = from - static_cast<int64_t>(std::llround(len * margin));
  setViewport(v);
}

void TimelineViewState::setSelection(std::optional<Range> range) {
  if (range && range->second < range->first) std::swap(range->first, range->second);
  if (range == m_selection) return;
  m_selection = range;
  emit selectionChanged();
}

void TimelineViewState::commitSelection() {
  if (m_selection && m_selection->second - m_selection->first <= 0) {
    m_selection.reset();
    emit selectionChanged();
  }
  emit selectionCommitted();
}

void TimelineViewState::setCursor(std::optional<int64_t> t) {
  if (t == m_cursor) return;
  m_cursor = t;
  emit cursorChanged();
}

// ---------------------------------------------------------------- overlays

namespace {
void paintOverlays(QPainter& p, const QRect& area, const TimelineViewState& state) {
  const render::Palette& pal = render::palette();
  const render::Viewport& v = state.viewport();
  p.save();
  p.setClipRect(area);
  if (const auto& sel = state.selection()) {
    const double x0 = area.left() + v.xOf(sel->first);
    const double x1 = area.left() + v.xOf(sel->second);
    p.fillRect(QRectF(x0, area.top(), std::max(1.0, x1 - x0), area.height()), pal.selection);
    p.setPen(pal.selectionEdge);
    p.drawLine(QPointF(x0, area.top()), QPointF(x0, area.bottom()));
    p.drawLine(QPointF(x1, area.top()), QPointF(x1, area.bottom()));
  }
  if (const auto c = state.cursor()) {
    const double x = area.left() + v.xOf(*c);
    p.setPen(pal.cursor);
    p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
  }
  p.restore();
}

QString html(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())).toHtmlEscaped(); }
}  // namespace

std::pair<int64_t, int64_t> sliceSpan(const core::TraceModel& m, const SliceRef& s) {
  if (s.userSlice) {
    if (s.row >= m.userSlices.size()) return {0, 0};
    return {m.userSlices.ts[s.row], m.userSlices.ts[s.row] + m.userSlices.dur[s.row]};
  }
  if (s.type == RowType::Cpu) {
    if (s.cpu < 0 || s.cpu >= m.cpuCount() || s.row >= m.cpuSlices[static_cast<size_t>(s.cpu)].size()) return {0, 0};
    const auto& sl = m.cpuSlices[static_cast<size_t>(s.cpu)];
    return {sl.ts[s.row], sl.end(s.row)};
  }
  if (s.row >= m.threadStates.size()) return {0, 0};
  return {m.threadStates.ts[s.row], m.stateEnd(s.row)};
}

// ---------------------------------------------------------------- ruler

TimeRuler::TimeRuler(TimelineViewState* view, QWidget* parent) : QWidget(parent), m_view(view) {
  setFixedHeight(28);
  setMouseTracking(false);
  setToolTip(tr("Drag to select a time range; click to clear it"));
  connect(view, &TimelineViewState::viewChanged, this, qOverload<>(&QWidget::update));
  connect(view, &TimelineViewState::selectionChanged, this, qOverload<>(&QWidget::update));
  connect(view, &TimelineViewState::cursorChanged, this, qOverload<>(&QWidget::update));
}

void TimeRuler::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const render::Viewport& v = m_view->viewport();
  const QRect r(0, 0, std::min(width(), kGutterWidth + v.width), height());
  render::paintRuler(p, r, kGutterWidth, v);
  if (width() > r.width()) p.fillRect(QRect(r.right() + 1, 0, width() - r.width(), height()), render::palette().rulerBack);
  paintOverlays(p, QRect(kGutterWidth, 0, v.width, height()), *m_view);
}

void TimeRuler::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton || e->position().x() < kGutterWidth) return;
  m_dragFrom = m_view->viewport().timeAt(e->position().x() - kGutterWidth);
}

void TimeRuler::mouseMoveEvent(QMouseEvent* e) {
  if (!m_dragFrom) return;
  const int64_t t = m_view->viewport().timeAt(e->position().x() - kGutterWidth);
  m_view->setSelection(TimelineViewState::Range{*m_dragFrom, t});
}

void TimeRuler::mouseReleaseEvent(QMouseEvent* e) {
  if (!m_dragFrom) return;
  const int64_t t = m_view->viewport().timeAt(e->position().x() - kGutterWidth);
  if (std::abs(m_view->viewport().xOf(t) - m_view->viewport().xOf(*m_dragFrom)) < 3)
    m_view->setSelection(std::nullopt);
  m_dragFrom.reset();
  m_view->commitSelection();
}

// ---------------------------------------------------------------- pane

TimelinePane::TimelinePane(const Run& run, TimelineViewState* view, QThreadPool* pool, QWidget* parent)
    : QWidget(parent), m_run(run), m_runId(run.id), m_view(view), m_pool(pool),
      m_watcher(new QFutureWatcher<render::PaneDrawList>(this)),
      m_heatWatcher(new QFutureWatcher<QImage>(this)) {
  // Few CPUs get taller rows (labels and folded busy bars read better), many
  // get compact rows in groups, with the overview heat map above them.
  const core::TraceModel& model = run.render->model();
  m_rowHeight = render::TimelineLayout::defaultRowHeight(model.cpuCount());
  m_layout = render::TimelineLayout(model, {m_rowHeight, render::TimelineLayout::defaultLevels(model), false});
  m_rows = m_layout.rows();
  m_heatMetric = render::TimelineLayout::defaultHeatmap(model);
  connect(m_heatWatcher, &QFutureWatcherBase::finished, this, [this] {
    m_heatImage = m_heatWatcher->result();
    update();
    ensureHeatmap();
    emit drawListUpdated();
  });
  m_subtitle = render::runSubtitle(run.render->model());
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  updateHeight();
  connect(m_watcher, &QFutureWatcherBase::finished, this, &TimelinePane::onDrawListDone);
  connect(view, &TimelineViewState::viewChanged, this, [this] {
    ensureDrawList();
    update();
  });
  connect(view, &TimelineViewState::selectionChanged, this, qOverload<>(&QWidget::update));
  connect(view, &TimelineViewState::cursorChanged, this, qOverload<>(&QWidget::update));
}

TimelinePane::~TimelinePane() = default;

void TimelinePane::updateRun(const Run& run) {
  const bool moved = run.render != m_run.render;
  m_run = run;
  if (moved) {
    // Draw lists hold pixels relative to the old origin.
    ++m_version;
    m_hasList = false;
    ensureDrawList();
  }
  update();
}

int TimelinePane::headerHeight() const { return render::kPaneHeaderHeight; }

QRect TimelinePane::heatmapRect() const {
  if (!m_heatMetric || m_collapsed) return {};
  return QRect(kGutterWidth, headerHeight(), std::max(1, width() - kGutterWidth), kHeatmapHeight);
}

QRect TimelinePane::timelineRect() const {
  const int top = headerHeight() + (m_heatMetric && !m_collapsed ? kHeatmapHeight : 0);
  return QRect(kGutterWidth, top, std::max(1, width() - kGutterWidth), m_collapsed ? 0 : render::rowsHeight(m_rows));
}

void TimelinePane::updateHeight() {
  const QRect area = timelineRect();
  setFixedHeight(m_collapsed ? headerHeight() : area.top() + area.height());
}

void TimelinePane::relayoutRows() {
  m_rows = render::withStrips(m_layout.rows(), m_run.render->model(), m_strips);
  ++m_version;
  updateHeight();
  ensureDrawList();
  update();
}

bool TimelinePane::hasTaskRow(core::Utid utid) const { return m_layout.hasTask(utid); }

void TimelinePane::addTaskRow(core::Utid utid) {
  if (hasTaskRow(utid) || !utid.isValid() || utid.value >= m_run.render->model().threadCount()) return;
  m_layout.addTask(utid);
  relayoutRows();
}

void TimelinePane::removeTaskRow(core::Utid utid) {
  if (!hasTaskRow(utid)) return;
  m_layout.removeTask(utid);
  relayoutRows();
}

void TimelinePane::setStrips(const render::StripOptions& strips) {
  m_strips = strips;
  relayoutRows();
}

void TimelinePane::toggleGroup(int group) {
  m_layout.toggle(group);
  relayoutRows();
}

void TimelinePane::setAllGroupsCollapsed(bool collapsed) {
  m_layout.setAllCollapsed(collapsed);
  relayoutRows();
}

void TimelinePane::setCpuGrouping(std::vector<render::GroupLevel> levels) {
  render::TimelineLayout layout(m_run.render->model(), {m_rowHeight, std::move(levels), false});
  for (core::Utid u : m_layout.tasks()) layout.addTask(u);
  m_layout = std::move(layout);
  relayoutRows();
}

void TimelinePane::setRowHeight(int rowHeight) {
  m_rowHeight = rowHeight;
  m_layout.setRowHeight(rowHeight);
  relayoutRows();
}

void TimelinePane::setHeatmap(std::optional<render::HeatMetric> metric) {
  if (metric == m_heatMetric) return;
  m_heatMetric = metric;
  m_heatImage = QImage();
  m_heatSize = QSize();
  updateHeight();
  ensureHeatmap();
  update();
}

void TimelinePane::ensureHeatmap() {
  const QRect r = heatmapRect();
  if (r.isEmpty() || m_heatWatcher->isRunning() || (r.size() == m_heatSize && !m_heatImage.isNull())) return;
  m_heatSize = r.size();
  auto runData = m_run.render;
  const auto cpus = m_layout.cpuOrder();
  const int64_t from = m_view->begin();
  const int64_t to = std::max<int64_t>(m_view->span(), from + 1);
  const render::HeatMetric metric = *m_heatMetric;
  const QSize size = r.size();
  m_heatWatcher->setFuture(QtConcurrent::run(m_pool, [runData, cpus, from, to, size, metric] {
    return render::computeHeatmap(*runData, cpus, from, to, size, metric);
  }));
}

void TimelinePane::navigateFromHeatmap(const QPoint& pos) {
  const QRect r = heatmapRect();
  if (r.isEmpty() || !r.contains(pos)) return;
  const int64_t from = m_view->begin();
  const double len = static_cast<double>(std::max<int64_t>(m_view->span(), from + 1) - from);
  const auto t = from + static_cast<int64_t>(len * (pos.x() - r.left()) / std::max(1, r.width()));
  render::Viewport v = m_view->viewport();
  v.start = t - static_cast<int64_t>(std::llround(v.width * v.nsPerPx / 2));
  m_view->setViewport(v);
  // The CPU under the mouse, in row order: bring its row (or its group's) into view.
  const auto cpus = m_layout.cpuOrder();
  if (cpus.empty()) return;
  const auto k = std::clamp<size_t>(static_cast<size_t>((pos.y() - r.top()) * static_cast<double>(cpus.size()) / r.height()), 0,
                                   cpus.size() - 1);
  const int cpu = cpus[k];
  int best = -1;
  for (size_t i = 0; i < m_rows.size(); ++i) {
    const TimelineRow& row = m_rows[i];
    if (row.type == RowType::Cpu && row.cpu == cpu) best = static_cast<int>(i);
    if (best < 0 && row.type == RowType::Summary && row.memberCpus && row.members &&
        std::find(row.members->begin(), row.members->end(), static_cast<uint32_t>(cpu)) != row.members->end())
      best = static_cast<int>(i);
  }
  if (best >= 0) emit rowScrollRequested(rowTop(best));
}

void TimelinePane::setHighlight(std::shared_ptr<const render::HighlightSet> highlight) {
  m_highlight = std::move(highlight);
  ++m_version;
  ensureDrawList();
  update();
}

void TimelinePane::setSelectedSlice(std::optional<SliceRef> slice) {
  if (slice && slice->runId != m_runId) slice.reset();
  if (slice == m_selected) return;
  m_selected = slice;
  update();
}

void TimelinePane::setOverlay(std::shared_ptr<const TimelineOverlay> overlay) {
  m_overlay = std::move(overlay);
  update();
}

void TimelinePane::setCollapsed(bool collapsed) {
  m_collapsed = collapsed;
  updateHeight();
  update();
}

bool TimelinePane::drawListReady() const {
  const render::Viewport& v = m_view->viewport();
  return m_hasList && m_listVersion == m_version && m_list.view.nsPerPx == v.nsPerPx && v.start >= m_list.view.start &&
         v.end() <= m_list.view.end();
}

void TimelinePane::ensureDrawList() {
  if (drawListReady() || width() <= kGutterWidth) return;
  if (m_watcher->isRunning()) {
    m_pending = true;
    return;
  }
  // One screen of margin on each side: panning by up to a screen reuses the list.
  const render::Viewport& v = m_view->viewport();
  render::Viewport ext = v;
  ext.start = v.start - static_cast<int64_t>(std::llround(v.width * v.nsPerPx));
  ext.width = v.width * 3;
  m_jobVersion = m_version;
  auto runData = m_run.render;
  auto rows = m_rows;
  auto highlight = m_highlight;
  m_watcher->setFuture(QtConcurrent::run(m_pool, [runData, rows, ext, highlight] {
    return render::computePane(*runData, rows, ext, highlight.get());
  }));
}

void TimelinePane::onDrawListDone() {
  m_list = m_watcher->result();
  m_listVersion = m_jobVersion;
  m_hasList = true;
  update();
  if (m_pending || !drawListReady()) {
    m_pending = false;
    ensureDrawList();
  }
  emit drawListUpdated();
}

void TimelinePane::paintEvent(QPaintEvent* e) {
  QPainter p(this);
  const core::TraceModel& m = m_run.render->model();
  const QString title = m_collapsed ? QStringLiteral("\u25b8 ") + m_run.title : QStringLiteral("\u25be ") + m_run.title;
  render::paintPaneHeader(p, QRect(0, 0, width(), headerHeight()), title, m_subtitle, m_run.isReplay(),
                          m_run.warning.isEmpty() ? QString() : tr("partial import: %1").arg(m_run.warning));
  if (m_collapsed) return;
  const QRect area = timelineRect();
  const QRect exposed = e->rect();
  if (const QRect heat = heatmapRect(); !heat.isEmpty() && heat.intersects(exposed)) {
    // Where the main view is: its time range on the whole trace.
    const int64_t from = m_view->begin();
    const double len = static_cast<double>(std::max<int64_t>(m_view->span(), from + 1) - from);
    const render::Viewport& v = m_view->viewport();
    render::paintHeatOverview(p, QRect(0, heat.top(), heat.right() + 1, heat.height()), kGutterWidth, *m_heatMetric,
                              m_heatImage, (v.start - from) / len, (v.end() - from) / len);
  }
  render::paintRowBackgrounds(p, area, m_rows, exposed);
  if (m_hasList) {
    render::paintPane(p, area, m_rows, m_list, m_view->viewport(), exposed);
  } else {
    p.setPen(render::palette().gutterSubText);
    p.drawText(area, Qt::AlignCenter, tr("preparing\u2026"));
  }
  render::paintGutter(p, QRect(0, area.top(), kGutterWidth, area.height()), m_rows, exposed);
  if (m_run.marker) {
    const double x = area.left() + m_view->viewport().xOf(*m_run.marker - m_run.render->origin);
    if (x >= area.left() && x <= area.right()) {
      p.save();
      p.setRenderHint(QPainter::Antialiasing);
      const QColor c(0xc2, 0x18, 0x5b);
      p.setPen(QPen(c, 1.5, Qt::DashLine));
      p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
      p.setPen(Qt::NoPen);
      p.setBrush(c);
      const QPointF tri[3] = {{x - 5, static_cast<double>(area.top())}, {x + 5, static_cast<double>(area.top())},
                              {x, area.top() + 7.0}};
      p.drawPolygon(tri, 3);
      p.restore();
    }
  }
  if (m_selected) {
    // One row looked up, not a walk: the frame around the clicked slice.
    int64_t ts = 0, end = 0;
    int rowIndex = -1;
    for (size_t i = 0; i < m_rows.size(); ++i) {
      const TimelineRow& r = m_rows[i];
      if (m_selected->type == RowType::Cpu && r.type == RowType::Cpu && r.cpu == m_selected->cpu) rowIndex = static_cast<int>(i);
      if (m_selected->type == RowType::Task && r.type == RowType::Task && r.utid == m_selected->utid) rowIndex = static_cast<int>(i);
    }
    std::tie(ts, end) = sliceSpan(m, *m_selected);
    if (rowIndex >= 0) {
      const render::Viewport& v = m_view->viewport();
      const double x0 = area.left() + v.xOf(ts - m_run.render->origin);
      const double x1 = std::max(x0 + 3, area.left() + v.xOf(end - m_run.render->origin));
      p.save();
      p.setClipRect(area);
      p.setPen(QPen(QColor(0x10, 0x10, 0x10), 2));
      p.setBrush(Qt::NoBrush);
      p.drawRect(QRectF(x0 - 1, rowTop(rowIndex), x1 - x0 + 2, m_rows[static_cast<size_t>(rowIndex)].height - 1));
      p.restore();
    }
  }
  if (m_overlay) paintTimelineOverlay(p, area, m_rows, *m_overlay, m_view->viewport(), m_run.render->origin);
  paintOverlays(p, area, *m_view);
}

void TimelinePane::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  ensureDrawList();
  ensureHeatmap();
}

int TimelinePane::rowTop(int row) const {
  int y = timelineRect().top();
  for (int i = 0; i < row && i < static_cast<int>(m_rows.size()); ++i) y += m_rows[static_cast<size_t>(i)].height;
  return y;
}

int TimelinePane::rowAtY(int y) const {
  if (m_collapsed) return -1;
  int top = timelineRect().top();
  for (size_t i = 0; i < m_rows.size(); ++i) {
    if (y >= top && y < top + m_rows[i].height) return static_cast<int>(i);
    top += m_rows[i].height;
  }
  return -1;
}

int64_t TimelinePane::absTimeAtX(double x) const {
  return m_run.render->origin + m_view->viewport().timeAt(x - kGutterWidth);
}

std::optional<uint32_t> TimelinePane::trackRowAt(int row, double x, const core::TimelineTrack** track,
                                                 std::shared_ptr<const core::TimelineTrack>* hold) const {
  if (row < 0 || row >= static_cast<int>(m_rows.size()) || x < kGutterWidth) return std::nullopt;
  const TimelineRow& r = m_rows[static_cast<size_t>(row)];
  if (r.type != RowType::Cpu && r.type != RowType::Task) return std::nullopt;  // counter strips, group headers and summaries have no slices
  if (r.type == RowType::Cpu) {
    *track = &m_run.render->index->cpuTrack(r.cpu);
  } else {
    *hold = m_run.render->index->threadTrack(r.utid);
    *track = hold->get();
  }
  const auto slack = static_cast<int64_t>(std::llround(2.0 * m_view->viewport().nsPerPx));
  return (*track)->rowNear(absTimeAtX(x), slack);
}

std::optional<uint32_t> TimelinePane::userSliceAt(const QPoint& pos) const {
  const int row = rowAtY(pos.y());
  if (row < 0 || pos.x() < kGutterWidth) return std::nullopt;
  const TimelineRow& r = m_rows[static_cast<size_t>(row)];
  const double y = static_cast<double>(pos.y() - rowTop(row)) / std::max(1, r.height);
  const auto slack = static_cast<int64_t>(std::llround(2.0 * m_view->viewport().nsPerPx));
  return render::userSliceAt(*m_run.render, r, y, absTimeAtX(pos.x()), slack);
}

std::optional<SliceRef> TimelinePane::sliceAt(const QPoint& pos) const {
  const int row = rowAtY(pos.y());
  if (const auto u = userSliceAt(pos)) {
    const TimelineRow& r = m_rows[static_cast<size_t>(row)];
    return SliceRef{m_runId, r.type, -1, r.utid, *u, true};
  }
  const core::TimelineTrack* track = nullptr;
  std::shared_ptr<const core::TimelineTrack> hold;
  const auto i = trackRowAt(row, pos.x(), &track, &hold);
  if (!i) return std::nullopt;
  const TimelineRow& r = m_rows[static_cast<size_t>(row)];
  SliceRef ref;
  ref.runId = m_runId;
  ref.type = r.type;
  ref.cpu = r.cpu;
  ref.row = track->sourceRow(*i);
  const core::TraceModel& m = m_run.render->model();
  ref.utid = r.type == RowType::Cpu ? m.cpuSlices[static_cast<size_t>(r.cpu)].utid[ref.row] : r.utid;
  return ref;
}

QString TimelinePane::toolTipAt(const QPoint& pos) const {
  const core::TraceModel& m = m_run.render->model();
  if (pos.y() < headerHeight()) {
    Run copy = m_run;
    return runToolTip(copy);
  }
  const int row = rowAtY(pos.y());
  if (row < 0) return {};
  const TimelineRow& r = m_rows[static_cast<size_t>(row)];
  if (r.type == RowType::Group || r.type == RowType::Summary) {
    const QString what = r.type == RowType::Group ? tr("click to collapse into its summary rows")
                         : r.summary == render::SummaryKind::Busy
                             ? (r.memberCpus ? tr("busy share of its CPUs over time (bar height); click to expand")
                                             : tr("share of its threads running over time; click to expand"))
                             : (r.memberCpus ? tr("runnable tasks waiting on its CPUs; full height: one per CPU")
                                             : tr("share of its threads runnable but waiting; full height: all"));
    return QStringLiteral("<b>%1</b> %2<br>%3").arg(r.label.toHtmlEscaped(), r.sublabel.toHtmlEscaped(), what);
  }
  if (pos.x() < kGutterWidth) {
    if (r.type == RowType::Cpu) {
      QString s = QStringLiteral("<b>CPU %1</b>").arg(r.cpu);
      if (r.smt) {
        QStringList sib;
        for (int c : m.topology.siblingsOf(r.cpu)) sib << QString::number(c);
        s += tr("<br>core %1, thread %2; SMT siblings: %3").arg(r.core).arg(r.thread).arg(sib.join(QStringLiteral(", ")));
      }
      return s;
    }
    if (r.type != RowType::Task) return tr("<b>%1</b> %2").arg(r.label.trimmed().toHtmlEscaped(), r.sublabel.toHtmlEscaped());
    return tr("<b>%1</b> (tid %2): task states<br>running \u00b7 runnable \u00b7 blocked \u00b7 sleeping")
        .arg(r.label.toHtmlEscaped())
        .arg(m.threads.tid[r.utid.value]);
  }
  if (r.counter >= 0) return counterToolTip(r, absTimeAtX(pos.x()));
  if (const auto u = userSliceAt(pos)) {
    const core::UserSliceTable& us = m.userSlices;
    const auto name = m.strings.get(us.name[*u]);
    if (us.kind[*u] == core::UserSliceKind::Instant)
      return tr("<b>%1</b><br>marker at %2").arg(html(name), render::formatDuration(us.ts[*u] - m_run.render->origin));
    return tr("<b>%1</b><br>start %2, duration %3%4, depth %5")
        .arg(html(name), render::formatDuration(us.ts[*u] - m_run.render->origin), render::formatDuration(us.dur[*u]),
             (us.flags[*u] & core::kUserSliceOpenAtEnd) ? tr(" (no end traced)") : QString())
        .arg(us.depth[*u]);
  }
  const core::TimelineTrack* track = nullptr;
  std::shared_ptr<const core::TimelineTrack> hold;
  const auto i = trackRowAt(row, pos.x(), &track, &hold);
  const render::Viewport& v = m_view->viewport();
  // A slice wide enough to be drawn alone is what the mouse is on, even where
  // far-zoom bins lie under it.
  const bool wide = i && static_cast<double>(track->dur(*i)) >= core::TimelineTrack::kMinVisiblePx * v.nsPerPx;
  // Zoomed far out a pixel holds many slices: describe the fold under the mouse.
  const int64_t t = absTimeAtX(pos.x());
  const auto half = static_cast<int64_t>(std::llround(1.5 * v.nsPerPx));
  std::vector<core::DrawItem> items;
  if (track && !wide) track->query(t - half, t + half + 1, v.nsPerPx, items);
  for (const core::DrawItem& it : items) {
    if (it.kind != core::DrawKind::Folded || it.ts > t + half || it.end < t - half) continue;
    QString s = tr("<b>%L1 slices</b> folded (%2 \u2013 %3)").arg(it.count)
                    .arg(render::formatDuration(it.ts - m_run.render->origin), render::formatDuration(it.end - m_run.render->origin));
    s += tr("<br>running %1%").arg(std::lround(it.share[0] * 100));
    if (r.type == RowType::Cpu) {
      if (it.share[4] > 0) s += tr(", forced idle %1%").arg(std::lround(it.share[4] * 100));
      if (it.dominantIdx != core::TimelineTrack::kNoRow) {
        const uint32_t src = track->sourceRow(it.dominantIdx);
        const auto& sl = m.cpuSlices[static_cast<size_t>(r.cpu)];
        s += tr("<br>longest: <b>%1</b> %2 (%3)").arg(html(m.comm(sl.utid[src]))).arg(m.threads.tid[sl.utid[src].value])
                 .arg(render::formatDuration(sl.dur[src]));
      }
    } else {
      s += tr(", runnable %1%, blocked %2%, sleeping %3%").arg(std::lround(it.share[1] * 100))
               .arg(std::lround(it.share[3] * 100)).arg(std::lround(it.share[2] * 100));
    }
    return s + tr("<br><i>zoom in to see them one by one</i>");
  }
  if (!i) return {};
  const uint32_t src = track->sourceRow(*i);
  if (r.type == RowType::Cpu) {
    const auto& sl = m.cpuSlices[static_cast<size_t>(r.cpu)];
    const core::Utid u = sl.utid[src];
    QString s;
    switch (sl.kind[src]) {
      case core::SliceKind::Task:
        s = QStringLiteral("<b>%1</b> tid %2").arg(html(m.comm(u))).arg(m.threads.tid[u.value]);
        if (m.threads.tgid[u.value] >= 0) s += tr(" (tgid %1)").arg(m.threads.tgid[u.value]);
        if (sl.prio[src] != core::kPrioUnknown) s += tr(", prio %1").arg(sl.prio[src]);
        break;
      case core::SliceKind::ForcedIdle: s = tr("<b>forced idle</b> (core scheduling)"); break;
      case core::SliceKind::Lost: s = tr("<b>lost data</b>: the tracer dropped events here"); break;
      case core::SliceKind::Idle: s = tr("idle"); break;
    }
    s += tr("<br>start %1, duration %2").arg(render::formatDuration(sl.ts[src] - m_run.render->origin), render::formatDuration(sl.dur[src]));
    if (sl.kind[src] == core::SliceKind::Task) {
      s += tr("<br>ended: %1").arg(QString::fromStdString(core::describeSliceEnd(sl, src)));
      if (m.threads.cookie[u.value]) s += tr("<br>cookie 0x%1").arg(m.threads.cookie[u.value], 0, 16);
    }
    return s;
  }
  const auto state = m.threadStates.state[src];
  return tr("<b>%1</b> on CPU %2<br>start %3, duration %4")
      .arg(QString::fromUtf8(core::toString(state).data()))
      .arg(m.threadStates.cpu[src])
      .arg(render::formatDuration(m.threadStates.ts[src] - m_run.render->origin), render::formatDuration(m.stateEnd(src) - m.threadStates.ts[src]));
}

QString TimelinePane::counterToolTip(const TimelineRow& r, int64_t absTs) const {
  const core::TraceModel& m = m_run.render->model();
  const auto [b, e] = m.counters.rowsOf(static_cast<size_t>(r.counter));
  const auto at = std::upper_bound(m.counters.ts.begin() + b, m.counters.ts.begin() + e, absTs) - m.counters.ts.begin();
  if (at == b) return tr("%1: no sample yet").arg(render::counterName(m, static_cast<size_t>(r.counter)).toHtmlEscaped());
  const double v = m.counters.value[static_cast<size_t>(at - 1)];
  const QString since = render::formatDuration(m.counters.ts[static_cast<size_t>(at - 1)] - m_run.render->origin);
  switch (r.type) {
    case RowType::CpuFrequency: return tr("CPU %1 at <b>%2 MHz</b> since %3").arg(r.cpu).arg(std::llround(v / 1000)).arg(since);
    case RowType::CpuIdle:
      return v < 0 ? tr("CPU %1 <b>not idle</b> since %2").arg(r.cpu).arg(since)
                   : tr("CPU %1 in idle state <b>%2</b> since %3").arg(r.cpu).arg(std::llround(v)).arg(since);
    default:
      if (r.utid.isValid())  // a task's own signal
        return tr("%1 of %2 (tid %3) = <b>%4</b> since %5")
            .arg(render::counterName(m, static_cast<size_t>(r.counter)).toHtmlEscaped(),
                 QString::fromUtf8(m.comm(r.utid).data(), static_cast<qsizetype>(m.comm(r.utid).size())).toHtmlEscaped())
            .arg(m.threads.tid[r.utid.value])
            .arg(v)
            .arg(since);
      return tr("%1 %2 = <b>%3</b> since %4")
          .arg(render::counterName(m, static_cast<size_t>(r.counter)).toHtmlEscaped(), r.sublabel.toHtmlEscaped())
          .arg(v)
          .arg(since);
  }
}

bool TimelinePane::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* he = static_cast<QHelpEvent*>(e);
    const QString text = toolTipAt(he->pos());
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(he->globalPos(), text, this);
    return true;
  }
  return QWidget::event(e);
}

void TimelinePane::mousePressEvent(QMouseEvent* e) {
  setFocus(Qt::MouseFocusReason);
  if (e->button() != Qt::LeftButton) return;
  m_pressPos = e->position().toPoint();
  m_moved = false;
  if (m_pressPos.y() < headerHeight()) {
    m_drag = Drag::None;
    return;
  }
  if (heatmapRect().contains(m_pressPos)) {
    m_drag = Drag::None;
    m_heatPress = m_pressPos;
    return;
  }
  if (const int row = rowAtY(m_pressPos.y()); row >= 0) {
    const TimelineRow& r = m_rows[static_cast<size_t>(row)];
    if ((r.type == RowType::Group || r.type == RowType::Summary) && m_pressPos.x() < kGutterWidth) {
      m_drag = Drag::None;
      toggleGroup(r.group);
      return;
    }
  }
  if (e->modifiers() & Qt::ShiftModifier) {
    m_drag = Drag::Select;
    m_selectFrom = m_view->viewport().timeAt(e->position().x() - kGutterWidth);
    m_view->setSelection(TimelineViewState::Range{m_selectFrom, m_selectFrom});
  } else {
    m_drag = Drag::Pan;
    m_pressStart = m_view->viewport().start;
    setCursor(Qt::ClosedHandCursor);
  }
}

void TimelinePane::mouseMoveEvent(QMouseEvent* e) {
  const double x = e->position().x();
  if ((e->position().toPoint() - m_pressPos).manhattanLength() > 3) m_moved = true;
  if (m_drag == Drag::Pan && m_moved) {
    render::Viewport v = m_view->viewport();
    v.start = m_pressStart - static_cast<int64_t>(std::llround((x - m_pressPos.x()) * v.nsPerPx));
    m_view->setViewport(v);
  } else if (m_drag == Drag::Select) {
    m_view->setSelection(TimelineViewState::Range{m_selectFrom, m_view->viewport().timeAt(x - kGutterWidth)});
  }
  m_view->setCursor(x >= kGutterWidth ? std::optional<int64_t>(m_view->viewport().timeAt(x - kGutterWidth)) : std::nullopt);
  emit hovered(m_runId);
}

void TimelinePane::mouseReleaseEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  if (m_heatPress) {
    // A drag across the heat map zooms the main view to that time range; a click centres it.
    const QPoint from = *m_heatPress;
    m_heatPress.reset();
    const QRect heat = heatmapRect();
    const int x = std::clamp(e->position().toPoint().x(), heat.left(), heat.right());
    if (std::abs(x - from.x()) > 3 && !heat.isEmpty()) {
      const int64_t begin = m_view->begin();
      const double len = static_cast<double>(std::max<int64_t>(m_view->span(), begin + 1) - begin);
      auto timeAt = [&](int px) { return begin + static_cast<int64_t>(len * (px - heat.left()) / std::max(1, heat.width())); };
      m_view->showRange(timeAt(std::min(x, from.x())), timeAt(std::max(x, from.x())));
    } else {
      navigateFromHeatmap(from);
    }
    return;
  }
  unsetCursor();
  const Drag drag = m_drag;
  m_drag = Drag::None;
  if (drag == Drag::Select) {
    m_view->commitSelection();
    return;
  }
  if (drag == Drag::Pan && !m_moved) {
    if (auto s = sliceAt(e->position().toPoint()))
      emit sliceClicked(*s);
    else
      emit sliceClicked(SliceRef{});
  }
}

void TimelinePane::mouseDoubleClickEvent(QMouseEvent* e) {
  if (e->position().y() < headerHeight()) {
    setCollapsed(!m_collapsed);
    return;
  }
  if (auto s = sliceAt(e->position().toPoint())) zoomToSlice(*s);
}

void TimelinePane::zoomToSlice(const SliceRef& s) {
  const auto [ts, end] = sliceSpan(m_run.render->model(), s);
  m_view->showRange(ts - m_run.render->origin, end - m_run.render->origin, 0.25);
}

void TimelinePane::wheelEvent(QWheelEvent* e) {
  const QPoint d = e->angleDelta();
  if (e->modifiers() & (Qt::ShiftModifier | Qt::AltModifier)) {
    emit verticalScrollRequested(d.y() != 0 ? d.y() : d.x());
    e->accept();
    return;
  }
  const double x = std::max(0.0, e->position().x() - kGutterWidth);
  if (std::abs(d.x()) > std::abs(d.y())) {
    m_view->panPixels(-d.x() / 120.0 * m_view->viewport().width * 0.1);
  } else if (d.y() != 0) {
    m_view->zoomAt(x, std::pow(0.8, d.y() / 120.0));
  }
  e->accept();
}

void TimelinePane::leaveEvent(QEvent*) { m_view->setCursor(std::nullopt); }

void TimelinePane::contextMenuEvent(QContextMenuEvent* e) {
  QMenu menu(this);
  const core::TraceModel& m = m_run.render->model();
  const int row = rowAtY(e->pos().y());
  if (auto s = sliceAt(e->pos())) {
    if (s->utid != core::kIdleUtid) {
      const QString name = QStringLiteral("%1 %2").arg(html(m.comm(s->utid))).arg(m.threads.tid[s->utid.value]);
      const core::Utid u = s->utid;
      if (!hasTaskRow(u))
        menu.addAction(tr("Show task row for %1").arg(name), this, [this, u] { emit taskRowRequested(m_runId, u); });
      menu.addAction(tr("Highlight %1 in all runs").arg(name), this,
                     [this, u, &m] { emit highlightRequested(QString::number(m.threads.tid[u.value])); });
    }
    const SliceRef ref = *s;
    menu.addAction(tr("Zoom to slice"), this, [this, ref] { zoomToSlice(ref); });
  }
  if (row >= 0 && m_rows[static_cast<size_t>(row)].type == RowType::Task) {
    const core::Utid u = m_rows[static_cast<size_t>(row)].utid;
    menu.addAction(tr("Remove this task row"), this, [this, u] { removeTaskRow(u); });
  }
  if (!menu.isEmpty()) menu.addSeparator();
  if (e->pos().x() >= kGutterWidth) {
    const int64_t at = absTimeAtX(e->pos().x());
    menu.addAction(tr("Set marker here (align runs at markers)"), this, [this, at] { emit markerRequested(m_runId, at); });
  }
  if (row >= 0 && m_rows[static_cast<size_t>(row)].type != RowType::Group && m_rows[static_cast<size_t>(row)].type != RowType::Summary) {
    if (auto s = sliceAt(e->pos()); s && s->utid != core::kIdleUtid) {
      const int32_t tgid = m.threads.tgid[s->utid.value];
      if (tgid > 0)
        menu.addAction(tr("Show all threads of process %1").arg(tgid), this, [this, tgid, &m] {
          for (size_t u = 1; u < m.threadCount(); ++u)
            if (m.threads.tgid[u] == tgid) emit taskRowRequested(m_runId, core::Utid(static_cast<uint32_t>(u)));
        });
    }
  }
  QMenu* rowsMenu = menu.addMenu(tr("CPU rows"));
  QMenu* groupMenu = rowsMenu->addMenu(tr("Group by"));
  const std::pair<QString, std::vector<render::GroupLevel>> groupings[] = {
      {tr("Package, node and LLC"), {render::GroupLevel::Package, render::GroupLevel::Node, render::GroupLevel::Llc}},
      {tr("Package, node, LLC and core"),
       {render::GroupLevel::Package, render::GroupLevel::Node, render::GroupLevel::Llc, render::GroupLevel::Core}},
      {tr("Package"), {render::GroupLevel::Package}},
      {tr("NUMA node"), {render::GroupLevel::Node}},
      {tr("LLC"), {render::GroupLevel::Llc}},
      {tr("No groups"), {}}};
  for (const auto& [name, levels] : groupings) {
    const auto chosen = levels;
    groupMenu->addAction(name, this, [this, chosen] { setCpuGrouping(chosen); });
  }
  rowsMenu->addAction(tr("Collapse all groups"), this, [this] { setAllGroupsCollapsed(true); });
  rowsMenu->addAction(tr("Expand all groups"), this, [this] { setAllGroupsCollapsed(false); });
  QMenu* heightMenu = rowsMenu->addMenu(tr("Row height"));
  for (const auto& [name, h] : {std::pair{tr("Normal (22 px)"), 22}, std::pair{tr("Compact (8 px)"), 8},
                                std::pair{tr("Dense (4 px)"), 4}, std::pair{tr("Tiny (2 px)"), 2}}) {
    QAction* a = heightMenu->addAction(name, this, [this, h = h] { setRowHeight(h); });
    a->setCheckable(true);
    a->setChecked(m_rowHeight == h);
  }
  QMenu* heatMenu = rowsMenu->addMenu(tr("Overview heat map"));
  heatMenu->addAction(tr("Busy share"), this, [this] { setHeatmap(render::HeatMetric::Busy); });
  heatMenu->addAction(tr("Runnable waiting"), this, [this] { setHeatmap(render::HeatMetric::Waiting); });
  heatMenu->addAction(tr("Hidden"), this, [this] { setHeatmap(std::nullopt); });
  menu.addAction(tr("Zoom to fit"), m_view, &TimelineViewState::fitAll);
  menu.addAction(m_collapsed ? tr("Expand pane") : tr("Collapse pane"), this, [this] { setCollapsed(!m_collapsed); });
  menu.addAction(tr("Close run"), this, [this] { emit closeRequested(m_runId); });
  menu.exec(e->globalPos());
}

// ---------------------------------------------------------------- area

TimelineArea::TimelineArea(RunSet* runs, TimelineViewState* view, QWidget* parent)
    : QWidget(parent), m_runs(runs), m_view(view), m_pool(new QThreadPool(this)) {
  m_pool->setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->setSpacing(0);
  m_ruler = new TimeRuler(view, this);
  outer->addWidget(m_ruler);
  m_scroll = new QScrollArea(this);
  m_scroll->setWidgetResizable(true);
  m_scroll->setFrameShape(QFrame::NoFrame);
  m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  // Only when the rows do not fit: a bar that is always on takes the ruler's last label's room
  // for nothing. The view's width follows the viewport's (the Resize event filter below).
  m_scroll->setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  m_container = new QWidget(m_scroll);
  m_layout = new QVBoxLayout(m_container);
  m_layout->setContentsMargins(0, 0, 0, 0);
  m_layout->setSpacing(4);
  m_placeholder = new QLabel(m_container);
  m_placeholder->setAlignment(Qt::AlignCenter);
  m_placeholder->setWordWrap(true);
  m_placeholder->setText(
      tr("<h3>No trace open</h3><p>Open a scheduler trace with <b>File \u2192 Open</b> (Ctrl+O) or drop files here.</p>"
         "<p style='color:#666'>ftrace text (trace, trace_pipe, trace-cmd report, atrace/systrace), trace.dat v6/v7, "
         "perf.data, perf script text, CTF folders (LTTng, perf).</p>"));
  m_layout->addWidget(m_placeholder);
  m_layout->addStretch(1);
  m_scroll->setWidget(m_container);
  m_scroll->viewport()->installEventFilter(this);
  m_ruler->hide();
  outer->addWidget(m_scroll, 1);
  setFocusPolicy(Qt::StrongFocus);

  connect(runs, &RunSet::runAdded, this, &TimelineArea::onRunAdded);
  connect(runs, &RunSet::runRemoved, this, &TimelineArea::onRunRemoved);
  connect(runs, &RunSet::runChanged, this, [this](int id) {
    if (const Run* r = m_runs->run(id))
      if (auto* p = pane(id)) p->updateRun(*r);
    updateExtent();
  });
}

void TimelineArea::updateExtent() {
  const auto [lo, hi] = m_runs->extent();
  m_view->setExtent(lo, std::max<int64_t>(hi, 1));
}

TimelineArea::~TimelineArea() { m_pool->waitForDone(); }

TimelinePane* TimelineArea::pane(int runId) const {
  auto it = m_panes.find(runId);
  return it == m_panes.end() ? nullptr : it->second;
}

std::vector<TimelinePane*> TimelineArea::panes() const {
  std::vector<TimelinePane*> out;
  for (int id : m_runs->ids())
    if (auto* p = pane(id)) out.push_back(p);
  return out;
}

bool TimelineArea::allDrawListsReady() const {
  if (m_searchPending > 0) return false;
  for (auto* p : panes())
    if (!p->isCollapsed() && (!p->drawListReady() || !p->heatmapReady())) return false;
  return true;
}

void TimelineArea::onRunAdded(int id) {
  const Run* run = m_runs->run(id);
  if (!run || !run->render) return;
  auto* pane = new TimelinePane(*run, m_view, m_pool, m_container);
  m_panes[id] = pane;
  if (m_strips.any()) pane->setStrips(m_strips);
  connect(pane, &TimelinePane::sliceClicked, this, &TimelineArea::sliceClicked);
  connect(pane, &TimelinePane::drawListUpdated, this, &TimelineArea::drawListsUpdated);
  connect(pane, &TimelinePane::taskRowRequested, this, [this](int runId, core::Utid u) { showTaskRow(runId, u); });
  connect(pane, &TimelinePane::highlightRequested, this, &TimelineArea::setSearch);
  connect(pane, &TimelinePane::closeRequested, this, &TimelineArea::closeRunRequested);
  connect(pane, &TimelinePane::markerRequested, this, &TimelineArea::markerRequested);
  connect(pane, &TimelinePane::hovered, this, [this](int runId) { m_hoveredRun = runId; });
  connect(pane, &TimelinePane::rowScrollRequested, this, [this, pane](int y) {
    m_scroll->ensureVisible(0, pane->y() + y, 0, m_scroll->viewport()->height() / 3);
  });
  connect(pane, &TimelinePane::verticalScrollRequested, this, [this](int delta) {
    m_scroll->verticalScrollBar()->setValue(m_scroll->verticalScrollBar()->value() - delta);
  });
  // A replay shows the task rows its recording shows, so the two compare row for row.
  if (run->isReplay()) {
    if (TimelinePane* parent = this->pane(run->parentId)) {
      const core::TraceModel& pm = parent->run().render->model();
      const core::TraceModel& rm = run->render->model();
      for (const auto& r : parent->rows()) {
        if (r.type != RowType::Task) continue;
        for (size_t u = 1; u < rm.threadCount(); ++u)
          if (rm.threads.tid[u] == pm.threads.tid[r.utid.value] && rm.comm(core::Utid(static_cast<uint32_t>(u))) == pm.comm(r.utid)) {
            pane->addTaskRow(core::Utid(static_cast<uint32_t>(u)));
            break;
          }
      }
    }
  }
  const bool first = m_panes.size() == 1;
  updateExtent();
  relayout();
  syncWidth();
  if (first) m_view->fitAll();
  if (!m_search.isEmpty()) setSearch(m_search);
  pane->show();
}

void TimelineArea::setStrips(const render::StripOptions& strips) {
  m_strips = strips;
  for (auto& [id, p] : m_panes) p->setStrips(strips);
  relayout();
}

void TimelineArea::onRunRemoved(int id) {
  auto it = m_panes.find(id);
  if (it == m_panes.end()) return;
  m_layout->removeWidget(it->second);
  it->second->deleteLater();
  m_panes.erase(it);
  if (m_hoveredRun == id) m_hoveredRun = -1;
  updateExtent();
  relayout();
}

void TimelineArea::relayout() {
  // Order panes as the runs list does: each recording followed by its replays.
  for (auto& [id, p] : m_panes) m_layout->removeWidget(p);
  m_layout->removeWidget(m_placeholder);
  int pos = 0;
  for (int id : m_runs->ids())
    if (auto* p = pane(id)) m_layout->insertWidget(pos++, p);
  m_placeholder->setVisible(m_panes.empty());
  m_ruler->setVisible(!m_panes.empty());
  if (m_panes.empty()) m_layout->insertWidget(0, m_placeholder, 1);
}

void TimelineArea::syncWidth() {
  const int w = m_scroll->viewport()->width() - kGutterWidth;
  if (w > 10) m_view->setWidth(w);
}

void TimelineArea::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  syncWidth();
}

bool TimelineArea::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_scroll->viewport() && event->type() == QEvent::Resize) syncWidth();
  return QWidget::eventFilter(watched, event);
}

void TimelineArea::setSelectedSlice(std::optional<SliceRef> slice) {
  for (auto& [id, p] : m_panes) p->setSelectedSlice(slice);
}

void TimelineArea::setOverlay(int runId, std::shared_ptr<const TimelineOverlay> overlay) {
  for (auto& [id, p] : m_panes) p->setOverlay(id == runId ? overlay : nullptr);
}

void TimelineArea::showTaskRow(int runId, core::Utid utid) {
  auto* p = pane(runId);
  if (!p) return;
  p->addTaskRow(utid);
  // The same task (comm and tid) in the other runs too, so rows line up for comparison.
  const core::TraceModel& m = p->run().render->model();
  const auto comm = m.comm(utid);
  const int32_t tid = m.threads.tid[utid.value];
  for (auto& [id, other] : m_panes) {
    if (id == runId) continue;
    const core::TraceModel& om = other->run().render->model();
    for (size_t u = 1; u < om.threadCount(); ++u)
      if (om.threads.tid[u] == tid && om.comm(core::Utid(static_cast<uint32_t>(u))) == comm) {
        other->addTaskRow(core::Utid(static_cast<uint32_t>(u)));
        break;
      }
  }
}

void TimelineArea::setSearch(const QString& text) {
  m_search = text;
  const uint64_t generation = ++m_searchGeneration;
  m_searchPending = 0;
  if (text.trimmed().isEmpty()) {
    for (auto& [id, p] : m_panes) p->setHighlight(nullptr);
    emit searchApplied();
    return;
  }
  m_searchPending = static_cast<int>(m_panes.size());
  for (auto& [id, p] : m_panes) {
    auto runData = p->run().render;
    auto* watcher = new QFutureWatcher<std::shared_ptr<render::HighlightSet>>(this);
    const int runId = id;
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation, runId] {
      watcher->deleteLater();
      if (generation != m_searchGeneration) return;
      if (auto* pane = this->pane(runId)) pane->setHighlight(watcher->result());
      if (--m_searchPending == 0) emit searchApplied();
      emit drawListsUpdated();
    });
    watcher->setFuture(QtConcurrent::run(m_pool, [runData, text] { return render::HighlightSet::build(runData->model(), text); }));
  }
}

}  // namespace app::gui
