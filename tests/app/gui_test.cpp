// GUI smoke tests, offscreen: the item models pass QAbstractItemModelTester;
// the main window opens synthetic and real traces, zooms, selects a range that
// the statistics follow, finds tasks, shows a clicked slice's details, replays
// (through a fake backend, and the real one when built) and closes runs; bad
// files give a message, never a crash. Comparison: two traces opened as a
// comparison, aligned at markers, the Diff tab sorted, a report exported from
// the GUI with the same content as `schedlab-cli report`, files dropped on the window.
#include <gtest/gtest.h>

#include <algorithm>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QSettings>
#include <QChart>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QValueAxis>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QMimeData>
#include <QProcess>
#include <QProxyStyle>
#include <QStyleOptionHeader>
#include <QHeaderView>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QTest>
#include <QThread>
#include <QUrl>
#include <filesystem>
#include <sstream>

#include "app/cli/cli.h"
#include "app/cli/drawing_commands.h"
#include "app/gui/diff_table_model.h"
#include "app/gui/diff_view.h"
#include "app/gui/export_dialog.h"
#include "app/gui/fidelity_view.h"
#include "core/analysis/fidelity.h"
#include "app/gui/report_export.h"

#include "app/gui/compare_dialog.h"
#include "app/gui/details_view.h"
#include "app/gui/main_window.h"
#include "app/gui/replay_dialog.h"
#include "app/gui/runs_model.h"
#include "app/gui/stats_view.h"
#include "app/gui/sweep_view.h"
#include "app/sweep/sweep_plan.h"
#include "app/gui/task_table_model.h"
#include "app/gui/latency_scatter.h"
#include "app/gui/latency_view.h"
#include "app/gui/timeline_view.h"
#include "app/gui/why_controller.h"
#include "app/gui/why_overlay.h"
#include "app/gui/why_view.h"
#include "app/render/timeline_image.h"
#include "gui_test_support.h"
#include "importers/importer.h"
#include "test_models.h"

namespace {

using namespace app::gui;

using guitest::ensureApp;
using guitest::waitIdle;

class FakeBackend : public ReplayBackend {
 public:
  std::vector<ReplayModelInfo> models() const override {
    return {{"fake-coresched", "synthetic SMT replay",
             {{"smt_factor", "0.6", "speed of each sibling when both run", "default"},
              {"coresched.cookie", "", "cookies", "default"}}},
            {"fake-fail", "always fails", {}}};
  }
  core::Result<std::shared_ptr<core::TraceModel>> run(const std::shared_ptr<const core::TraceModel>&,
                                                      const ReplayRequest& req, std::stop_token,
                                                      const std::function<void(double)>& progress) const override {
    if (req.model == "fake-fail") return core::Error("policy refused the workload (test)");
    if (req.model == "fake-slow") QThread::msleep(400);  // finishes after a replay asked for later
    if (progress) progress(0.5);
    auto m = apptest::smtModel();
    core::ReplayInfo info;
    info.model = req.model;
    for (const auto& [k, v] : req.params) info.params.push_back({k, v, "", "user"});
    m->replay = info;
    return m;
  }
};

std::shared_ptr<core::TraceModel> withFile(std::shared_ptr<core::TraceModel> m, const std::string& f) {
  m->sourceFiles = {f};
  return m;
}

// The synthetic 2x2 SMT model, as a run read from a file.
std::shared_ptr<core::TraceModel> smtRun() { return withFile(apptest::smtModel(), "/synthetic/smt.trace"); }

// A window that asks nothing (no dialogs) at a fixed size, shown so that its
// views lay out as on screen.
void showQuietly(MainWindow& w, int width, int height) {
  w.setInteractive(false);
  w.resize(width, height);
  w.show();
}

TEST(GuiModels, RunsModelPassesTheTester) {
  ensureApp();
  RunSet runs;
  RunsModel model(&runs);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  auto mk = [](std::shared_ptr<core::TraceModel> m, int parent) {
    app::gui::Run r;
    r.parentId = parent;
    r.model = m;
    r.render = app::render::RunRenderData::create(m);
    r.title = app::render::runTitle(*m);
    return r;
  };
  const int a = runs.add(mk(apptest::smtModel(), -1));
  const int b = runs.add(mk(apptest::denseModel(100), -1));
  auto replayModel = apptest::smtModel();
  core::ReplayInfo info;
  info.model = "cfs";
  info.params = {{"hz", "250", "tick", "default"},
                 {"idle_wakeup_ns", "19695", "idle exit", "measured from the recording: median of 153 wakeups"}};
  replayModel->replay = info;
  const int ra = runs.add(mk(replayModel, a));
  // The tooltip says what set a value unless it is the model's default.
  const QString tip = runToolTip(*runs.run(ra));
  EXPECT_TRUE(tip.contains(QStringLiteral("idle_wakeup_ns = 19695 (measured from the recording: median of 153 wakeups)")))
      << tip.toStdString();
  EXPECT_TRUE(tip.contains(QStringLiteral("hz = 250 <i>"))) << tip.toStdString();
  EXPECT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.rowCount(model.index(0, 0)), 1);
  EXPECT_EQ(model.runIdAt(model.index(0, 0, model.index(0, 0))), ra);
  EXPECT_EQ(model.indexOfRun(ra).parent(), model.index(0, 0));
  EXPECT_TRUE(model.data(model.index(0, RunsModel::DetailsColumn, model.index(0, 0))).toString().contains(QStringLiteral("hz=250")));
  // The details column is elided in a narrow panel: its tooltip carries the whole text.
  for (const QModelIndex& idx : {model.index(0, RunsModel::DetailsColumn), model.index(0, RunsModel::DetailsColumn, model.index(0, 0))})
    EXPECT_TRUE(model.data(idx, Qt::ToolTipRole).toString().startsWith(runDetails(*runs.run(model.runIdAt(idx))).toHtmlEscaped()));
  EXPECT_EQ(runs.ids(), (std::vector<int>{a, ra, b}));
  runs.remove(a);  // takes its replay along
  EXPECT_EQ(model.rowCount(), 1);
  EXPECT_EQ(runs.ids(), (std::vector<int>{b}));
}

