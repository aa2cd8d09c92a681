#include "app/gui/why_controller.h"

#include <QAction>
#include <QFutureWatcher>
#include <QMenu>
#include <QTabWidget>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <map>

#include "app/gui/latency_view.h"
#include "app/gui/run_set.h"
#include "app/gui/why_overlay.h"
#include "app/gui/why_view.h"

namespace app::gui {

namespace {
// Tasks of a critical path given rows of their own, most time on the path first.
constexpr size_t kPathRows = 8;

struct Computed {
  std::shared_ptr<const WhyResult> result;
  std::shared_ptr<TimelineOverlay> overlay;
};
}  // namespace

WhyController::WhyController(RunSet* runs, TimelineArea* area, TimelineViewState* view, QTabWidget* tabs,
                             QMenu* viewMenu, QObject* parent)
    : QObject(parent), m_runs(runs), m_area(area), m_view(view), m_tabs(tabs) {
  m_whyView = new WhyView(tabs);
  tabs->addTab(m_whyView, tr("Why"));
  tabs->setTabToolTip(tabs->indexOf(m_whyView), tr("Why the selected task waited: states, antagonists, wakers, critical path"));
  m_latencyView = new LatencyView(tabs);
  tabs->addTab(m_latencyView, tr("Latency"));
  viewMenu->addSeparator();
  m_arrows = viewMenu->addAction(tr("&Wakeup Arrows"));
  m_arrows->setToolTip(tr("Arrows from each wakeup of the selected task (and by it) to the switch-in it led to"));
  m_path = viewMenu->addAction(tr("Critical &Path"));
  m_path->setToolTip(tr("The selected task's critical path across the task rows"));
  for (QAction* a : {m_arrows, m_path}) {
    a->setCheckable(true);
    a->setChecked(true);
    connect(a, &QAction::toggled, this, &WhyController::applyOverlay);
  }
  connect(m_whyView, &WhyView::compareRunChanged, this, &WhyController::recompute);
  connect(m_whyView, &WhyView::jumpRequested, this, &WhyController::jumpTo);
  connect(m_latencyView, &LatencyView::jumpRequested, this, &WhyController::jumpTo);
  connect(m_view, &TimelineViewState::selectionCommitted, this, [this] {
    recompute();
    refreshLatency();
  });
  connect(m_runs, &RunSet::runAdded, this, [this] {
    updateCompareChoices();
    refreshLatency();
  });
  connect(m_runs, &RunSet::runChanged, this, &WhyController::refreshLatency);
  connect(m_runs, &RunSet::runRemoved, this, [this](int id) {
    if (m_task && m_task->first == id) {
      m_task.reset();
      m_overlay.reset();
      m_whyView->setMessage(tr("No task selected."));
    }
    updateCompareChoices();
    refreshLatency();
  });
}

bool WhyController::isIdle() const { return m_pending == 0 && !m_latencyView->isComputing(); }

void WhyController::selectSlice(const SliceRef& slice) {
  const Run* run = m_runs->run(slice.runId);
  if (!run || !run->model) return;
  core::Utid u = slice.utid;
  if (slice.type == render::RowType::Cpu && slice.cpu >= 0 && slice.cpu < run->model->cpuCount()) {
    const auto& s = run->model->cpuSlices[static_cast<size_t>(slice.cpu)];
    if (slice.row < s.size()) u = s.kind[slice.row] == core::SliceKind::Task ? s.utid[slice.row] : core::Utid();
  }
  if (!u.isValid() || u == core::kIdleUtid) return;
  selectTask(slice.runId, u);
}

void WhyController::selectTask(int runId, core::Utid utid) {
  m_task = std::make_pair(runId, utid);
  recompute();
}

std::optional<core::analysis::TimeRange> WhyController::rangeOf(int runId) const {
  const Run* run = m_runs->run(runId);
  if (!run || !run->model) return std::nullopt;
  const auto& sel = m_view->selection();
  if (!sel) return core::analysis::wholeTrace(*run->model);
  const int64_t origin = run->render ? run->render->origin : run->model->firstTs;
  return core::analysis::TimeRange{origin + sel->first, origin + sel->second};
}

void WhyController::updateCompareChoices() {
  std::vector<std::pair<int, QString>> choices;
  for (int id : m_runs->ids())
    if (const Run* r = m_runs->run(id); r && (!m_task || id != m_task->first)) choices.emplace_back(id, r->title);
  m_whyView->setCompareChoices(choices);
}

void WhyController::recompute() {
  updateCompareChoices();
  if (!m_task) return;
  const Run* run = m_runs->run(m_task->first);
  const auto range = rangeOf(m_task->first);
  if (!run || !range) return;
  const int otherId = m_whyView->compareRun();
  const Run* other = m_runs->run(otherId);
  const auto otherRange = other ? rangeOf(otherId) : std::nullopt;
  WhyResult base;
  base.runId = run->id;
  base.runTitle = run->title;
  base.model = run->model;
  std::optional<WhyResult::Comparison> otherBase;
  if (other && otherRange) {
    otherBase.emplace();
    otherBase->runId = other->id;
    otherBase->runTitle = other->title;
    otherBase->model = other->model;
  }
  const core::Utid utid = m_task->second;
  const auto r = *range;
  const auto otherR = otherRange.value_or(core::analysis::TimeRange{});
  m_whyView->setMessage(tr("Working out why %1 waited\u2026").arg(QString::fromUtf8(run->model->comm(utid).data())));
  const uint64_t generation = ++m_generation;
  ++m_pending;
  auto* watcher = new QFutureWatcher<Computed>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
    --m_pending;
    watcher->deleteLater();
    if (generation != m_generation) return;
    Computed c = watcher->result();
    m_whyView->setResult(c.result);
    m_overlay = c.overlay;
    m_overlayRun = c.result->runId;
    // Rows for the tasks the path runs through, so that it can be drawn across them.
    if (m_path->isChecked()) {
      std::map<uint32_t, int64_t> onPath;
      for (const auto& s : c.result->why.criticalPath.segments) onPath[s.utid.value] += s.length();
      std::vector<std::pair<int64_t, uint32_t>> byTime;
      for (const auto& [u, ns] : onPath) byTime.emplace_back(ns, u);
      std::sort(byTime.rbegin(), byTime.rend());
      m_area->showTaskRow(m_overlayRun, c.result->why.utid);
      for (size_t i = 0; i < byTime.size() && i < kPathRows; ++i)
        if (auto* pane = m_area->pane(m_overlayRun)) pane->addTaskRow(core::Utid(byTime[i].second));
    }
    applyOverlay();
  });
  watcher->setFuture(QtConcurrent::run([base, otherBase, utid, r, otherR]() mutable {
    base.why = core::analysis::explainTask(*base.model, utid, r);
    if (otherBase) {
      const core::Utid v = core::analysis::matchTask(*base.model, utid, *otherBase->model);
      if (v.isValid()) {
        otherBase->why = core::analysis::explainTask(*otherBase->model, v, otherR);
        otherBase->diff = core::analysis::diffWhy(*base.model, base.why, *otherBase->model, otherBase->why);
        base.other = std::move(otherBase);
      }
    }
    Computed c;
    c.overlay = buildTimelineOverlay(*base.model, utid, &base.why.criticalPath);
    c.result = std::make_shared<const WhyResult>(std::move(base));
    return c;
  }));
}

void WhyController::applyOverlay() {
  if (!m_overlay) return;
  auto shown = std::make_shared<TimelineOverlay>(*m_overlay);
  shown->showArrows = m_arrows->isChecked();
  shown->showPath = m_path->isChecked();
  m_area->setOverlay(m_overlayRun, shown);
}

void WhyController::refreshLatency() {
  std::vector<LatencyView::RunChoice> choices;
  for (int id : m_runs->ids()) {
    const Run* r = m_runs->run(id);
    if (!r || !r->model) continue;
    choices.push_back({id, r->title, r->model, *rangeOf(id)});
  }
  m_latencyView->setRuns(choices);
}

void WhyController::jumpTo(int runId, core::Utid utid, int64_t from, int64_t to) {
  const Run* run = m_runs->run(runId);
  if (!run || !run->render) return;
  const int64_t origin = run->render->origin;
  const int64_t len = std::max<int64_t>(to - from, 1000);
  m_view->showRange(from - origin - len, to - origin + len);
  m_area->showTaskRow(runId, utid);
  m_view->setCursor(from - origin);
}

}  // namespace app::gui
