// GUI smoke tests, offscreen: the item models pass QAbstractItemModelTester;
// the main window opens synthetic and real traces, zooms, selects a range that
// the statistics follow, finds tasks, shows a clicked slice's details, replays
// (through a fake backend, and the real one when built) and closes runs; bad
// files give a message, never a crash.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QSettings>
#include <QChart>
#include <QDir>
#include <QFile>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <filesystem>

#include "app/gui/details_view.h"
#include "app/gui/main_window.h"
#include "app/gui/replay_dialog.h"
#include "app/gui/runs_model.h"
#include "app/gui/stats_view.h"
#include "app/gui/task_table_model.h"
#include "app/gui/timeline_view.h"
#include "app/render/timeline_image.h"
#include "test_models.h"

// fontconfig keeps its caches until exit by design; LeakSanitizer (asan preset)
// would report them as leaks of this test.
extern "C" const char* __lsan_default_suppressions();
extern "C" const char* __lsan_default_suppressions() { return "leak:libfontconfig\nleak:libQt6Gui\nleak:libdbus\n"; }

namespace {

using namespace app::gui;

void ensureApp() {
  if (QCoreApplication::instance()) return;
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  static int argc = 1;
  static char arg0[] = "gui_test";
  static char* argv[] = {arg0, nullptr};
  new QApplication(argc, argv);
  QCoreApplication::setOrganizationName(QStringLiteral("SchedLabTest"));
  static QTemporaryDir settings;  // never touch the user's settings
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings.path());
}

bool waitIdle(MainWindow& w, int timeoutMs = 60000) {
  QElapsedTimer t;
  t.start();
  QTest::qWait(30);
  while (!w.isIdle()) {
    if (t.elapsed() > timeoutMs) return false;
    QTest::qWait(20);
  }
  QTest::qWait(10);
  return true;
}

class FakeBackend : public ReplayBackend {
 public:
  std::vector<ReplayModelInfo> models() const override {
    return {{"fake-coresched", "synthetic SMT replay", {{"smt_factor", "0.6", "speed of each sibling when both run"}}},
            {"fake-fail", "always fails", {}}};
  }
  core::Result<std::shared_ptr<core::TraceModel>> run(const std::shared_ptr<const core::TraceModel>&,
                                                      const ReplayRequest& req, std::stop_token,
                                                      const std::function<void(double)>& progress) const override {
    if (req.model == "fake-fail") return core::Error("policy refused the workload (test)");
    if (progress) progress(0.5);
    auto m = apptest::smtModel();
    core::ReplayInfo info;
    info.model = req.model;
    for (const auto& [k, v] : req.params) info.params.push_back({k, v, ""});
    m->replay = info;
    return m;
  }
};

std::shared_ptr<core::TraceModel> withFile(std::shared_ptr<core::TraceModel> m, const std::string& f) {
  m->sourceFiles = {f};
  return m;
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
  replayModel->replay = core::ReplayInfo{"cfs", "", {{"hz", "250", "tick"}}};
  const int ra = runs.add(mk(replayModel, a));
  EXPECT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.rowCount(model.index(0, 0)), 1);
  EXPECT_EQ(model.runIdAt(model.index(0, 0, model.index(0, 0))), ra);
  EXPECT_EQ(model.indexOfRun(ra).parent(), model.index(0, 0));
  EXPECT_TRUE(model.data(model.index(0, RunsModel::DetailsColumn, model.index(0, 0))).toString().contains(QStringLiteral("hz=250")));
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
  w.setInteractive(false);
  w.resize(1400, 900);
  w.show();
  const int rec = w.addModel(withFile(apptest::smtModel(), "/synthetic/smt.trace"));
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
  ASSERT_EQ(charts.size(), 5u);
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

  // Task rows.
  w.timeline()->showTaskRow(rec, hit->utid);
  EXPECT_EQ(pane->rows().size(), 5u);
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
  EXPECT_FALSE(parseAssignments("a=1, b = 2\nc=3").value().empty());
  EXPECT_FALSE(parseAssignments("=1").has_value());
}

// Every recorded trace and the public trace.dat / CTF traces open and draw.
TEST(GuiRealTraces, RecordedAndPublicTracesOpen) {
  ensureApp();
  namespace fs = std::filesystem;
  const fs::path root = SCHEDLAB_SHARED_TRACES;
  if (!fs::exists(root)) GTEST_SKIP() << "no shared traces at " << root;
  QStringList files;
  for (const char* d : {"hackbench-proc", "nicemix", "pipe-threads", "sysbench-mix"})
    for (const char* f : {"trace.txt", "trace.dat", "perf.data", "perf-script.txt", "ctf"}) {
      const fs::path p = root / "recorded" / d / f;
      if (fs::exists(p)) files << QString::fromStdString(p.string());
    }
  for (const char* f : {"public/trappy/raw_trace.dat", "public/lisa/example_rtapp/trace.dat", "public/lisa/sched_load/trace.dat",
                        "public/tracecompass-test-traces/bug446190", "public/babeltrace/lttng-tracefile-rotation/kernel",
                        "public/tracecompass-test-traces/perf-taskset2"})
    if (fs::exists(root / f)) files << QString::fromStdString((root / f).string());
  MainWindow w(defaultReplayBackend());
  w.setInteractive(false);
  w.resize(1400, 900);
  w.show();
  w.openFiles(files);
  ASSERT_TRUE(waitIdle(w, 300000));
  // Formats whose importer is not built yet report "unknown format"; everything else opens.
  int opened = w.runs()->count();
  for (const QString& e : w.errors()) {
    EXPECT_TRUE(e.contains(QStringLiteral("unknown format")) || e.contains(QStringLiteral("not a CTF")))
        << e.toStdString();
  }
  EXPECT_EQ(opened + w.errors().size(), files.size());
  EXPECT_GE(opened, 4);
  for (auto* p : w.timeline()->panes()) {
    EXPECT_TRUE(p->drawListReady()) << p->run().title.toStdString();
    EXPECT_GT(p->lastDrawItems(), 0u) << p->run().title.toStdString();
  }
}

}  // namespace