TEST(GuiModels, TaskTableAndFilterPassTheTester) {
  ensureApp();
  TaskTableModel model;
  TaskFilterProxy proxy;
  proxy.setSourceModel(&model);
  QAbstractItemModelTester t1(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  QAbstractItemModelTester t2(&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
  const auto a = apptest::smtModel();
  const auto b = apptest::denseModel(200);
  model.setRuns({{1, QStringLiteral("smt"), std::make_shared<core::analysis::RunStats>(core::analysis::computeStats(*a))},
                 {2, QStringLiteral("dense"), std::make_shared<core::analysis::RunStats>(core::analysis::computeStats(*b))}});
  EXPECT_EQ(model.columnCount(), TaskTableModel::FixedColumns + 2 * TaskTableModel::PerRunColumns);
  EXPECT_GE(model.rowCount(), 5 + 4);
  // t101 exists only in the first run: the second run's cells say so.
  int row101 = -1;
  for (int r = 0; r < model.rowCount(); ++r)
    if (model.data(model.index(r, TaskTableModel::TidColumn)).toInt() == 101) row101 = r;
  ASSERT_GE(row101, 0);
  EXPECT_NE(model.taskIn(row101, 0), nullptr);
  EXPECT_EQ(model.taskIn(row101, 1), nullptr);
  EXPECT_EQ(model.data(model.index(row101, TaskTableModel::FixedColumns + TaskTableModel::PerRunColumns)).toString(),
            QStringLiteral("\u2014"));
  // Sort by the first run's runtime, descending; filter by comm and by tid.
  proxy.sort(TaskTableModel::FixedColumns + TaskTableModel::Runtime, Qt::DescendingOrder);
  const double first = proxy.data(proxy.index(0, TaskTableModel::FixedColumns), TaskTableModel::SortRole).toDouble();
  const double second = proxy.data(proxy.index(1, TaskTableModel::FixedColumns), TaskTableModel::SortRole).toDouble();
  EXPECT_GE(first, second);
  proxy.setFilterText(QStringLiteral("t10"));
  EXPECT_EQ(proxy.rowCount(), 5);
  proxy.setFilterText(QStringLiteral("105"));
  EXPECT_EQ(proxy.rowCount(), 1);
  proxy.setFilterText(QString());
  model.setRuns({});
  EXPECT_EQ(model.rowCount(), 0);
}

TEST(GuiWindow, OpenZoomSelectSearchClickReplayClose) {
  ensureApp();
  MainWindow w(std::make_shared<FakeBackend>());
  showQuietly(w, 1400, 900);
  const int rec = w.addModel(smtRun());
  ASSERT_TRUE(waitIdle(w));
  ASSERT_EQ(w.timeline()->panes().size(), 1u);
  TimelinePane* pane = w.timeline()->pane(rec);
  ASSERT_NE(pane, nullptr);
  EXPECT_EQ(pane->rows().size(), 4u);
  EXPECT_GT(pane->lastDrawItems(), 4u);
  ASSERT_NE(w.runs()->run(rec)->stats, nullptr);

  // Zoom: the whole trace is on screen; zooming in halves ns per pixel around the mouse.
  auto* view = w.viewState();
  const double before = view->viewport().nsPerPx;
  view->zoomAt(100, 0.5);
  EXPECT_NEAR(view->viewport().nsPerPx, before * 0.5, before * 1e-9);
  view->fitAll();
  ASSERT_TRUE(waitIdle(w));
  // Keys on the focused timeline.
  QApplication::setActiveWindow(&w);
  pane->setFocus();
  const double fit = view->viewport().nsPerPx;
  QTest::keyClick(pane, Qt::Key_W);
  EXPECT_LT(view->viewport().nsPerPx, fit);
  QTest::keyClick(pane, Qt::Key_0);
  EXPECT_DOUBLE_EQ(view->viewport().nsPerPx, fit);

  // Range selection restricts the statistics.
  const auto* m = w.runs()->run(rec)->model.get();
  view->setSelection(TimelineViewState::Range{100000 - m->firstTs, 200000 - m->firstTs});
  view->commitSelection();
  ASSERT_TRUE(waitIdle(w));
  const auto& st = *w.runs()->run(rec)->stats;
  EXPECT_EQ(st.range.from, 100000);
  EXPECT_EQ(st.range.to, 200000);
  EXPECT_TRUE(w.statsView()->summaryHtml().contains(QStringLiteral("Range")));
  const auto charts = w.statsView()->charts();
  ASSERT_EQ(charts.size(), 6u);
  for (auto* c : charts) EXPECT_NE(c, nullptr);
  // Forced idle per sibling: CPU 1 had 100 us of it in this range.
  EXPECT_EQ(st.forcedIdleNs, 100000);

  // Search highlights in every pane.
  w.setSearchText(QStringLiteral("t103"));
  ASSERT_TRUE(waitIdle(w));

  // Click t103 on CPU 2 at 100 us: the details name it and its end.
  const auto& vp = view->viewport();
  const int x = kGutterWidth + static_cast<int>(vp.xOf(100000 - m->firstTs));
  int y = app::render::kPaneHeaderHeight;
  for (int i = 0; i < 2; ++i) y += pane->rows()[static_cast<size_t>(i)].height;
  y += pane->rows()[2].height / 2;
  const auto hit = pane->sliceAt(QPoint(x, y));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->cpu, 2);
  QTest::mouseClick(pane, Qt::LeftButton, Qt::NoModifier, QPoint(x, y));
  EXPECT_EQ(w.tabs()->currentWidget(), w.detailsView());
  const QString details = w.detailsView()->toPlainText();
  EXPECT_TRUE(details.contains(QStringLiteral("t103"))) << details.toStdString();
  EXPECT_TRUE(details.contains(QStringLiteral("preempted"))) << details.toStdString();
  EXPECT_FALSE(pane->toolTipAt(QPoint(x, y)).isEmpty());

  // Details of t105's slice: woken by t101, with its wakeup latency.
  const auto* run = w.runs()->run(rec);
  auto rowOf = [&](int cpu, auto pred) {
    const auto& s = m->cpuSlices[static_cast<size_t>(cpu)];
    for (uint32_t i = 0; i < s.size(); ++i)
      if (pred(s, i)) return i;
    return UINT32_MAX;
  };
  const uint32_t r105 = rowOf(2, [&](const core::CpuSliceTable& s, uint32_t i) { return m->threads.tid[s.utid[i].value] == 105; });
  ASSERT_NE(r105, UINT32_MAX);
  SliceRef ref{rec, app::render::RowType::Cpu, 2, {}, r105};
  const QString html = sliceDetailsHtml(*run, ref);
  EXPECT_TRUE(html.contains(QStringLiteral("woken by"))) << html.toStdString();
  EXPECT_TRUE(html.contains(QStringLiteral("t101")));
  EXPECT_TRUE(html.contains(QStringLiteral("100.0 \u00b5s"))) << html.toStdString();  // 150 us -> 250 us
  // A forced-idle slice names the sibling that kept it idle.
  const uint32_t rFi = rowOf(1, [](const core::CpuSliceTable& s, uint32_t i) { return s.kind[i] == core::SliceKind::ForcedIdle; });
  ASSERT_NE(rFi, UINT32_MAX);
  const QString fi = sliceDetailsHtml(*run, SliceRef{rec, app::render::RowType::Cpu, 1, {}, rFi});
  EXPECT_TRUE(fi.contains(QStringLiteral("Forced idle")));
  EXPECT_TRUE(fi.contains(QStringLiteral("CPU 0 ran")));

  // Task rows, under their process's header row.
  w.timeline()->showTaskRow(rec, hit->utid);
  ASSERT_EQ(pane->rows().size(), 6u);
  EXPECT_EQ(pane->rows()[4].type, app::render::RowType::Group);
  EXPECT_EQ(pane->rows()[5].type, app::render::RowType::Task);
  EXPECT_EQ(pane->rows()[5].utid, hit->utid);
  ASSERT_TRUE(waitIdle(w));

  // Replay through the fake backend: a new pane under its recording, synchronised.
  ReplayRequest req;
  req.model = "fake-coresched";
  req.params = {{"smt_factor", "0.5"}};
  w.startReplay(rec, req);
  ASSERT_TRUE(waitIdle(w));
  ASSERT_EQ(w.timeline()->panes().size(), 2u);
  const int rep = w.runs()->ids()[1];
  EXPECT_EQ(w.runs()->run(rep)->parentId, rec);
  EXPECT_TRUE(w.runs()->run(rep)->title.contains(QStringLiteral("smt_factor=0.5")));
  EXPECT_EQ(w.runs()->run(rep)->render->origin, w.runs()->run(rec)->render->origin);
  // A failing replay: a message, no new run.
  req.model = "fake-fail";
  w.startReplay(rec, req);
  ASSERT_TRUE(waitIdle(w));
  EXPECT_EQ(w.runs()->count(), 2);
  ASSERT_FALSE(w.errors().isEmpty());
  EXPECT_TRUE(w.errors().back().contains(QStringLiteral("policy refused")));

  // The window renders (what --screenshot saves).
  const QPixmap shot = w.grab();
  EXPECT_FALSE(shot.isNull());

  w.runs()->remove(rec);
  ASSERT_TRUE(waitIdle(w));
  EXPECT_EQ(w.timeline()->panes().size(), 0u);
  EXPECT_EQ(w.runs()->count(), 0);
}

TEST(GuiWindow, ReplaysAreListedInTheOrderAskedForNotFinishedIn) {
  // `schedlab --replay cfs --replay bfs` lists cfs first, as `schedlab-cli report` does,
  // even when bfs finishes first.
  ensureApp();
  MainWindow w(std::make_shared<FakeBackend>());
  showQuietly(w, 1400, 900);
  const int rec = w.addModel(smtRun());
  ASSERT_TRUE(waitIdle(w));
  ReplayRequest slow;
  slow.model = "fake-slow";
  ReplayRequest fast;
  fast.model = "fake-coresched";
  w.startReplay(rec, slow);
  w.startReplay(rec, fast);
  ASSERT_TRUE(waitIdle(w));
  const auto replays = w.runs()->replaysOf(rec);
  ASSERT_EQ(replays.size(), 2u);
  EXPECT_EQ(w.runs()->run(replays[0])->replayRequest->model, "fake-slow");
  EXPECT_EQ(w.runs()->run(replays[1])->replayRequest->model, "fake-coresched");
  EXPECT_EQ(w.runs()->ids(), (std::vector<int>{rec, replays[0], replays[1]}));
  const auto panes = w.timeline()->panes();
  ASSERT_EQ(panes.size(), 3u);
  EXPECT_EQ(panes[1]->run().id, replays[0]);
}

// Records the sort arrow the header asks the style for.
class SortArrowRecorder : public QProxyStyle {
 public:
  void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                     const QWidget* widget) const override {
    if (element == PE_IndicatorHeaderArrow)
      if (const auto* h = qstyleoption_cast<const QStyleOptionHeader*>(option)) arrows.push_back(h->sortIndicator);
    QProxyStyle::drawPrimitive(element, option, painter, widget);
  }
  mutable std::vector<QStyleOptionHeader::SortIndicator> arrows;
};

TEST(GuiWindow, TasksTabHeadersFitPointTheSortWayAndHideAnUnknownTgid) {
  ensureApp();
  MainWindow w(std::make_shared<FakeBackend>());
  showQuietly(w, 1400, 900);
  // "hackbench-proc dat": the short title of a trace.dat in a folder, over three header lines.
  w.addModel(withFile(apptest::smtModel(), "/synthetic/hackbench-proc/trace.dat"));
  ASSERT_TRUE(waitIdle(w));
  QTableView* view = w.taskView();
  QHeaderView* header = view->horizontalHeader();
  ASSERT_GT(w.taskModel()->columnCount(), TaskTableModel::FixedColumns);
  for (int c = TaskTableModel::FixedColumns; c < w.taskModel()->columnCount(); ++c)
    EXPECT_GE(header->sectionSize(c), header->sectionSizeHint(c)) << header->model()->headerData(c, Qt::Horizontal).toString().toStdString();
  // Sorted by runtime, largest first: the arrow points down.
  EXPECT_EQ(header->sortIndicatorOrder(), Qt::DescendingOrder);
  SortArrowRecorder recorder;
  header->setStyle(&recorder);
  header->grab();
  header->setStyle(nullptr);
  ASSERT_FALSE(recorder.arrows.empty());
  EXPECT_EQ(recorder.arrows.front(), QStyleOptionHeader::SortDown);
  // The synthetic trace, like the demo and hackbench, knows no tgid: no column of blanks.
  EXPECT_FALSE(w.taskModel()->anyTgidKnown());
  EXPECT_TRUE(view->isColumnHidden(TaskTableModel::TgidColumn));
}

TEST(GuiModels, TaskTableKnowsWhetherAnyTgidIsKnown) {
  ensureApp();
  TaskTableModel model;
  auto stats = core::analysis::computeStats(*apptest::smtModel());
  model.setRuns({{1, QStringLiteral("smt"), std::make_shared<core::analysis::RunStats>(stats)}});
  EXPECT_FALSE(model.anyTgidKnown());
  ASSERT_FALSE(stats.tasks.empty());
  stats.tasks.front().tgid = 4242;
  model.setRuns({{1, QStringLiteral("smt"), std::make_shared<core::analysis::RunStats>(stats)}});
  EXPECT_TRUE(model.anyTgidKnown());
}

// A shown window with `model` open and its statistics computed.
std::unique_ptr<MainWindow> windowWith(std::shared_ptr<core::TraceModel> model) {
  auto w = std::make_unique<MainWindow>(std::make_shared<FakeBackend>());
  w->setInteractive(false);
  w->resize(1400, 900);
  w->show();
  w->addModel(std::move(model));
  EXPECT_TRUE(waitIdle(*w));
  return w;
}

TEST(GuiWindow, StatisticsShareAxisStopsAtAHundredPercent) {
  ensureApp();
  // One task ran the whole trace (100 %): a task's share cannot pass 100 %, nor its axis.
  const auto w = windowWith(smtRun());
  const auto charts = w->statsView()->charts();
  ASSERT_EQ(charts.size(), 6u);
  const auto axes = charts[1]->axes(Qt::Horizontal);
  ASSERT_EQ(axes.size(), 1);
  const auto* axis = qobject_cast<QValueAxis*>(axes.front());
  ASSERT_NE(axis, nullptr);
  EXPECT_LE(axis->max(), 100.0);
}

TEST(GuiWindow, StatisticsLatencyCdfRisesFromZeroInsideItsAxis) {
  ensureApp();
  const auto w = windowWith(smtRun());
  const auto charts = w->statsView()->charts();
  ASSERT_EQ(charts.size(), 6u);
  const auto* axis = qobject_cast<QLogValueAxis*>(charts[0]->axes(Qt::Horizontal).value(0));
  ASSERT_NE(axis, nullptr);
  ASSERT_FALSE(charts[0]->series().isEmpty());
  for (auto* s : charts[0]->series()) {
    const auto* line = qobject_cast<QLineSeries*>(s);
    ASSERT_NE(line, nullptr);
    ASSERT_GT(line->count(), 0);
    EXPECT_LT(axis->min(), line->at(0).x());
    EXPECT_EQ(line->at(0).y(), 0.0);
  }
}

TEST(GuiWindow, StatisticsNoteChartsWithoutDataInTheirPlace) {
  ensureApp();
  // smtModel has SMT siblings and forced idle, but no frequency events: one note, in that chart's place.
  const auto w = windowWith(smtRun());
  const QStringList notes = w->statsView()->notesShown();
  ASSERT_EQ(notes.size(), 1) << notes.join(QLatin1Char('|')).toStdString();
  EXPECT_TRUE(notes[0].startsWith(QStringLiteral("Mean CPU frequency: no frequency data"))) << notes[0].toStdString();
  // A machine without SMT has no siblings to force idle: that note says so.
  const auto flat = windowWith(withFile(apptest::denseModel(100), "/synthetic/dense.trace"));
  EXPECT_TRUE(flat->statsView()->notesShown().contains(
      QStringLiteral("Forced idle per SMT sibling: none (no SMT siblings in these runs).")))
      << flat->statsView()->notesShown().join(QLatin1Char('|')).toStdString();
}

TEST(GuiModels, CdfStartsFromZeroAboveADecadeAxisMinimum) {
  // Two of four samples are 0 ns (drawn at 0.1 us, as a log axis cannot show 0).
  const auto points = cdfPoints({0, 0, 3000, 50000});
  ASSERT_GE(points.size(), 2u);
  EXPECT_EQ(points.front(), (std::pair<double, double>{0.1, 0.0}));
  EXPECT_DOUBLE_EQ(points.back().second, 1.0);
  EXPECT_NEAR(logAxisMinUs(0.1), 0.01, 1e-12);  // a sample on a decade is not on the edge
  EXPECT_NEAR(logAxisMinUs(1.3), 1.0, 1e-12);
  EXPECT_NEAR(logAxisMinUs(19.0), 10.0, 1e-12);
}

TEST(GuiWindow, StripsFromTheViewMenuAndUserSlicesInDetails) {
  // apptest::powerAndMarksModel(): CPU 0 at 1 GHz then 2 GHz from 500 us; t10
  // writes "outer" over [100, 600) us with "inner" in it over [200, 300) us.
  ensureApp();
  MainWindow w(std::make_shared<FakeBackend>());
  showQuietly(w, 1400, 900);
  const int rec = w.addModel(withFile(apptest::powerAndMarksModel(), "/synthetic/marks.trace"));
  ASSERT_TRUE(waitIdle(w));
  TimelinePane* pane = w.timeline()->pane(rec);
  ASSERT_NE(pane, nullptr);
  ASSERT_EQ(pane->rows().size(), 1u);
  QAction* freq = nullptr;
  for (QAction* a : w.findChildren<QAction*>())
    if (a->text() == QStringLiteral("CPU &Frequency Strips")) freq = a;
  ASSERT_NE(freq, nullptr);
  freq->trigger();
  ASSERT_TRUE(waitIdle(w));
  ASSERT_EQ(pane->rows().size(), 2u);
  EXPECT_EQ(pane->rows()[1].type, app::render::RowType::CpuFrequency);

  const auto* m = w.runs()->run(rec)->model.get();
  const auto& vp = w.viewState()->viewport();
  const auto xAt = [&](int64_t us) { return kGutterWidth + static_cast<int>(vp.xOf(us * 1000 - m->firstTs)); };
  const int stripY = app::render::kPaneHeaderHeight + pane->rows()[0].height + pane->rows()[1].height / 2;
  EXPECT_FALSE(pane->sliceAt(QPoint(xAt(700), stripY)));  // a strip has no slices
  EXPECT_TRUE(pane->toolTipAt(QPoint(xAt(700), stripY)).contains(QStringLiteral("2000 MHz")));
  EXPECT_TRUE(pane->toolTipAt(QPoint(xAt(200), stripY)).contains(QStringLiteral("1000 MHz")));

  const core::Utid t10 = apptest::utidOfTid(*m, 10);
  w.timeline()->showTaskRow(rec, t10);
  ASSERT_TRUE(waitIdle(w));
  // CPU 0, its strip, then t10's process group: its header and t10's row.
  ASSERT_EQ(pane->rows().size(), 4u);
  EXPECT_EQ(pane->rows()[2].type, app::render::RowType::Group);
  const auto& task = pane->rows()[3];
  ASSERT_EQ(task.type, app::render::RowType::Task);
  const int taskTop = pane->rowTop(3);
  // The second user lane (depth 1), in its middle.
  const int innerY = taskTop + task.height - app::render::kUserLaneHeight / 2;
  const auto hit = pane->sliceAt(QPoint(xAt(250), innerY));
  ASSERT_TRUE(hit.has_value());
  EXPECT_TRUE(hit->userSlice);
  QTest::mouseClick(pane, Qt::LeftButton, Qt::NoModifier, QPoint(xAt(250), innerY));
  EXPECT_EQ(w.tabs()->currentWidget(), w.detailsView());
  const QString details = w.detailsView()->toPlainText();
  EXPECT_TRUE(details.contains(QStringLiteral("inner"))) << details.toStdString();
  EXPECT_TRUE(details.contains(QStringLiteral("100.0 \u00b5s"))) << details.toStdString();  // 200 -> 300 us
  EXPECT_TRUE(details.contains(QStringLiteral("depth"))) << details.toStdString();
  EXPECT_TRUE(pane->toolTipAt(QPoint(xAt(250), innerY)).contains(QStringLiteral("inner")));
  // The Statistics tab's time-in-state table: outer (500 us) before inner (100 us).
  const QString summary = w.statsView()->summaryHtml();
  const auto outerAt = summary.indexOf(QStringLiteral("<td>outer</td>"));
  EXPECT_GE(outerAt, 0) << summary.toStdString();
  EXPECT_GT(summary.indexOf(QStringLiteral("<td>inner</td>")), outerAt);
  // Turning the strip off keeps the task row.
  freq->trigger();
  ASSERT_TRUE(waitIdle(w));
  ASSERT_EQ(pane->rows().size(), 3u);
  EXPECT_EQ(pane->rows()[2].type, app::render::RowType::Task);
}

TEST(GuiWindow, TaskPeltSignalsFromTheViewMenuUnderTheTaskRow) {
  // apptest::taskPeltModel(): t10's util is 100 from 0, 300 from 400 us; its load 512, then 1024.
  ensureApp();
  MainWindow w(std::make_shared<FakeBackend>());
  showQuietly(w, 1400, 900);
  const int rec = w.addModel(withFile(apptest::taskPeltModel(), "/synthetic/pelt.trace"));
  ASSERT_TRUE(waitIdle(w));
  TimelinePane* pane = w.timeline()->pane(rec);
  ASSERT_NE(pane, nullptr);
  const auto* m = w.runs()->run(rec)->model.get();
  const core::Utid t10 = apptest::utidOfTid(*m, 10);
  w.timeline()->showTaskRow(rec, t10);
  ASSERT_TRUE(waitIdle(w));
  ASSERT_EQ(pane->rows().size(), 3u);  // CPU 0, t10's process header, t10
  QAction* peltAction = nullptr;
  for (QAction* a : w.findChildren<QAction*>())
    if (a->text() == QStringLiteral("Task &PELT Signals")) peltAction = a;
  ASSERT_NE(peltAction, nullptr);
  peltAction->trigger();
  ASSERT_TRUE(waitIdle(w));
  ASSERT_EQ(pane->rows().size(), 5u);
  EXPECT_EQ(pane->rows()[2].type, app::render::RowType::Task);
  const auto& util = pane->rows()[4];
  ASSERT_EQ(util.type, app::render::RowType::Counter);
  EXPECT_EQ(util.utid, t10);
  EXPECT_EQ(util.depth, pane->rows()[2].depth);  // indented with its task
  const auto& vp = w.viewState()->viewport();
  const auto xAt = [&](int64_t us) { return kGutterWidth + static_cast<int>(vp.xOf(us * 1000 - m->firstTs)); };
  const int utilY = pane->rowTop(4) + util.height / 2;
  EXPECT_FALSE(pane->sliceAt(QPoint(xAt(500), utilY)));
  const QString tip = pane->toolTipAt(QPoint(xAt(500), utilY));
  EXPECT_TRUE(tip.contains(QStringLiteral("util of t10 (tid 10)")) && tip.contains(QStringLiteral("<b>300</b>")))
      << tip.toStdString();
  // --strips ticks the same action; turning it off takes the lines away again.
  w.setStrips({});
  ASSERT_TRUE(waitIdle(w));
  EXPECT_FALSE(peltAction->isChecked());
  EXPECT_EQ(pane->rows().size(), 3u);
}

// A 32-CPU machine (bigMachineModel, "2s:8c:2t:4l") opens grouped by package
// and LLC; a click on a group's label collapses it into its summary rows; a
// click on the heat map centres the view at its time and scrolls to its CPU.
TEST(GuiWindow, BigMachineGroupsCollapseAndHeatMapNavigates) {
  ensureApp();
  MainWindow w(std::make_shared<FakeBackend>());
  showQuietly(w, 1400, 900);
  const int rec = w.addModel(withFile(apptest::bigMachineModel(), "/synthetic/big.trace"));
  ASSERT_TRUE(waitIdle(w));
  TimelinePane* pane = w.timeline()->pane(rec);
  ASSERT_NE(pane, nullptr);
  ASSERT_EQ(pane->rows().size(), 32u + 6u);  // 2 packages, 4 LLCs, 32 CPUs
  EXPECT_FALSE(pane->heatmap());             // 64 CPUs or fewer: no overview by default
  QTest::mouseClick(pane, Qt::LeftButton, {}, QPoint(20, pane->rowTop(0) + 4));
  ASSERT_EQ(pane->rows().size(), 2u + 1u + 2u + 16u);  // package 0 as two summary rows
  EXPECT_EQ(pane->rows()[0].type, app::render::RowType::Summary);
  QTest::mouseClick(pane, Qt::LeftButton, {}, QPoint(20, pane->rowTop(0) + 4));
  ASSERT_EQ(pane->rows().size(), 38u);

  pane->setHeatmap(app::render::HeatMetric::Busy);
  ASSERT_TRUE(waitIdle(w));
  ASSERT_TRUE(pane->heatmapReady());
  const QRect heat = pane->heatmapRect();
  ASSERT_FALSE(heat.isEmpty());
  {
    // Its colour scale in the label cell beside it, as the renderer lays it out:
    // a grey swatch for 0, then the ramp from its first colour to its last.
    const QImage shot = pane->grab().toImage();
    const QRect bar = app::render::heatLegendBar(QRect(0, heat.top(), kGutterWidth, heat.height()));
    const int y = bar.center().y();
    EXPECT_EQ(shot.pixel(bar.left() - 8, y), app::render::heatColor(0));
    EXPECT_EQ(shot.pixel(bar.left(), y), app::render::heatColor(0.5 / bar.width()));
    EXPECT_EQ(shot.pixel(bar.right(), y), app::render::heatColor((bar.width() - 0.5) / bar.width()));
  }
  auto* view = w.viewState();
  view->showRange(0, 100000);  // 100 us wide
  ASSERT_TRUE(waitIdle(w));
  QSignalSpy scrolled(pane, &TimelinePane::rowScrollRequested);
  // 3/4 across: 750 us into the 1000 us trace; 20/32 down: CPU 20 (row order is CPU order here).
  const QPoint at(heat.left() + heat.width() * 3 / 4, heat.top() + heat.height() * 20 / 32 + 1);
  QTest::mouseClick(pane, Qt::LeftButton, {}, at);
  const double expected = static_cast<double>(view->begin()) +
                          static_cast<double>(view->span() - view->begin()) * (at.x() - heat.left()) / heat.width();
  const auto& v = view->viewport();
  EXPECT_NEAR(static_cast<double>(v.start + v.span() / 2), expected, 2 * v.nsPerPx);
  ASSERT_EQ(scrolled.count(), 1);
  int cpu20 = -1;
  for (size_t i = 0; i < pane->rows().size(); ++i)
    if (pane->rows()[i].type == app::render::RowType::Cpu && pane->rows()[i].cpu == 20) cpu20 = static_cast<int>(i);
  ASSERT_GE(cpu20, 0);
  EXPECT_EQ(scrolled.front().front().toInt(), pane->rowTop(cpu20));
}

TEST(GuiJobs, CancelStopsTheWorkAndStillReportsBack) {
  ensureApp();
  auto* job = new Job(QStringLiteral("spin"));
  bool done = false;
  bool sawStop = false;
  job->start<int>(
      [](Job& j) {
        int spins = 0;
        while (!j.stopToken().stop_requested() && spins < 100000) {
          j.setProgress(spins / 200.0);
          QThread::msleep(1);
          ++spins;
        }
        return spins;
      },
      [&](int& spins) {
        done = true;
        sawStop = spins < 100000;
      });
  QTest::qWait(50);
  EXPECT_TRUE(job->isRunning());
  EXPECT_GT(job->progress(), 0.0);
  job->cancel();
  QElapsedTimer t;
  t.start();
  while (!done && t.elapsed() < 10000) QTest::qWait(10);
  EXPECT_TRUE(done);
  EXPECT_TRUE(sawStop);
}

TEST(GuiWindow, BadFilesGiveMessagesNotCrashes) {
  ensureApp();
  QTemporaryDir dir;
  const QString garbage = dir.filePath(QStringLiteral("garbage.bin"));
  {
    QFile f(garbage);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    QByteArray bytes;
    for (int i = 0; i < 5000; ++i) bytes.append(static_cast<char>((i * 7919 + 13) & 0xff));
    f.write(bytes);
  }
  const QString empty = dir.filePath(QStringLiteral("empty.txt"));
  QFile(empty).open(QIODevice::WriteOnly);
  MainWindow w(std::make_shared<FakeBackend>());
  w.setInteractive(false);
  w.show();
  w.openFiles({garbage, empty, dir.filePath(QStringLiteral("missing.dat"))});
  ASSERT_TRUE(waitIdle(w));
  EXPECT_EQ(w.runs()->count(), 0);
  EXPECT_EQ(w.errors().size(), 3);
  for (const QString& e : w.errors()) EXPECT_FALSE(e.isEmpty());
}

TEST(GuiWindow, ReplayDialogParsesAndRejects) {
  ensureApp();
  RunSet runs;
  app::gui::Run r;
  r.model = apptest::smtModel();
  r.render = app::render::RunRenderData::create(r.model);
  r.title = QStringLiteral("smt");
  const int id = runs.add(r);
  {
    ReplayDialog d(runs, id, std::make_shared<FakeBackend>());
    d.setModelsChecked({QStringLiteral("fake-coresched")});
    d.setTopologySpec(QStringLiteral("2x2"));
    d.setParamsText(QStringLiteral("smt_factor = 0.5"));
    d.accept();
    EXPECT_EQ(d.result(), QDialog::Accepted);
    ASSERT_EQ(d.requests().size(), 1u);
    EXPECT_EQ(d.requests()[0].model, "fake-coresched");
    ASSERT_EQ(d.requests()[0].params.size(), 1u);
    EXPECT_EQ(d.requests()[0].params[0], (std::pair<std::string, std::string>{"smt_factor", "0.5"}));
    ASSERT_TRUE(d.requests()[0].topology.has_value());
    EXPECT_EQ(d.requests()[0].topology->cpuCount(), 4);
  }
  {
    ReplayDialog d(runs, id, std::make_shared<FakeBackend>());
    d.setModelsChecked({QStringLiteral("fake-coresched")});
    d.setParamsText(QStringLiteral("smt_fctor=0.5"));  // typo
    d.accept();
    EXPECT_NE(d.result(), QDialog::Accepted);
    EXPECT_TRUE(d.requests().empty());
    d.setParamsText(QStringLiteral("no equals sign"));
    d.accept();
    EXPECT_NE(d.result(), QDialog::Accepted);
    d.setTopologySpec(QStringLiteral("x7"));
    d.setParamsText(QString());
    d.accept();
    EXPECT_NE(d.result(), QDialog::Accepted);
  }
  {
    // The rule fields reach the models that declare them, whole (';', '=' and ',' inside).
    ReplayDialog d(runs, id, std::make_shared<FakeBackend>());
    d.setModelsChecked({QStringLiteral("fake-coresched")});
    d.setTaskRules(QStringLiteral("comm:^(a|b),c$=X; per-thread"), QStringLiteral("all=0:512"), QString());
    d.accept();
    EXPECT_NE(d.result(), QDialog::Accepted);  // the fake model has no uclamp.clamp
    EXPECT_TRUE(d.requests().empty());
    d.setTaskRules(QStringLiteral("comm:^(a|b),c$=X; per-thread"), QString(), QString());
    d.accept();
    EXPECT_EQ(d.result(), QDialog::Accepted);
    ASSERT_EQ(d.requests().size(), 1u);
    ASSERT_EQ(d.requests()[0].params.size(), 1u);
    EXPECT_EQ(d.requests()[0].params[0],
              (std::pair<std::string, std::string>{"coresched.cookie", "comm:^(a|b),c$=X; per-thread"}));
  }
  EXPECT_FALSE(parseAssignments("a=1, b = 2\nc=3").value().empty());
  EXPECT_FALSE(parseAssignments("=1").has_value());
}

// Every recorded trace and the public trace.dat / CTF traces open and draw.
TEST(GuiRealTraces, RecordedAndPublicTracesOpen) {
  ensureApp();
  namespace fs = std::filesystem;
  const fs::path root = SCHEDLAB_SHARED_TRACES;
  if (!fs::exists(root)) GTEST_SKIP() << "no shared traces at " << root;
  // recorded/README.md: each workload in every format; and public traces of
  // each binary format. All of them must open: every importer is built.
  QStringList files;
  for (const char* d : {"hackbench-proc", "nicemix", "pipe-threads", "sysbench-mix"})
    for (const char* f : {"trace.txt", "trace.dat", "perf.data", "perf-script.txt", "ctf"})
      files << QString::fromStdString((root / "recorded" / d / f).string());
  for (const char* f : {"public/trappy/raw_trace.dat", "public/lisa/example_rtapp/trace.dat", "public/lisa/sched_load/trace.dat",
                        "public/tracecompass-test-traces/bug446190", "public/babeltrace/lttng-tracefile-rotation/kernel",
                        "public/tracecompass-test-traces/perf-taskset2",
                        "public/ms-perf-tools-linux-android/test_trace.perfetto-trace"})
    files << QString::fromStdString((root / f).string());
  for (const QString& f : files) ASSERT_TRUE(QFileInfo::exists(f)) << f.toStdString();
  MainWindow w(defaultReplayBackend());
  showQuietly(w, 1400, 900);
  w.openFiles(files);
  ASSERT_TRUE(waitIdle(w, 300000));
  EXPECT_TRUE(w.errors().isEmpty()) << w.errors().join(QLatin1Char('\n')).toStdString();
  EXPECT_EQ(w.runs()->count(), files.size());
  for (auto* p : w.timeline()->panes()) {
    EXPECT_TRUE(p->drawListReady()) << p->run().title.toStdString();
    EXPECT_GT(p->lastDrawItems(), 0u) << p->run().title.toStdString();
  }
}

// ---------------------------------------------------------------- comparison

QString testData(const char* rel) {
  return QString::fromStdString((std::filesystem::path(SCHEDLAB_TEST_DATA) / rel).string());
}

// pdftotext's text of a PDF; empty when poppler-utils is missing.
bool havePdftotext() { return !QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty(); }
constexpr const char* kNoPdftotext = "pdftotext (poppler-utils, make setup) not installed: the PDF's text is not checked";

QString pdfText(const QString& pdf) {
  QProcess p;
  p.start(QStandardPaths::findExecutable(QStringLiteral("pdftotext")), {QStringLiteral("-layout"), pdf, QStringLiteral("-")});
  p.waitForFinished(60000);
  return QString::fromUtf8(p.readAllStandardOutput());
}

QString readText(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll());
}

bool waitSignal(QSignalSpy& spy, int timeoutMs = 120000) {
  QElapsedTimer t;
  t.start();
  while (spy.count() == 0 && t.elapsed() < timeoutMs) QTest::qWait(20);
  return spy.count() > 0;
}

bool sortedDescending(const QAbstractItemModel& m, int column) {
  for (int r = 1; r < m.rowCount(); ++r)
    if (m.index(r - 1, column).data(DiffTaskModel::SortRole).toDouble() < m.index(r, column).data(DiffTaskModel::SortRole).toDouble())
      return false;
  return true;
}

TEST(GuiModels, DiffSignificanceRules) {
  // Times: at least 20 % of A and above max(1 ms, 1 % of the range).
  EXPECT_TRUE(isSignificant(MetricKind::Time, 10e6, 13e6, 100000000));   // +30 %, +3 ms
  EXPECT_FALSE(isSignificant(MetricKind::Time, 10e6, 11e6, 100000000));  // +10 %
  EXPECT_FALSE(isSignificant(MetricKind::Time, 1e6, 1.5e6, 1000000000)); // +50 % but 0.5 ms < 10 ms (1 % of 1 s)
  EXPECT_TRUE(isSignificant(MetricKind::Time, 0, 2e6, 100000000));       // appeared
  EXPECT_FALSE(isSignificant(MetricKind::Count, 5, 12, 0));              // +7 < 10
  EXPECT_TRUE(isSignificant(MetricKind::Count, 50, 80, 0));
  EXPECT_FALSE(isSignificant(MetricKind::Latency, 100e3, 300e3, 0, 10, 100));  // 10 wakeups are too few
  EXPECT_TRUE(isSignificant(MetricKind::Latency, 100e3, 300e3, 0, 20, 100));
  EXPECT_FALSE(isSignificant(MetricKind::Latency, 10e3, 25e3, 0, 100, 100));   // +15 us < 20 us
  EXPECT_FALSE(isSignificant(MetricKind::Share, 0.50, 0.52, 0));
  EXPECT_TRUE(isSignificant(MetricKind::Share, 0.10, 0.20, 0));
  EXPECT_TRUE(isSignificant(MetricKind::Index, 0.9, 0.6, 0));
  EXPECT_FALSE(isSignificant(MetricKind::Index, 0.9, 0.9, 0));
  // KS at the 1 % level: n = m = 20 needs D > 1.63 * sqrt(40 / 400) = 0.5155.
  EXPECT_FALSE(ksSignificant(0.5, 20, 20));
  EXPECT_TRUE(ksSignificant(0.55, 20, 20));
  EXPECT_FALSE(ksSignificant(0.09, 100000, 100000));  // under the 0.1 floor
  EXPECT_FALSE(ksSignificant(1.0, 19, 100));
  EXPECT_TRUE(significanceHelp().contains(QStringLiteral("20%")));
}

TEST(GuiModels, DiffModelsPassTheTester) {
  ensureApp();
  DiffTaskModel tasks;
  DiffSummaryModel summary;
  DiffFilterProxy proxy;
  proxy.setSourceModel(&tasks);
  QAbstractItemModelTester t1(&tasks, QAbstractItemModelTester::FailureReportingMode::Fatal);
  QAbstractItemModelTester t2(&summary, QAbstractItemModelTester::FailureReportingMode::Fatal);
  QAbstractItemModelTester t3(&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
  const auto a = apptest::smtModel();
  const auto b = apptest::denseModel(5000);  // ~10 ms a CPU: its tasks' runtimes pass the 1 ms floor
  const auto sa = core::analysis::computeStats(*a);
  const auto sb = core::analysis::computeStats(*b);
  auto diff = std::make_shared<const core::analysis::RunDiff>(core::analysis::diffRuns(*a, sa, "smt", *b, sb, "dense"));
  tasks.setDiff(diff);
  summary.setDiff(diff);
  ASSERT_EQ(tasks.rowCount(), static_cast<int>(diff->tasks.size()));
  EXPECT_EQ(tasks.columnCount(), DiffTaskModel::ksColumn() + 1);
  // t101 ran only in A: "gone", runtime change -100 %, and the change is its whole runtime.
  int row = -1;
  for (int r = 0; r < tasks.rowCount(); ++r)
    if (tasks.index(r, DiffTaskModel::CommColumn).data().toString() == QStringLiteral("t101")) row = r;
  ASSERT_GE(row, 0);
  EXPECT_TRUE(tasks.index(row, DiffTaskModel::TasksColumn).data().toString().startsWith(QStringLiteral("gone")));
  EXPECT_EQ(tasks.index(row, DiffTaskModel::column(0, DiffTaskModel::Relative)).data().toString(), QStringLiteral("-100 %"));
  const auto* t101 = &diff->tasks[static_cast<size_t>(row)];
  ASSERT_TRUE(t101->a.has_value());
  EXPECT_DOUBLE_EQ(tasks.index(row, DiffTaskModel::column(0, DiffTaskModel::Delta)).data(DiffTaskModel::SortRole).toDouble(),
                   -static_cast<double>(t101->a->runtimeNs));
  EXPECT_EQ(tasks.index(row, DiffTaskModel::column(0, DiffTaskModel::ValueB)).data().toString(), QStringLiteral("\u2014"));
  // Sorting by the runtime change, both ways.
  const int delta = DiffTaskModel::column(0, DiffTaskModel::Delta);
  proxy.sort(delta, Qt::DescendingOrder);
  EXPECT_TRUE(sortedDescending(proxy, delta));
  proxy.sort(DiffTaskModel::column(0, DiffTaskModel::Relative), Qt::AscendingOrder);
  EXPECT_LE(proxy.index(0, DiffTaskModel::column(0, DiffTaskModel::Relative)).data(DiffTaskModel::SortRole).toDouble(),
            proxy.index(proxy.rowCount() - 1, DiffTaskModel::column(0, DiffTaskModel::Relative)).data(DiffTaskModel::SortRole).toDouble());
  // Only significant changes; a name filter.
  proxy.setOnlySignificant(true);
  EXPECT_EQ(proxy.rowCount(), tasks.significantRows());
  EXPECT_GT(tasks.significantRows(), 0);
  for (int r = 0; r < proxy.rowCount(); ++r) EXPECT_TRUE(proxy.index(r, 0).data(DiffTaskModel::RowSignificantRole).toBool());
  proxy.setOnlySignificant(false);
  proxy.setFilterText(QStringLiteral("t10"));
  EXPECT_EQ(proxy.rowCount(), 5);
  proxy.setFilterText(QString());
  // The summary: totals, voluntary vs involuntary, per-CPU utilisation and the KS distances.
  QStringList labels;
  for (int r = 0; r < summary.rowCount(); ++r) labels << summary.index(r, DiffSummaryModel::MetricColumn).data().toString();
  for (const char* want : {"voluntary switches", "involuntary switches", "involuntary fraction", "migrations",
                           "CPU 0 utilisation", "wakeup latency KS distance", "busy CPU time"})
    EXPECT_TRUE(labels.contains(QString::fromLatin1(want))) << want;
  const int ks = static_cast<int>(labels.indexOf(QStringLiteral("wakeup latency KS distance")));
  EXPECT_EQ(summary.index(ks, DiffSummaryModel::DeltaColumn).data().toString(), QString::number(diff->wakeupLatencyKs, 'f', 3));
  // A distance has no direction: a significant one is bold, never shaded as "B higher" (or lower).
  {
    // A run against itself, its latency distributions then moved apart by hand.
    auto apart = core::analysis::diffRuns(*a, sa, "smt", *a, sa, "smt again");
    apart.wakeupLatencyKs = 0.9;
    apart.a.stats.wakeupLatency.count = apart.b.stats.wakeupLatency.count = 100;
    auto task = std::find_if(apart.tasks.begin(), apart.tasks.end(), [](const auto& t) { return t.a && t.b; });
    ASSERT_NE(task, apart.tasks.end());
    task->wakeupLatencyKs = 0.9;
    task->a->wakeupLatency.count = task->b->wakeupLatency.count = 100;
    DiffSummaryModel apartSummary;
    DiffTaskModel apartTasks;
    apartSummary.setDiff(std::make_shared<const core::analysis::RunDiff>(apart));
    apartTasks.setDiff(std::make_shared<const core::analysis::RunDiff>(apart));
    ASSERT_TRUE(apartSummary.index(ks, DiffSummaryModel::DeltaColumn).data(DiffTaskModel::SignificantRole).toBool());
    for (int c = 0; c < DiffSummaryModel::ColumnCount; ++c)
      EXPECT_FALSE(apartSummary.index(ks, c).data(Qt::BackgroundRole).isValid()) << c;
    EXPECT_TRUE(apartSummary.index(ks, DiffSummaryModel::DeltaColumn).data(Qt::FontRole).value<QFont>().bold());
    const int taskRow = static_cast<int>(task - apart.tasks.begin());
    const QModelIndex cell = apartTasks.index(taskRow, DiffTaskModel::ksColumn());
    ASSERT_TRUE(cell.data(DiffTaskModel::SignificantRole).toBool());
    EXPECT_FALSE(cell.data(Qt::BackgroundRole).isValid());
    EXPECT_TRUE(cell.data(Qt::FontRole).value<QFont>().bold());
  }
  // Shares are percentages; their differences are percentage points.
  const int fraction = static_cast<int>(labels.indexOf(QStringLiteral("involuntary fraction")));
  EXPECT_TRUE(summary.index(fraction, DiffSummaryModel::AColumn).data().toString().endsWith(QStringLiteral(" %")));
  EXPECT_TRUE(summary.index(fraction, DiffSummaryModel::DeltaColumn).data().toString().endsWith(QStringLiteral(" pp")));
  EXPECT_EQ(formatMetric(MetricKind::Share, -0.022, true), QStringLiteral("-2.2 pp"));
  // Neither synthetic trace knows a tgid: the tab leaves out a Process column that would repeat the comm.
  DiffView view;
  view.setDiff(diff, QStringLiteral("Whole trace"), QString());
  for (const auto& t : diff->tasks) ASSERT_EQ(t.process, t.comm);
  EXPECT_TRUE(view.taskView()->isColumnHidden(DiffTaskModel::ProcessColumn));
  tasks.setDiff(nullptr);
  summary.setDiff(nullptr);
  EXPECT_EQ(tasks.rowCount(), 0);
  EXPECT_EQ(summary.rowCount(), 0);
}

TEST(GuiWindow, CompareAlignAtMarkersDiffAndExport) {
  ensureApp();
  const QString a = testData("ftrace/good/tracefs_tgid.txt");
  const QString b = testData("ftrace/good/tracefs_noirq.txt");
  MainWindow w(std::make_shared<FakeBackend>());
  showQuietly(w, 1400, 900);
  w.openComparison(a, b);
  ASSERT_TRUE(waitIdle(w));
  ASSERT_TRUE(w.errors().isEmpty()) << w.errors().join(QLatin1Char('\n')).toStdString();
  const auto recs = w.runs()->recordings();
  ASSERT_EQ(recs.size(), 2u);
  const int ra = recs[0], rb = recs[1];
  EXPECT_EQ(w.runs()->run(ra)->path, QFileInfo(a).absoluteFilePath());
  EXPECT_EQ(w.runs()->run(rb)->path, QFileInfo(b).absoluteFilePath());
  // The comparison shows the Diff tab, B against A, tasks matched by comm within process.
  EXPECT_EQ(w.tabs()->currentWidget(), w.diffView());
  EXPECT_EQ(w.diffView()->runA(), ra);
  EXPECT_EQ(w.diffView()->runB(), rb);
  const auto* diff = w.diffView()->taskModel()->diff();
  ASSERT_NE(diff, nullptr);
  auto group = [&](const std::string& comm) -> const core::analysis::TaskDiff* {
    for (const auto& t : diff->tasks)
      if (t.comm == comm) return &t;
    return nullptr;
  };
  ASSERT_NE(group("cc1plus"), nullptr);
  // Worked out from the two files with awk, not read from SchedLab: four
  // cc1plus tids in each (13747, 13751, 13759, 13786); CPU time per comm =
  // the sum over sched_switch lines of (this switch - the previous switch or
  // first event of that CPU) for prev_comm, plus each CPU's last task up to the
  // trace's last timestamp. cc1plus: A 22.407 ms, B 36.365 ms (+13.958 ms, the
  // largest change of any comm; sh, the next, +0.335 ms).
  EXPECT_EQ(group("cc1plus")->tasksA, 4u);
  EXPECT_EQ(group("cc1plus")->tasksB, 4u);
  EXPECT_EQ(group("cc1plus")->a->runtimeNs, 22407000);
  EXPECT_EQ(group("cc1plus")->b->runtimeNs, 36365000);
  EXPECT_TRUE(w.diffView()->statusText().contains(QStringLiteral("changed significantly")));

  // One time scale: both panes draw from the one view state; aligned at starts by default.
  const int64_t firstA = w.runs()->run(ra)->model->firstTs;
  const int64_t firstB = w.runs()->run(rb)->model->firstTs;
  EXPECT_EQ(w.alignment(), MainWindow::Alignment::Starts);
  EXPECT_EQ(w.runs()->run(ra)->render->origin, firstA);
  EXPECT_EQ(w.runs()->run(rb)->render->origin, firstB);
  // Markers at 2 ms in A and 5 ms in B; aligning puts both at relative 0.
  w.setMarker(ra, firstA + 2000000);
  w.setMarker(rb, firstB + 5000000);
  EXPECT_EQ(w.runs()->run(rb)->render->origin, firstB);  // not aligned yet
  w.setAlignment(MainWindow::Alignment::Markers);
  EXPECT_EQ(w.runs()->run(ra)->render->origin, firstA + 2000000);
  EXPECT_EQ(w.runs()->run(rb)->render->origin, firstB + 5000000);
  EXPECT_EQ(w.timeline()->pane(rb)->run().render->origin, firstB + 5000000);
  EXPECT_EQ(w.viewState()->begin(), -5000000);  // B starts 5 ms before its marker
  // A range selected after the markers covers each run from its own marker.
  w.viewState()->setSelection(TimelineViewState::Range{0, 3000000});
  w.viewState()->commitSelection();
  ASSERT_TRUE(waitIdle(w));
  EXPECT_EQ(w.runs()->run(ra)->stats->range.from, firstA + 2000000);
  EXPECT_EQ(w.runs()->run(rb)->stats->range.from, firstB + 5000000);
  EXPECT_EQ(w.runs()->run(rb)->stats->range.to, firstB + 8000000);
  ASSERT_NE(w.diffView()->taskModel()->diff(), nullptr);
  EXPECT_EQ(w.diffView()->taskModel()->diff()->b.stats.range.from, firstB + 5000000);
  // The key M sets a marker where the mouse is, in the pane under it.
  TimelinePane* paneA = w.timeline()->pane(ra);
  QTest::mouseMove(paneA, QPoint(kGutterWidth + 200, app::render::kPaneHeaderHeight + 10));
  ASSERT_TRUE(w.viewState()->cursor().has_value());
  const int64_t cursor = *w.viewState()->cursor();
  const int64_t originBefore = w.runs()->run(ra)->render->origin;
  w.setMarkerAtCursor();
  EXPECT_EQ(w.runs()->run(ra)->marker, originBefore + cursor);
  EXPECT_EQ(w.runs()->run(ra)->render->origin, originBefore + cursor);  // still aligned at markers
  w.viewState()->setSelection(std::nullopt);
  w.viewState()->commitSelection();
  w.setAlignment(MainWindow::Alignment::Starts);
  EXPECT_EQ(w.runs()->run(ra)->render->origin, firstA);
  EXPECT_EQ(w.viewState()->begin(), 0);
  ASSERT_TRUE(waitIdle(w));

  // The Diff tab's table sorts by a click on a header (here: runtime change, descending).
  QTableView* table = w.diffView()->taskView();
  const int delta = DiffTaskModel::column(0, DiffTaskModel::Delta);
  table->sortByColumn(delta, Qt::DescendingOrder);
  EXPECT_TRUE(sortedDescending(*table->model(), delta));
  EXPECT_EQ(table->model()->index(0, DiffTaskModel::CommColumn).data().toString(), QStringLiteral("cc1plus"));  // +13.958 ms (above)
  w.diffView()->setPair(rb, ra);  // swapped: the change flips sign
  ASSERT_TRUE(waitIdle(w));
  EXPECT_EQ(w.diffView()->taskModel()->diff()->a.label, w.runs()->run(rb)->title.toStdString());

  // Export from the GUI: the dialog's defaults are the compared runs; a PDF in a temp folder.
  ExportReportDialog dialog(*w.runs(), w.defaultExportRuns(), std::nullopt, QStringLiteral("/tmp/x.pdf"));
  if (const QString shots = qEnvironmentVariable("SCHEDLAB_SCREENSHOT_DIR"); !shots.isEmpty()) {
    dialog.grab().save(QDir(shots).filePath(QStringLiteral("export-dialog.png")));
    CompareDialog compare({a, b}, QString());
    compare.setFiles(a, b);
    compare.grab().save(QDir(shots).filePath(QStringLiteral("compare-dialog.png")));
  }
  dialog.setFormat(app::report::ReportFormat::Json);
  dialog.accept();
  EXPECT_EQ(dialog.result(), QDialog::Accepted) << dialog.errorText().toStdString();
  EXPECT_EQ(dialog.options().path, QStringLiteral("/tmp/x.json"));
  EXPECT_EQ(dialog.options().runIds.size(), 2u);
  QTemporaryDir dir;
  ExportOptions options;
  options.path = dir.filePath(QStringLiteral("compare.pdf"));
  options.runIds = w.defaultExportRuns();
  QSignalSpy spy(&w, &MainWindow::reportExported);
  w.exportReport(options);
  EXPECT_GE(w.runningJobs(), 1);  // off the GUI thread
  ASSERT_TRUE(waitSignal(spy));
  EXPECT_TRUE(spy.front().at(1).toBool()) << w.errors().join(QLatin1Char('\n')).toStdString();
  ASSERT_TRUE(QFileInfo::exists(options.path));
  EXPECT_GT(QFileInfo(options.path).size(), 5000);
  // Without pdftotext the test ends skipped, saying so (below).
  const bool readPdf = havePdftotext();
  const QString text = readPdf ? pdfText(options.path) : QString();
  for (const char* name : {"cc1plus", "memfd:sealed-91", "tracefs_tgid", "tracefs_noirq"})
    EXPECT_TRUE(!readPdf || text.contains(QString::fromLatin1(name))) << name;
  // Three recordings are one too many; a cancelled export writes nothing.
  options.runIds = {ra, rb, ra + 1000};
  EXPECT_TRUE(planExport(*w.runs(), options).has_value());  // unknown ids are ignored
  const int rc = w.addModel(smtRun());
  options.runIds = {ra, rb, rc};
  EXPECT_FALSE(planExport(*w.runs(), options).has_value());
  options.runIds = {ra};
  options.path = dir.filePath(QStringLiteral("cancelled.pdf"));
  spy.clear();
  w.exportReport(options);
  w.cancelAllJobs();
  ASSERT_TRUE(waitSignal(spy));
  ASSERT_TRUE(waitIdle(w));
  if (!readPdf) GTEST_SKIP() << kNoPdftotext;
}

// The same inputs give the same report from File -> Export report... and from
// `schedlab-cli report` (one code path): JSON equal but for the date, PDF text too.
TEST(GuiExport, SameContentAsCliReport) {
  ensureApp();
  const QString a = QFileInfo(testData("ftrace/good/tracefs_tgid.txt")).absoluteFilePath();
  const QString b = QFileInfo(testData("ftrace/good/tracefs_noirq.txt")).absoluteFilePath();
  const auto backend = defaultReplayBackend();
  bool haveCfs = false;
  for (const auto& m : backend->models()) haveCfs = haveCfs || m.name == "cfs";
  ASSERT_TRUE(haveCfs) << "the engine backend (replay/ is always built) offers cfs";
  QTemporaryDir dir;
  MainWindow w(backend);
  showQuietly(w, 1200, 800);
  w.openComparison(a, b);
  ASSERT_TRUE(waitIdle(w));
  const auto recs = w.runs()->recordings();
  ASSERT_EQ(recs.size(), 2u);
  ReplayRequest req;
  req.model = "cfs";
  w.startReplay(recs[0], req);
  ASSERT_TRUE(waitIdle(w, 120000));
  ASSERT_EQ(w.runs()->count(), 3) << w.errors().join(QLatin1Char('\n')).toStdString();
  w.viewState()->setSelection(TimelineViewState::Range{1000000, 9000000});
  w.viewState()->commitSelection();
  ASSERT_TRUE(waitIdle(w));
  for (const auto format : {app::report::ReportFormat::Json, app::report::ReportFormat::Pdf}) {
    const QString ext = format == app::report::ReportFormat::Json ? QStringLiteral("json") : QStringLiteral("pdf");
    const QString guiPath = dir.filePath(QStringLiteral("gui.") + ext);
    const QString cliPath = dir.filePath(QStringLiteral("cli.") + ext);
    ExportOptions options;
    options.path = guiPath;
    options.format = format;
    options.runIds = w.runs()->ids();
    options.range = w.viewState()->selection();
    QSignalSpy spy(&w, &MainWindow::reportExported);
    w.exportReport(options);
    ASSERT_TRUE(waitSignal(spy));
    ASSERT_TRUE(spy.front().at(1).toBool()) << w.errors().join(QLatin1Char('\n')).toStdString();
    // What the Export dialog says the command line is, run through the CLI.
    const QString command = equivalentCommand(*w.runs(), options);
    EXPECT_TRUE(command.contains(QStringLiteral("--from 1000000ns --to 9000000ns"))) << command.toStdString();
    std::vector<std::string> args{a.toStdString(), b.toStdString(), "--from", "1ms", "--to", "9ms",
                                  "-o", cliPath.toStdString(), "--replay", "cfs"};
    std::ostringstream out, err;
    ASSERT_EQ(app::cli::reportCommand(args, out, err), 0) << err.str();
    QString gui, cli;
    if (format == app::report::ReportFormat::Json) {
      gui = readText(guiPath);
      cli = readText(cliPath);
    } else {
      // The JSON half ran above; the PDF half needs its text.
      if (!havePdftotext()) GTEST_SKIP() << kNoPdftotext;
      gui = pdfText(guiPath);
      cli = pdfText(cliPath);
    }
    ASSERT_FALSE(gui.isEmpty());
    // The generation date is the only difference allowed.
    static const QRegularExpression date(QStringLiteral(R"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?Z?)"));
    gui.replace(date, QStringLiteral("DATE"));
    cli.replace(date, QStringLiteral("DATE"));
    EXPECT_EQ(gui.toStdString(), cli.toStdString()) << ext.toStdString();
    EXPECT_TRUE(gui.contains(QStringLiteral("cc1plus")));
    EXPECT_TRUE(gui.contains(format == app::report::ReportFormat::Json ? QStringLiteral("\"cfs\"") : QStringLiteral("cfs")));
  }
}

// Files dropped on the window open as runs (xdotool cannot drop under Xvfb:
// synthetic drag-enter and drop events with file URLs, as the platform sends them).
TEST(GuiWindow, DroppedFilesOpen) {
  ensureApp();
  const QString a = testData("ftrace/good/tracefs_tgid.txt");
  const QString b = testData("ftrace/good/trace_pipe.txt");
  MainWindow w(std::make_shared<FakeBackend>());
  showQuietly(w, 1200, 800);
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(a), QUrl::fromLocalFile(b)});
  QDragEnterEvent enter(QPoint(400, 300), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  enter.setAccepted(false);
  QCoreApplication::sendEvent(&w, &enter);
  EXPECT_TRUE(enter.isAccepted());
  QDropEvent drop(QPointF(400, 300), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  drop.setAccepted(false);
  QCoreApplication::sendEvent(&w, &drop);
  EXPECT_TRUE(drop.isAccepted());
  ASSERT_TRUE(waitIdle(w));
  ASSERT_EQ(w.runs()->count(), 2) << w.errors().join(QLatin1Char('\n')).toStdString();
  QStringList paths;
  for (int id : w.runs()->recordings()) paths << w.runs()->run(id)->path;
  EXPECT_EQ(paths, (QStringList{QFileInfo(a).absoluteFilePath(), QFileInfo(b).absoluteFilePath()}));
  // Two runs open: the Diff tab compares them.
  EXPECT_NE(w.diffView()->taskModel()->diff(), nullptr);
  // Text without file URLs is refused at the door.
  QMimeData text;
  text.setText(QStringLiteral("not a file"));
  QDragEnterEvent refused(QPoint(10, 10), Qt::CopyAction, &text, Qt::LeftButton, Qt::NoModifier);
  refused.setAccepted(false);
  QCoreApplication::sendEvent(&w, &refused);
  EXPECT_FALSE(refused.isAccepted());
}


TEST(GuiWindow, AFolderOfUnrelatedRecordingsIsOfferedAsOneRunEach) {
  // Two unrelated CTF traces in one folder: not opened as one run; the window
  // names the folder's recordings, and opening them gives one run each.
  ensureApp();
  QTemporaryDir tmp;
  ASSERT_TRUE(tmp.isValid());
  const QString lttng = tmp.filePath(QStringLiteral("a/synthetic-lttng"));
  const QString perf = tmp.filePath(QStringLiteral("b/ctf"));
  for (const auto& [from, to] : {std::pair{testData("ctf/synthetic-lttng"), lttng}, std::pair{testData("ctf/perf-sleep/ctf"), perf}}) {
    std::filesystem::create_directories(to.toStdString());
    std::filesystem::copy(from.toStdString(), to.toStdString(), std::filesystem::copy_options::recursive);
  }
  MainWindow w(std::make_shared<FakeBackend>());
  showQuietly(w, 1200, 800);
  QSignalSpy offered(&w, &MainWindow::separateRunsFound);
  w.openFile(tmp.path());
  ASSERT_TRUE(waitIdle(w));
  EXPECT_EQ(w.runs()->count(), 0);
  ASSERT_EQ(offered.count(), 1);
  EXPECT_EQ(offered.at(0).at(0).toString(), QFileInfo(tmp.path()).absoluteFilePath());
  const QStringList runs = offered.at(0).at(1).toStringList();
  EXPECT_EQ(runs, (QStringList{lttng, perf}));
  ASSERT_EQ(w.errors().size(), 1);
  EXPECT_TRUE(w.errors().front().contains(QStringLiteral("holds 2 unrelated CTF traces")))
      << w.errors().front().toStdString();
  w.openFiles(runs);
  ASSERT_TRUE(waitIdle(w));
  ASSERT_EQ(w.runs()->count(), 2) << w.errors().join(QLatin1Char('\n')).toStdString();
}


namespace {
bool offersBaseline(const app::gui::ReplayBackend& backend) {
  const auto models = backend.models();
  return std::any_of(models.begin(), models.end(), [](const auto& m) { return m.name == "baseline"; });
}
}  // namespace

// A replay made in the GUI carries its fidelity against the recording, and the
// Fidelity tab shows every metric of it with the model's verdict.
TEST(GuiFidelity, ReplayShowsItsVerdictsInTheFidelityTab) {
  ensureApp();
  const auto backend = defaultReplayBackend();
  if (!offersBaseline(*backend)) GTEST_SKIP() << "this build has no replay engine";
  MainWindow w(backend);
  showQuietly(w, 1200, 800);
  w.openFiles({QFileInfo(testData("replay/pipe-small.txt")).absoluteFilePath()});
  ASSERT_TRUE(waitIdle(w));
  ASSERT_EQ(w.runs()->recordings().size(), 1u);
  EXPECT_EQ(w.fidelityView()->shownRun(), -1);  // nothing replayed yet
  ReplayRequest req;
  req.model = "baseline";
  w.startReplay(w.runs()->recordings()[0], req);
  ASSERT_TRUE(waitIdle(w, 120000));
  ASSERT_EQ(w.runs()->count(), 2) << w.errors().join(QLatin1Char('\n')).toStdString();
  const int replayId = w.runs()->replaysOf(w.runs()->recordings()[0]).at(0);
  EXPECT_EQ(w.fidelityView()->shownRun(), replayId);
  const app::gui::Run* r = w.runs()->run(replayId);
  ASSERT_TRUE(r && r->model && r->model->replay && r->model->replay->fidelity);
  // The replay conserves every task's work exactly, whatever else it does.
  EXPECT_EQ(w.fidelityView()->verdictOf(QStringLiteral("cpu_work_ns")), QStringLiteral("pass"));
  for (const auto& m : r->model->replay->fidelity->metrics)
    EXPECT_EQ(w.fidelityView()->verdictOf(QString::fromStdString(m.key)),
              QString::fromStdString(std::string(core::analysis::toString(m.verdict))))
        << m.key;
}

// A replay read back from a file carries a fidelity but no "not modelled"
// counts: the tab says nothing of them rather than "none"; with counts that
// are all zero it says none; with some, it names them.
TEST(GuiFidelity, TabSaysNothingOfCountsItDoesNotHave) {
  ensureApp();
  const auto shownFor = [](std::vector<core::ReplayCaveat> unmodelled) {
    RunSet runs;
    app::gui::FidelityView view(runs);
    app::gui::Run recording;
    recording.model = apptest::smtModel();
    recording.title = QStringLiteral("recording");
    const int recordingId = runs.add(recording);
    auto replayed = apptest::smtModel();
    core::ReplayInfo info;
    info.model = "eevdf";
    info.fidelity = std::make_shared<core::analysis::Fidelity>();
    info.unmodelled = std::move(unmodelled);
    replayed->replay = info;
    app::gui::Run replay;
    replay.parentId = recordingId;
    replay.model = replayed;
    replay.title = QStringLiteral("replay");
    const int replayId = runs.add(replay);
    view.showRun(replayId);
    return view.shownRun() == replayId ? view.unmodelledText().toStdString() : std::string("(replay not shown)");
  };
  EXPECT_EQ(shownFor({}), "");
  EXPECT_EQ(shownFor({{"wakeups_self", "wakeups by the task itself", 0}}),
            "Not modelled exactly: none of the counted kinds.");
  EXPECT_EQ(shownFor({{"wakeups_self", "wakeups by the task itself", 3}, {"tasks_never_ran", "tasks never running", 0},
                      {"lost_event_ranges", "lost-event ranges", 1}}),
            "Not modelled exactly: wakeups by the task itself: 3; lost-event ranges: 1.");
}

// A distance is of the two runs together: it reads as one, in the Ratio /
// distance column; a task's share difference is the difference of the shares
// as printed, and never "-0.00".
TEST(GuiFidelity, DistancesAndDifferencesReadAsThey) {
  ensureApp();
  RunSet runs;
  app::gui::FidelityView view(runs);
  app::gui::Run recording;
  recording.model = apptest::smtModel();
  recording.title = QStringLiteral("recording");
  const int recordingId = runs.add(recording);
  auto fidelity = std::make_shared<core::analysis::Fidelity>();
  core::analysis::FidelityMetric ks;
  ks.key = "wakeup_latency_ks";
  ks.label = "wakeup latency KS distance";
  ks.unit = core::analysis::FidelityMetric::Unit::Distance;
  ks.measure = 0.25;
  ks.bound = "\u2264 0.25";
  fidelity->metrics.push_back(ks);
  core::analysis::TaskFidelity rounded;  // 7.344 % and 7.405 %: printed 7.34 and 7.41
  rounded.tid = 1;
  rounded.shareRecorded = 0.07344;
  rounded.shareReplayed = 0.07405;
  core::analysis::TaskFidelity tiny;  // 0.0001 pp less
  tiny.tid = 2;
  tiny.shareRecorded = 0.500001;
  tiny.shareReplayed = 0.5;
  fidelity->tasks = {rounded, tiny};
  auto replayed = apptest::smtModel();
  core::ReplayInfo info;
  info.model = "eevdf";
  info.fidelity = fidelity;
  replayed->replay = info;
  app::gui::Run replay;
  replay.parentId = recordingId;
  replay.model = replayed;
  replay.title = QStringLiteral("replay");
  view.showRun(runs.add(replay));
  const auto tables = view.findChildren<QTableWidget*>();
  ASSERT_EQ(tables.size(), 2);
  QTableWidget* metrics = tables[0];
  QTableWidget* tasks = tables[1];
  ASSERT_EQ(metrics->rowCount(), 1);
  EXPECT_EQ(metrics->horizontalHeaderItem(3)->text(), QStringLiteral("Ratio / distance"));
  EXPECT_EQ(metrics->item(0, 3)->text(), QStringLiteral("0.250"));
  EXPECT_TRUE(metrics->item(0, 2) == nullptr || metrics->item(0, 2)->text().isEmpty()) << "no value of the replay alone";
  EXPECT_EQ(metrics->columnSpan(0, 1), 2);
  ASSERT_EQ(tasks->rowCount(), 2);
  EXPECT_EQ(tasks->item(0, 2)->text(), QStringLiteral("7.34"));
  EXPECT_EQ(tasks->item(0, 3)->text(), QStringLiteral("7.41"));
  EXPECT_EQ(tasks->item(0, 4)->text(), QStringLiteral("0.07"));
  EXPECT_EQ(tasks->item(1, 4)->text(), QStringLiteral("0.00"));
}

// What the workload could not represent shows in the Fidelity tab too, not
// only in reports: here the scheduler settings saved beside the recording
// (core/sched_settings.h) say autogroup was on, which a replay asked to run
// on flat queues (autogroup=off) does not model; by default it models it and
// says so on the Model line.
TEST(GuiFidelity, TabListsWhatTheReplayDidNotModel) {
  ensureApp();
  const auto backend = defaultReplayBackend();
  if (!offersBaseline(*backend)) GTEST_SKIP() << "this build has no replay engine";
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString trace = dir.filePath(QStringLiteral("pipe-small.txt"));
  ASSERT_TRUE(QFile::copy(testData("replay/pipe-small.txt"), trace));
  auto replayedText = [&](const char* settings, const char* autogroup) {
    QFile sidecar(trace + QStringLiteral(".sched"));
    EXPECT_TRUE(sidecar.open(QIODevice::WriteOnly | QIODevice::Truncate));
    sidecar.write(settings);
    sidecar.close();
    MainWindow w(backend);
    showQuietly(w, 1200, 800);
    w.openFiles({trace});
    if (!waitIdle(w) || w.runs()->recordings().size() != 1) return QStringLiteral("(not opened)");
    ReplayRequest req;
    req.model = "baseline";
    if (autogroup) req.params = {{"autogroup", autogroup}};
    w.startReplay(w.runs()->recordings()[0], req);
    if (!waitIdle(w, 120000) || w.runs()->count() != 2) return w.errors().join(QLatin1Char('\n'));
    return w.fidelityView()->unmodelledText();
  };
  const QString modelled = replayedText("kernel.sched_autogroup_enabled = 1\n", nullptr);
  EXPECT_FALSE(modelled.contains(QStringLiteral("recorded with autogroup on"))) << modelled.toStdString();
  EXPECT_TRUE(modelled.contains(QStringLiteral(".\nModel: ")) && modelled.contains(QStringLiteral("autogroup: ")))
      << modelled.toStdString();
  const QString on = replayedText("kernel.sched_autogroup_enabled = 1\n", "off");
  EXPECT_TRUE(on.startsWith(QStringLiteral("Not modelled exactly: "))) << on.toStdString();
  EXPECT_TRUE(on.contains(QStringLiteral("recorded with autogroup on (kernel.sched_autogroup_enabled = 1 beside the "
                                         "trace): sessions' tasks competed as groups, replayed on flat runqueues "
                                         "(autogroup=off, or a model without groups): 1")))
      << on.toStdString();
  // The baseline (EEVDF of 6.18) also says what DELAY_DEQUEUE kept queued, as `replay` does.
  EXPECT_TRUE(on.contains(QStringLiteral(".\nModel: DELAY_DEQUEUE kept "))) << on.toStdString();
  // ... and how many recorded blocks it kept, as on `replay`'s Blocks: line.
  EXPECT_TRUE(on.contains(QStringLiteral(".\nBlocks: "))) << on.toStdString();
  EXPECT_TRUE(on.contains(QStringLiteral(" recorded blocks on a task's wakeup replayed"))) << on.toStdString();
  const QString off = replayedText("kernel.sched_autogroup_enabled = 0\n", nullptr);
  EXPECT_TRUE(off.startsWith(QStringLiteral("Not modelled exactly: "))) << off.toStdString();
  EXPECT_FALSE(off.contains(QStringLiteral("autogroup"))) << off.toStdString();
}

// The why-not-running views over tests/data/why/chain.txt (its schedule and the
// numbers are worked out in tests/core/why_test.cpp): a clicked slice's task gets
// its breakdown and critical path in the Why tab, its wakeup arrows and path over
// the pane; the Latency tab lists every task with wakeups, worst p99 first.
TEST(GuiWhy, ClickedTaskGetsBreakdownArrowsAndPath) {
  ensureApp();
  MainWindow w(std::make_shared<FakeBackend>());
  showQuietly(w, 1400, 900);
  w.openFile(QStringLiteral(SCHEDLAB_TEST_DATA "/why/chain.txt"));
  ASSERT_TRUE(waitIdle(w));
  ASSERT_EQ(w.runs()->recordings().size(), 1u);
  const int id = w.runs()->recordings().front();
  const auto& m = *w.runs()->run(id)->model;
  constexpr int64_t kT0 = 100'000'000'000, kUs = 1000;
  // The slice of a task on a CPU: the first whose task has that tid.
  const auto sliceOf = [&](int cpu, int tid) {
    SliceRef ref;
    ref.runId = id;
    ref.cpu = cpu;
    const auto& s = m.cpuSlices[static_cast<size_t>(cpu)];
    for (uint32_t i = 0; i < s.size(); ++i)
      if (s.kind[i] == core::SliceKind::Task && m.threads.tid[s.utid[i].value] == tid) {
        ref.row = i;
        ref.utid = s.utid[i];
        break;
      }
    return ref;
  };
  auto* why = w.whyController();
  ASSERT_NE(why, nullptr);
  w.selectSlice(sliceOf(0, 103));  // taskC on CPU 0
  ASSERT_TRUE(waitIdle(w));
  const WhyResult* r = why->whyView()->result();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(m.threads.tid[r->why.utid.value], 103);
  EXPECT_EQ(r->why.criticalPath.segments.size(), 10u);
  EXPECT_EQ(why->whyView()->pathTable()->rowCount(), 10);
  TimelinePane* pane = w.timeline()->pane(id);
  ASSERT_NE(pane, nullptr);
  for (int tid : {101, 102, 103}) EXPECT_TRUE(pane->hasTaskRow(core::analysis::findTasks(m, std::to_string(tid)).front())) << tid;
  ASSERT_NE(pane->overlay(), nullptr);
  // C's one wakeup: by B on CPU 1 at 2800, switched in on CPU 0 at 3000; C woke nobody.
  ASSERT_EQ(pane->overlay()->arrows.size(), 1u);
  const WakeupArrow& c = pane->overlay()->arrows[0];
  EXPECT_EQ(c.wakeTs, kT0 + 2800 * kUs);
  EXPECT_EQ(c.runTs, kT0 + 3000 * kUs);
  EXPECT_EQ(c.fromCpu, 1);
  EXPECT_EQ(c.toCpu, 0);
  EXPECT_FALSE(c.irq);

  // A: woken by an interrupt at 100 (on CPU 1, run on CPU 0 at 300), and it woke B
  // at 1000 (on CPU 0; B ran on CPU 1 at 1200).
  w.selectSlice(sliceOf(0, 101));
  ASSERT_TRUE(waitIdle(w));
  ASSERT_EQ(pane->overlay()->arrows.size(), 2u);
  const WakeupArrow& irq = pane->overlay()->arrows[0];
  EXPECT_TRUE(irq.irq);
  EXPECT_TRUE(irq.incoming);
  EXPECT_EQ(irq.runTs - irq.wakeTs, 200 * kUs);
  const WakeupArrow& out = pane->overlay()->arrows[1];
  EXPECT_FALSE(out.incoming);
  EXPECT_EQ(out.wakeTs, kT0 + 1000 * kUs);
  EXPECT_EQ(out.toCpu, 1);
  why->arrowsAction()->setChecked(false);
  EXPECT_FALSE(pane->overlay()->showArrows);
  EXPECT_TRUE(pane->overlay()->showPath);

  // A path row's jump shows that piece: A's sleep 50..100 us. Selecting A replaced C's
  // result, so A's is read afresh.
  const WhyResult* a = why->whyView()->result();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(m.threads.tid[a->why.utid.value], 101);
  emit why->whyView()->jumpRequested(id, a->why.utid, kT0 + 50 * kUs, kT0 + 100 * kUs);
  const auto& v = w.viewState()->viewport();
  EXPECT_LE(v.start, 50 * kUs);
  EXPECT_GE(v.end(), 100 * kUs);

  // Latency tab: A, B, C and D were woken; p99 200 us for A, B and C, 100 us for D (last).
  // Its samples are computed once the tab is shown, not while it is hidden.
  auto* lat = why->latencyView();
  ASSERT_TRUE(waitIdle(w));
  EXPECT_EQ(lat->data(), nullptr);
  w.tabs()->setCurrentWidget(lat);
  ASSERT_TRUE(waitIdle(w));
  ASSERT_NE(lat->data(), nullptr);
  QAbstractItemModelTester tester(lat->table()->model(), QAbstractItemModelTester::FailureReportingMode::Warning);
  ASSERT_EQ(lat->table()->model()->rowCount(), 4);
  const auto p99 = [&](int row) {
    return lat->table()->model()->index(row, TaskLatencyModel::P99).data(TaskLatencyModel::kSortRole).toLongLong();
  };
  EXPECT_EQ(p99(0), 200 * kUs);
  EXPECT_EQ(p99(3), 100 * kUs);
  EXPECT_EQ(lat->table()->model()->index(3, TaskLatencyModel::Tid).data().toInt(), 104);
  QSignalSpy jumps(lat, &LatencyView::jumpRequested);
  emit lat->table()->doubleClicked(lat->table()->model()->index(3, 0));
  ASSERT_EQ(jumps.size(), 1);
  EXPECT_EQ(jumps[0][2].toLongLong(), kT0 + 1900 * kUs);  // D's one wakeup, its worst
  // Compare with a second run (the same recording again): the task is matched by
  // comm and every change is zero.
  w.openFile(QStringLiteral(SCHEDLAB_TEST_DATA "/why/chain.txt"));
  ASSERT_TRUE(waitIdle(w));
  ASSERT_EQ(w.runs()->recordings().size(), 2u);
  const int other = w.runs()->recordings().back();
  auto* combo = why->whyView()->findChild<QComboBox*>();
  ASSERT_NE(combo, nullptr);
  ASSERT_GE(combo->findData(other), 0);
  combo->setCurrentIndex(combo->findData(other));
  ASSERT_TRUE(waitIdle(w));
  ASSERT_NE(why->whyView()->result(), nullptr);
  ASSERT_TRUE(why->whyView()->result()->other.has_value());
  for (const auto& metric : why->whyView()->result()->other->diff.metrics) EXPECT_EQ(metric.delta(), 0) << metric.name;
  EXPECT_EQ(why->whyView()->result()->other->why.runnableNs, why->whyView()->result()->why.runnableNs);

  // One dot per wakeup (A, B, C, D); a click near 1.9 ms, 100 us is D's.
  EXPECT_EQ(lat->scatter()->dotCount(), 4u);
  emit lat->scatter()->clicked(1.95, 90);
  ASSERT_EQ(jumps.size(), 2);
  EXPECT_EQ(jumps[1][2].toLongLong(), kT0 + 1900 * kUs);
  EXPECT_EQ(jumps[1][3].toLongLong(), kT0 + 2000 * kUs);
}

// The Sweep tab over a results folder of one job made by `schedlab-cli sweep-job`:
// a row per job with its state, and the row opens the job's replay beside its
// recording, the very replay the job ran (same voluntary switches and wakeup
// latency p99 as its document); opening it again adds nothing.
TEST(GuiSweep, ARowOpensThatJobsReplayBesideItsRecording) {
  ensureApp();
  const auto backend = defaultReplayBackend();
  if (!backend->unavailableReason().isEmpty()) GTEST_SKIP() << "this build has no replay engine";
  QTemporaryDir tmp;
  const std::string dir = (tmp.path() + QStringLiteral("/results")).toStdString();
  const std::string trace = QFileInfo(testData("replay/pipe-small.txt")).absoluteFilePath().toStdString();
  std::ostringstream out, err;
  ASSERT_EQ(app::cli::run({"sweep", "-o", dir, "--trace", trace, "--model", "bfs", "--param", "hz=100",
                           "--no-reference", "--emit", "parallel"},
                          out, err),
            0)
      << err.str();
  auto manifest = app::sweep::readManifest(dir);
  ASSERT_TRUE(manifest && manifest->size() == 1u);
  const std::string id = manifest->front().id;
  ASSERT_EQ(app::cli::run({"sweep-job", dir, id}, out, err), 0) << err.str();

  MainWindow w(backend);
  showQuietly(w, 1200, 800);
  auto view = openSweepResults(w, QString::fromStdString(dir));
  ASSERT_TRUE(view) << view.error().message();
  const SweepTableModel* model = (*view)->model();
  ASSERT_EQ(model->rowCount(), 1);
  EXPECT_EQ(model->data(model->index(0, SweepTableModel::State), Qt::DisplayRole).toString(), QStringLiteral("done"));
  EXPECT_EQ(model->data(model->index(0, SweepTableModel::Parameters), Qt::DisplayRole).toString(), QStringLiteral("hz=100"));
  EXPECT_EQ(w.tabs()->currentWidget(), *view);

  (*view)->openJob(0);
  ASSERT_TRUE(waitIdle(w, 120000));
  ASSERT_EQ(w.runs()->count(), 2) << w.errors().join(QLatin1Char('\n')).toStdString();
  const int recording = w.runs()->recordings().at(0);
  const app::gui::Run* replay = w.runs()->run(w.runs()->replaysOf(recording).at(0));
  ASSERT_TRUE(replay && replay->model && replay->model->replay && replay->model->replay->fidelity);
  EXPECT_EQ(replay->model->replay->model, "bfs");

  QFile doc(QString::fromStdString(app::sweep::resultPath(dir, id)));
  ASSERT_TRUE(doc.open(QIODevice::ReadOnly));
  const QJsonArray metrics =
      QJsonDocument::fromJson(doc.readAll())["validation"].toObject()["fidelity"].toObject()["metrics"].toArray();
  size_t compared = 0;
  for (const auto& m : replay->model->replay->fidelity->metrics) {
    if (m.key != "switches_voluntary" && m.key != "wakeup_latency_p99_ns") continue;
    for (const auto& j : metrics)
      if (j.toObject()["key"].toString().toStdString() == m.key) {
        ASSERT_TRUE(m.replayed.has_value());
        EXPECT_EQ(*m.replayed, j.toObject()["replayed"].toDouble()) << m.key;
        ++compared;
      }
  }
  EXPECT_EQ(compared, 2u);

  (*view)->openJob(0);
  ASSERT_TRUE(waitIdle(w));
  EXPECT_EQ(w.runs()->count(), 2);
}

}  // namespace

// File -> Export -> Perfetto trace...: the chosen run, written off the GUI
// thread, reads back as a Perfetto trace with the run's schedule.
TEST(GuiExport, PerfettoTraceOfTheChosenRun) {
  ensureApp();
  const QString path = QFileInfo(testData("ftrace/good/tracefs_tgid.txt")).absoluteFilePath();
  QTemporaryDir dir;
  MainWindow w(std::make_shared<FakeBackend>());
  showQuietly(w, 1200, 800);
  w.openFiles({path});
  ASSERT_TRUE(waitIdle(w));
  ASSERT_EQ(w.runs()->count(), 1) << w.errors().join(QLatin1Char('\n')).toStdString();
  const QString out = dir.filePath(QStringLiteral("run.perfetto-trace"));
  QSignalSpy spy(&w, &MainWindow::perfettoExported);
  w.exportPerfetto(out);
  ASSERT_TRUE(waitSignal(spy));
  EXPECT_TRUE(spy.front().at(1).toBool()) << w.errors().join(QLatin1Char('\n')).toStdString();
  auto back = importers::importTrace(out.toStdString());
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->model->format, "perfetto");
  const auto& original = *w.runs()->run(w.runs()->ids().front())->model;
  EXPECT_EQ(back->model->sliceCount(), original.sliceCount());
  EXPECT_EQ(back->model->firstTs, original.firstTs);
}
