#include "app/gui/main_window.h"

#include <sys/resource.h>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QThreadPool>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>
#include <chrono>
#include <cstdio>

#include "app/gui/compare_dialog.h"
#include "app/gui/details_view.h"
#include "app/gui/diff_view.h"
#include "app/gui/fidelity_view.h"
#include "app/gui/export_dialog.h"
#ifdef SCHEDLAB_HAVE_RECORDER
#include "app/gui/record_dialog.h"
#endif
#include "app/gui/replay_dialog.h"
#include "app/gui/runs_model.h"
#include "app/gui/sort_header_view.h"
#include "app/gui/why_controller.h"
#include "app/gui/stats_view.h"
#include "app/gui/sweep_view.h"
#include "app/gui/task_table_model.h"
#include "app/render/time_axis.h"
#include "app/render/timeline_image.h"
#include "importers/perfetto/perfetto_writer.h"
#include "importers/importer.h"

namespace app::gui {

double peakRssMib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

namespace {
constexpr int kMaxRecent = 10;

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct BuiltRun {
  std::shared_ptr<core::TraceModel> model;
  std::shared_ptr<render::RunRenderData> render;
  QString error;
  QString warning;
  QStringList separateRuns;  // a folder of unrelated recordings: each of them
  bool cancelled = false;
  double workMs = 0;
  double indexMs = 0;
};
}  // namespace

const std::vector<Shortcut>& shortcutTable() {
  static const std::vector<Shortcut> table = {
      {QStringLiteral("Ctrl+O"), QObject::tr("Open traces (also: drop files on the window, or pass them on the command line)")},
      {QStringLiteral("Ctrl+R"), QObject::tr("Replay the current recording through scheduler models")},
      {QStringLiteral("Ctrl+Shift+O"), QObject::tr("Compare two traces: side by side, with the Diff tab (also: schedlab --compare A B)")},
      {QStringLiteral("Ctrl+Shift+R"), QObject::tr("Record a trace of this machine (root) and open it (also: schedlab-cli record)")},
      {QStringLiteral("Ctrl+E"), QObject::tr("Export the visible timeline as PNG")},
      {QStringLiteral("Ctrl+Shift+E"), QObject::tr("Export a report (PDF, HTML, JSON, CSV) of the chosen runs, as schedlab-cli report does")},
      {QStringLiteral("Ctrl+W"), QObject::tr("Close the selected run (and its replays)")},
      {QStringLiteral("Ctrl+F"), QObject::tr("Find a task: highlights its slices in every pane, filters the Tasks table")},
      {QStringLiteral("Esc"), QObject::tr("Clear the search and the selected range")},
      {QStringLiteral("Wheel"), QObject::tr("Zoom around the mouse")},
      {QStringLiteral("W  /  +"), QObject::tr("Zoom in")},
      {QStringLiteral("S  /  \u2212"), QObject::tr("Zoom out")},
      {QStringLiteral("A  /  \u2190"), QObject::tr("Pan left")},
      {QStringLiteral("D  /  \u2192"), QObject::tr("Pan right")},
      {QStringLiteral("Drag"), QObject::tr("Pan")},
      {QStringLiteral("Shift+Drag"), QObject::tr("Select a time range (also: drag on the ruler); every statistic follows it")},
      {QStringLiteral("Z"), QObject::tr("Zoom to the selected range")},
      {QStringLiteral("0  /  Home"), QObject::tr("Zoom to fit the whole trace")},
      {QStringLiteral("M"), QObject::tr("Set a marker at the mouse in the run under it (or right-click \u2192 Set marker here)")},
      {QStringLiteral("Ctrl+M"), QObject::tr("Align the runs at their markers (again: align at their starts)")},
      {QStringLiteral("Shift+Wheel"), QObject::tr("Scroll the panes vertically")},
      {QStringLiteral("Click"), QObject::tr("Select a slice: its details (task, times, end, waker, wakeup latency)")},
      {QStringLiteral("Double-click"), QObject::tr("Zoom to the slice; on a pane header: collapse or expand it")},
      {QStringLiteral("Right-click"), QObject::tr("Show a task's state row, highlight it, close the run")},
      {QStringLiteral("F1"), QObject::tr("This list")},
  };
  return table;
}

MainWindow::MainWindow(std::shared_ptr<ReplayBackend> backend, QWidget* parent)
    : QMainWindow(parent), m_backend(std::move(backend)), m_runs(new RunSet(this)), m_view(new TimelineViewState(this)) {
  setWindowTitle(tr("SchedLab"));
  if (QFile::exists(QStringLiteral(":/schedlab/schedlab.svg"))) setWindowIcon(QIcon(QStringLiteral(":/schedlab/schedlab.svg")));
  setAcceptDrops(true);
  m_statsTimer = new QTimer(this);
  m_statsTimer->setSingleShot(true);
  m_statsTimer->setInterval(120);
  connect(m_statsTimer, &QTimer::timeout, this, &MainWindow::recomputeStats);
  m_searchTimer = new QTimer(this);
  m_searchTimer->setSingleShot(true);
  m_searchTimer->setInterval(250);
  buildUi();
  buildActions();

  connect(m_runs, &RunSet::runAdded, this, [this](int id) {
    scheduleStats();
    if (m_runsView) m_runsView->expandAll();
    if (const Run* r = m_runs->run(id); r && !r->isReplay()) setWindowTitle(tr("SchedLab \u2014 %1").arg(r->title));
  });
  connect(m_runs, &RunSet::runRemoved, this, [this](int id) {
    if (m_selectedSlice && m_selectedSlice->runId == id) {
      m_selectedSlice.reset();
      m_details->clearSlice();
    }
    scheduleStats();
  });
  connect(m_runs, &RunSet::runChanged, this, &MainWindow::scheduleStats);
  connect(m_runs, &RunSet::runAdded, this, &MainWindow::checkPendingComparison);
  connect(m_view, &TimelineViewState::selectionCommitted, this, &MainWindow::scheduleStats);
  connect(m_view, &TimelineViewState::selectionChanged, this, &MainWindow::updateStatusTexts);
  connect(m_view, &TimelineViewState::cursorChanged, this, &MainWindow::updateStatusTexts);
  connect(m_area, &TimelineArea::sliceClicked, this, &MainWindow::selectSlice);
  connect(m_area, &TimelineArea::closeRunRequested, this, [this](int id) { m_runs->remove(id); });
  connect(m_area, &TimelineArea::markerRequested, this, [this](int id, int64_t at) {
    setMarker(id, at);
    if (m_alignment == Alignment::Markers) return;
    int marked = 0;
    for (int rec : m_runs->recordings()) marked += m_runs->run(rec)->marker.has_value();
    if (marked >= 2) statusBar()->showMessage(tr("Markers set: View \u2192 Align at Markers (Ctrl+M) lines the runs up"), 8000);
  });
  connect(m_area, &TimelineArea::drawListsUpdated, this, [this] {
    const bool idle = isIdle();
    if (idle != m_wasIdle) {
      m_wasIdle = idle;
      emit idleChanged();
    }
  });

  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
  m_hsplit->restoreState(settings.value(QStringLiteral("window/hsplit")).toByteArray());
  m_splitRestored = m_vsplit->restoreState(settings.value(QStringLiteral("window/vsplit")).toByteArray());
  m_tabs->setCurrentIndex(settings.value(QStringLiteral("window/tab"), 0).toInt());
  if (!settings.contains(QStringLiteral("window/geometry"))) resize(1600, 1000);
  rebuildRecentMenu();
  updateStatusTexts();
}

MainWindow::~MainWindow() {
  cancelAllJobs();
  // Jobs reference themselves from the pool's threads: let them end before QObjects go.
  QThreadPool::globalInstance()->waitForDone();
}

void MainWindow::buildUi() {
  m_area = new TimelineArea(m_runs, m_view, this);

  m_runsModel = new RunsModel(m_runs, this);
  m_runsView = new QTreeView(this);
  m_runsView->setModel(m_runsModel);
  m_runsView->setHeaderHidden(false);
  m_runsView->setRootIsDecorated(true);
  m_runsView->setUniformRowHeights(true);
  m_runsView->header()->setStretchLastSection(true);
  // Names take what they need, the details the rest; a detail elided at its end still reads
  // ("ftrace-text · 2 cor…"), its whole text is in the tooltip.
  m_runsView->header()->setSectionResizeMode(RunsModel::NameColumn, QHeaderView::ResizeToContents);
  m_runsView->setTextElideMode(Qt::ElideRight);
  m_runsView->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(m_runsView, &QTreeView::customContextMenuRequested, this, [this](const QPoint& pos) {
    const int id = m_runsModel->runIdAt(m_runsView->indexAt(pos));
    if (id < 0) return;
    QMenu menu(this);
    const Run* r = m_runs->run(id);
    if (r && !r->isReplay()) menu.addAction(tr("Replay\u2026"), this, &MainWindow::showReplayDialog);
    menu.addAction(tr("Close"), this, [this, id] { m_runs->remove(id); });
    menu.exec(m_runsView->viewport()->mapToGlobal(pos));
  });
  connect(m_runsView, &QTreeView::doubleClicked, this, [this](const QModelIndex& idx) {
    if (auto* p = m_area->pane(m_runsModel->runIdAt(idx))) p->setCollapsed(!p->isCollapsed());
  });

  // Tabs.
  m_tabs = new QTabWidget(this);
  m_taskModel = new TaskTableModel(this);
  m_taskProxy = new TaskFilterProxy(this);
  m_taskProxy->setSourceModel(m_taskModel);
  m_taskView = new QTableView(this);
  SortHeaderView::install(m_taskView);
  m_taskView->setModel(m_taskProxy);
  m_taskView->setSortingEnabled(true);
  m_taskView->sortByColumn(TaskTableModel::FixedColumns + TaskTableModel::Runtime, Qt::DescendingOrder);
  m_taskView->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_taskView->verticalHeader()->setVisible(false);
  m_taskView->verticalHeader()->setDefaultSectionSize(20);
  m_taskView->horizontalHeader()->setDefaultSectionSize(98);
  m_taskView->horizontalHeader()->setTextElideMode(Qt::ElideRight);
  m_taskView->setWordWrap(false);
  m_taskView->setToolTip(tr("Double-click a task to show its state row in every pane"));
  connect(m_taskView, &QTableView::doubleClicked, this, [this](const QModelIndex& idx) {
    const int srcRow = m_taskProxy->mapToSource(idx).row();
    for (int i = 0; i < m_taskModel->runCount(); ++i)
      if (const auto* t = m_taskModel->taskIn(srcRow, i)) m_area->showTaskRow(m_taskModel->runAt(i).runId, t->utid);
  });
  auto* taskPage = new QWidget(this);
  auto* taskLayout = new QVBoxLayout(taskPage);
  taskLayout->setContentsMargins(0, 0, 0, 0);
  taskLayout->addWidget(m_taskView);
  m_tabs->addTab(taskPage, tr("Tasks"));
  m_statsView = new StatsView(this);
  m_tabs->addTab(m_statsView, tr("Statistics"));
  m_details = new DetailsView(this);
  m_tabs->addTab(m_details, tr("Details"));
  m_diffView = new DiffView(this);
  m_tabs->addTab(m_diffView, tr("Diff"));
  m_fidelityView = new FidelityView(*m_runs, this);
  m_tabs->addTab(m_fidelityView, tr("Fidelity"));
  m_tabs->setTabToolTip(m_tabs->indexOf(m_fidelityView),
                        tr("How faithfully each replay reproduces its recording: every metric against the identity bounds"));
  m_tabs->setTabToolTip(m_tabs->indexOf(m_diffView), tr("What changed from run A to run B, task by task (File \u2192 Compare\u2026)"));
  connect(m_diffView, &DiffView::pairChanged, this, &MainWindow::recomputeDiff);
  connect(m_diffView, &DiffView::highlightRequested, this, &MainWindow::setSearchText);
  connect(m_details, &DetailsView::highlightRequested, this, &MainWindow::setSearchText);
  connect(m_details, &DetailsView::taskRowRequested, m_area, &TimelineArea::showTaskRow);

  // Banner for partial imports.
  m_bannerBox = new QWidget(this);
  m_bannerBox->setStyleSheet(QStringLiteral("background:#fff3cd; color:#5a3b00;"));
  auto* bannerLayout = new QHBoxLayout(m_bannerBox);
  bannerLayout->setContentsMargins(8, 4, 4, 4);
  m_banner = new QLabel(m_bannerBox);
  m_banner->setWordWrap(true);
  m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* bannerClose = new QToolButton(m_bannerBox);
  bannerClose->setText(QStringLiteral("\u2715"));
  bannerClose->setAutoRaise(true);
  bannerClose->setToolTip(tr("Dismiss"));
  connect(bannerClose, &QToolButton::clicked, m_bannerBox, &QWidget::hide);
  bannerLayout->addWidget(m_banner, 1);
  bannerLayout->addWidget(bannerClose);
  m_bannerBox->hide();

  auto* center = new QWidget(this);
  auto* centerLayout = new QVBoxLayout(center);
  centerLayout->setContentsMargins(0, 0, 0, 0);
  centerLayout->setSpacing(0);
  centerLayout->addWidget(m_bannerBox);
  centerLayout->addWidget(m_area, 1);

  m_vsplit = new QSplitter(Qt::Vertical, this);
  m_vsplit->addWidget(center);
  m_vsplit->addWidget(m_tabs);
  m_vsplit->setStretchFactor(0, 3);
  m_vsplit->setStretchFactor(1, 2);
  m_hsplit = new QSplitter(Qt::Horizontal, this);
  m_hsplit->addWidget(m_runsView);
  m_hsplit->addWidget(m_vsplit);
  m_hsplit->setStretchFactor(0, 0);
  m_hsplit->setStretchFactor(1, 1);
  m_hsplit->setSizes({260, 1340});
  m_vsplit->setSizes({620, 380});
  setCentralWidget(m_hsplit);

  // Status bar.
  m_cursorLabel = new QLabel(this);
  m_cursorLabel->setMinimumWidth(160);
  m_selectionLabel = new QLabel(this);
  m_jobLabel = new QLabel(this);
  m_jobProgress = new QProgressBar(this);
  m_jobProgress->setRange(0, 1000);
  m_jobProgress->setMaximumWidth(200);
  m_jobProgress->setTextVisible(false);
  m_jobCancel = new QToolButton(this);
  m_jobCancel->setText(tr("Cancel"));
  connect(m_jobCancel, &QToolButton::clicked, this, [this] {
    for (auto& jp : m_jobs)
      if (Job* j = jp.data(); j && j->userCancellable()) j->cancel();
  });
  statusBar()->addWidget(m_cursorLabel);
  statusBar()->addWidget(m_selectionLabel, 1);
  statusBar()->addPermanentWidget(m_jobLabel);
  statusBar()->addPermanentWidget(m_jobProgress);
  statusBar()->addPermanentWidget(m_jobCancel);
  updateJobStatus();
}

void MainWindow::buildActions() {
  auto* file = menuBar()->addMenu(tr("&File"));
  auto* open = file->addAction(QIcon::fromTheme(QStringLiteral("document-open")), tr("&Open\u2026"), this, &MainWindow::showOpenDialog);
  open->setShortcut(QKeySequence::Open);
  m_recentMenu = file->addMenu(tr("Open &Recent"));
  auto* compare = file->addAction(tr("&Compare\u2026"), this, &MainWindow::showCompareDialog);
  compare->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+O")));
  addSweepResultsAction(*this, file);
#ifdef SCHEDLAB_HAVE_RECORDER
  addRecordAction(*this, file);
#endif
  file->addSeparator();
  auto* exportAct = file->addAction(tr("&Export Timeline as PNG\u2026"), this, &MainWindow::exportPng);
  exportAct->setShortcut(QKeySequence(QStringLiteral("Ctrl+E")));
  auto* reportAct = file->addAction(tr("Export &Report\u2026"), this, &MainWindow::showExportDialog);
  reportAct->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+E")));
  file->addAction(tr("Export &Perfetto Trace\u2026"), this, [this] { exportPerfetto(); });
  auto* closeRun = file->addAction(tr("&Close Run"), this, &MainWindow::closeCurrentRun);
  closeRun->setShortcut(QKeySequence(QStringLiteral("Ctrl+W")));
  file->addSeparator();
  auto* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  auto* view = menuBar()->addMenu(tr("&View"));
  // Navigation keys act while the timeline has focus, so typing in the search
  // box or the task filter never zooms.
  auto nav = [&](const QString& text, const QList<QKeySequence>& keys, auto slot) {
    auto* a = new QAction(text, this);
    a->setShortcuts(keys);
    a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(a, &QAction::triggered, this, slot);
    m_area->addAction(a);
    view->addAction(a);
    return a;
  };
  nav(tr("Zoom &In"), {QKeySequence(Qt::Key_W), QKeySequence(Qt::Key_Plus), QKeySequence(Qt::Key_Equal)},
      [this] { m_view->zoomCentered(0.7); });
  nav(tr("Zoom &Out"), {QKeySequence(Qt::Key_S), QKeySequence(Qt::Key_Minus)}, [this] { m_view->zoomCentered(1.0 / 0.7); });
  nav(tr("Pan &Left"), {QKeySequence(Qt::Key_A), QKeySequence(Qt::Key_Left)},
      [this] { m_view->panPixels(-m_view->viewport().width * 0.15); });
  nav(tr("Pan &Right"), {QKeySequence(Qt::Key_D), QKeySequence(Qt::Key_Right)},
      [this] { m_view->panPixels(m_view->viewport().width * 0.15); });
  nav(tr("Zoom to &Selection"), {QKeySequence(Qt::Key_Z)}, [this] { zoomToSelection(); });
  nav(tr("Zoom to &Fit"), {QKeySequence(Qt::Key_0), QKeySequence(Qt::Key_Home)}, [this] { m_view->fitAll(); });
  view->addSeparator();
  nav(tr("Set &Marker at Cursor"), {QKeySequence(Qt::Key_M)}, [this] { setMarkerAtCursor(); });
  view->addAction(tr("Clear Markers"), this, [this] {
    for (int rec : m_runs->recordings()) m_runs->setMarker(rec, std::nullopt);
    setAlignment(Alignment::Starts);
  });
  auto* alignGroup = new QActionGroup(this);
  m_alignStarts = view->addAction(tr("Align at &Starts"), this, [this] { setAlignment(Alignment::Starts); });
  m_alignMarkers = view->addAction(tr("Align at M&arkers"), this, [this] { setAlignment(Alignment::Markers); });
  for (QAction* a : {m_alignStarts, m_alignMarkers}) {
    a->setCheckable(true);
    alignGroup->addAction(a);
  }
  m_alignStarts->setChecked(true);
  auto* toggleAlign = new QAction(this);
  toggleAlign->setShortcut(QKeySequence(QStringLiteral("Ctrl+M")));
  connect(toggleAlign, &QAction::triggered, this, [this] {
    setAlignment(m_alignment == Alignment::Markers ? Alignment::Starts : Alignment::Markers);
  });
  addAction(toggleAlign);
  view->addSeparator();
  // What the recording says beside the schedule: power:cpu_frequency, cpu_idle, the other counters
  // and the tasks' own PELT signals (under the task rows, shown from a slice's menu or the task table).
  m_freqStrips = view->addAction(tr("CPU &Frequency Strips"));
  m_idleStrips = view->addAction(tr("CPU &Idle-State Strips"));
  m_counterLines = view->addAction(tr("C&ounter Tracks"));
  m_taskSignals = view->addAction(tr("Task &PELT Signals"));
  for (QAction* a : {m_freqStrips, m_idleStrips, m_counterLines, m_taskSignals}) {
    a->setCheckable(true);
    connect(a, &QAction::toggled, this, [this] {
      m_area->setStrips({m_freqStrips->isChecked(), m_idleStrips->isChecked(), m_counterLines->isChecked(),
                         m_taskSignals->isChecked()});
    });
  }
  view->addSeparator();
  m_why = new WhyController(m_runs, m_area, m_view, m_tabs, view, this);
  view->addSeparator();
  auto* find = view->addAction(tr("&Find Task\u2026"), this, [this] {
    m_search->setFocus();
    m_search->selectAll();
  });
  find->setShortcut(QKeySequence::Find);
  auto* clear = view->addAction(tr("&Clear Search and Range"), this, [this] {
    m_search->clear();
    setSearchText(QString());
    m_view->setSelection(std::nullopt);
    m_view->commitSelection();
  });
  clear->setShortcut(QKeySequence(Qt::Key_Escape));

  auto* runMenu = menuBar()->addMenu(tr("&Run"));
  auto* replay = runMenu->addAction(QIcon::fromTheme(QStringLiteral("media-playback-start")), tr("&Replay\u2026"), this,
                                    &MainWindow::showReplayDialog);
  replay->setShortcut(QKeySequence(QStringLiteral("Ctrl+R")));

  auto* help = menuBar()->addMenu(tr("&Help"));
  auto* shortcuts = help->addAction(tr("&Shortcuts"), this, &MainWindow::showShortcuts);
  shortcuts->setShortcut(QKeySequence::HelpContents);
  help->addAction(tr("&About SchedLab"), this, [this] {
    QMessageBox::about(this, tr("About SchedLab"),
                       tr("<b>SchedLab</b> %1<br>Scheduler traces: who ran where, per core and SMT sibling; "
                          "replays through reference scheduler models; statistics side by side.")
                           .arg(QApplication::applicationVersion()));
  });

  auto* tb = addToolBar(tr("Main"));
  tb->setObjectName(QStringLiteral("mainToolbar"));
  tb->setMovable(false);
  tb->addAction(open);
  tb->addAction(replay);
  tb->addSeparator();
  tb->addAction(tr("Fit"), [this] { m_view->fitAll(); })->setToolTip(tr("Zoom to fit (0)"));
  tb->addAction(QStringLiteral("\u2212"), [this] { m_view->zoomCentered(1.0 / 0.7); })->setToolTip(tr("Zoom out (S)"));
  tb->addAction(QStringLiteral("+"), [this] { m_view->zoomCentered(0.7); })->setToolTip(tr("Zoom in (W)"));
  tb->addAction(tr("Zoom to range"), [this] { zoomToSelection(); })->setToolTip(tr("Zoom to the selected range (Z)"));
  tb->addSeparator();
  m_search = new QLineEdit(this);
  m_search->setPlaceholderText(tr("Find task (comm or tid)\u2026  Ctrl+F"));
  m_search->setClearButtonEnabled(true);
  m_search->setMaximumWidth(300);
  tb->addWidget(m_search);
  connect(m_search, &QLineEdit::textChanged, this, [this] { m_searchTimer->start(); });
  connect(m_searchTimer, &QTimer::timeout, this, [this] {
    m_area->setSearch(m_search->text());
    m_taskProxy->setFilterText(m_search->text());
  });
}

void MainWindow::setSearchText(const QString& text) {
  if (m_search->text() != text) m_search->setText(text);
  m_searchTimer->stop();
  m_area->setSearch(text);
  m_taskProxy->setFilterText(text);
}

void MainWindow::setStrips(const render::StripOptions& strips) {
  m_freqStrips->setChecked(strips.frequency);
  m_idleStrips->setChecked(strips.idle);
  m_counterLines->setChecked(strips.counters);
  m_taskSignals->setChecked(strips.taskSignals);
}

void MainWindow::showOpenDialog() {
  QSettings settings;
  const QString dir = settings.value(QStringLiteral("files/lastDir")).toString();
  QFileDialog dialog(this, tr("Open traces"), dir);
  dialog.setFileMode(QFileDialog::ExistingFiles);
  dialog.setNameFilters({tr("Scheduler traces (*.dat *.data *.txt *.trace *.html *.perfetto-trace *.pftrace *.pb "
                            "*.gz *.zst metadata)"),
                         tr("All files (*)")});
  dialog.setOption(QFileDialog::DontUseNativeDialog, false);
  if (!dialog.exec()) return;
  QStringList files = dialog.selectedFiles();
  // A CTF trace is a folder: opening its metadata file means the folder.
  for (QString& f : files)
    if (QFileInfo(f).fileName() == QLatin1String("metadata")) f = QFileInfo(f).absolutePath();
  if (!files.isEmpty()) settings.setValue(QStringLiteral("files/lastDir"), QFileInfo(files.front()).absolutePath());
  openFiles(files);
}

void MainWindow::openFiles(const QStringList& paths) {
  for (const QString& p : paths) openFile(p);
}

int MainWindow::openFile(const QString& path, std::optional<core::Topology> topology) {
  const QString abs = QFileInfo(path).absoluteFilePath();
  auto* job = new Job(tr("Opening %1").arg(QFileInfo(abs).fileName()), this);
  const auto opened = std::chrono::steady_clock::now();
  const int order = m_runs->reserveOrder();
  job->start<std::shared_ptr<BuiltRun>>(
      [abs, topology](Job& j) {
        auto out = std::make_shared<BuiltRun>();
        const auto t0 = std::chrono::steady_clock::now();
        importers::ImportOptions options;
        options.stop = j.stopToken();
        options.progress = [&j](double f) { j.setProgress(f * 0.97); };
        options.topology = topology;
        auto result = importers::importTrace(abs.toStdString(), options);
        out->workMs = msSince(t0);
        if (j.isCancelled()) {
          out->cancelled = true;
          return out;
        }
        if (!result) {
          out->error = QString::fromStdString(result.error().message());
          for (const auto& run : importers::separateRunsIn(abs.toStdString())) out->separateRuns << QString::fromStdString(run);
          return out;
        }
        out->model = result->model;
        if (result->error) out->warning = QString::fromStdString(result->error->message());
        const auto t1 = std::chrono::steady_clock::now();
        out->render = render::RunRenderData::create(out->model);
        out->indexMs = msSince(t1);
        return out;
      },
      [this, abs, opened, order](std::shared_ptr<BuiltRun>& built) {
        if (built->cancelled) {
          statusBar()->showMessage(tr("Opening %1 cancelled").arg(abs), 5000);
          return;
        }
        if (!built->separateRuns.isEmpty()) {
          offerSeparateRuns(abs, built->error, built->separateRuns);
          return;
        }
        if (!built->error.isEmpty()) {
          reportError(tr("Cannot open trace"), built->error);
          return;
        }
        Run run;
        run.path = abs;
        run.model = built->model;
        run.render = built->render;
        run.title = render::runTitle(*built->model);
        run.shortTitle = render::runShortTitle(*built->model);
        run.order = order;
        run.warning = built->warning;
        const int id = m_runs->add(std::move(run));
        addRecentFile(abs);
        if (!built->warning.isEmpty())
          showBanner(tr("<b>%1</b> was read only in part: %2. Showing what was readable (%L3 events).")
                         .arg(QFileInfo(abs).fileName().toHtmlEscaped(), built->warning.toHtmlEscaped())
                         .arg(built->model->eventCount));
        if (m_timingLog) {
          std::fprintf(stderr, "timing: %s: import %.1f ms, index %.1f ms\n", abs.toLocal8Bit().constData(), built->workMs,
                       built->indexMs);
          if (auto* pane = m_area->pane(id)) {
            auto conn = std::make_shared<QMetaObject::Connection>();
            *conn = connect(pane, &TimelinePane::drawListUpdated, this, [this, conn, pane, abs, opened] {
              QObject::disconnect(*conn);
              pane->repaint();
              std::fprintf(stderr, "timing: %s: first paint %.1f ms after open, peak RSS %.1f MiB\n",
                           abs.toLocal8Bit().constData(), msSince(opened), peakRssMib());
            });
          }
        }
        emit runOpened(id);
      });
  addJob(job);
  return order;
}

void MainWindow::openComparison(const QString& pathA, const QString& pathB, std::optional<core::Topology> topology) {
  const int a = openFile(pathA, topology);
  const int b = openFile(pathB, topology);
  m_pendingComparison = std::make_pair(a, b);
}

void MainWindow::checkPendingComparison() {
  if (!m_pendingComparison) return;
  int a = -1, b = -1;
  for (int id : m_runs->recordings()) {
    const Run* r = m_runs->run(id);
    if (r->order == m_pendingComparison->first) a = id;
    if (r->order == m_pendingComparison->second) b = id;
  }
  if (a < 0 || b < 0) return;
  m_pendingComparison.reset();
  refreshTables();
  m_diffView->setPair(a, b);
  m_tabs->setCurrentWidget(m_diffView);
}

void MainWindow::setMarker(int runId, std::optional<int64_t> absTs) {
  const Run* r = m_runs->run(runId);
  if (!r) return;
  if (r->isReplay() && m_runs->run(r->parentId)) runId = r->parentId;
  m_runs->setMarker(runId, absTs);
  if (m_alignment == Alignment::Markers) setAlignment(Alignment::Markers);
}

void MainWindow::setMarkerAtCursor() {
  int id = m_area->hoveredRun();
  if (!m_runs->run(id)) id = currentRecording();
  const Run* r = m_runs->run(id);
  if (!r || !r->render) return;
  const auto& v = m_view->viewport();
  const int64_t t = m_view->cursor().value_or(v.start + v.span() / 2);
  setMarker(id, r->render->origin + t);
  statusBar()->showMessage(tr("Marker set in %1 at %2").arg(r->title, render::formatDuration(t)), 5000);
}

void MainWindow::setAlignment(Alignment alignment) {
  m_alignment = alignment;
  if (m_alignMarkers) {
    m_alignMarkers->setChecked(alignment == Alignment::Markers);
    m_alignStarts->setChecked(alignment == Alignment::Starts);
  }
  // The first recording keeps its place on screen; the others move to line up with it.
  std::optional<int64_t> shift;
  for (int rec : m_runs->recordings()) {
    const Run* r = m_runs->run(rec);
    if (!r->render) continue;
    const int64_t origin = alignment == Alignment::Markers && r->marker ? *r->marker : r->model->firstTs;
    if (!shift) shift = origin - r->render->origin;
    m_runs->setOrigin(rec, origin);
  }
  if (shift && *shift != 0) {
    render::Viewport v = m_view->viewport();
    v.start -= *shift;
    if (const auto& sel = m_view->selection()) {
      m_view->setSelection(TimelineViewState::Range{sel->first - *shift, sel->second - *shift});
    }
    m_view->setViewport(v);
  }
  if (alignment == Alignment::Markers) {
    int marked = 0;
    for (int rec : m_runs->recordings()) marked += m_runs->run(rec)->marker.has_value();
    statusBar()->showMessage(marked ? tr("Aligned at markers: every marked run's 0 is its marker")
                                    : tr("No markers yet: press M over a run (or right-click \u2192 Set marker here)"),
                             6000);
  }
}

int MainWindow::addModel(std::shared_ptr<core::TraceModel> model, const QString& path, int parentId) {
  Run run;
  run.path = path;
  run.parentId = parentId;
  run.model = model;
  std::optional<int64_t> origin;
  if (const Run* parent = m_runs->run(parentId); parent && parent->render) origin = parent->render->origin;
  run.render = render::RunRenderData::create(model, origin);
  run.title = render::runTitle(*model);
  run.shortTitle = render::runShortTitle(*model);
  if (model->partial) run.warning = QString::fromStdString(model->partialReason);
  const int id = m_runs->add(std::move(run));
  emit runOpened(id);
  return id;
}

void MainWindow::startReplay(int recordingId, const ReplayRequest& request) {
  const Run* rec = m_runs->run(recordingId);
  if (!rec || !rec->model) return;
  auto recording = rec->model;
  const int64_t origin = rec->render ? rec->render->origin : recording->firstTs;
  auto backend = m_backend;
  auto* job = new Job(tr("Replaying %1 with %2").arg(rec->title, QString::fromStdString(request.model)), this);
  const int order = m_runs->reserveOrder();
  job->start<std::shared_ptr<BuiltRun>>(
      [recording, backend, request, origin](Job& j) {
        auto out = std::make_shared<BuiltRun>();
        const auto t0 = std::chrono::steady_clock::now();
        auto result = backend->run(recording, request, j.stopToken(), [&j](double f) { j.setProgress(f * 0.97); });
        out->workMs = msSince(t0);
        if (j.isCancelled()) {
          out->cancelled = true;
          return out;
        }
        if (!result) {
          out->error = QString::fromStdString(result.error().message());
          return out;
        }
        out->model = *result;
        out->render = render::RunRenderData::create(out->model, origin);
        return out;
      },
      [this, recordingId, request, order](std::shared_ptr<BuiltRun>& built) {
        if (built->cancelled) {
          statusBar()->showMessage(tr("Replay cancelled"), 5000);
          return;
        }
        if (!built->error.isEmpty()) {
          reportError(tr("Replay failed"), tr("%1: %2").arg(QString::fromStdString(request.model), built->error));
          return;
        }
        if (!m_runs->run(recordingId)) return;  // closed meanwhile
        Run run;
        run.parentId = recordingId;
        run.model = built->model;
        run.render = built->render;
        // Title: the model and what the user changed; the full parameter list is in the tooltip.
        QStringList changed;
        for (const auto& [k, v] : request.params) changed << QString::fromStdString(k + "=" + v);
        if (request.topology) changed << QString::fromStdString(request.topology->describe());
        run.title = QStringLiteral("replay: ") + QString::fromStdString(request.model) +
                    (changed.isEmpty() ? QString() : QStringLiteral(" (") + changed.join(QStringLiteral(", ")) + QLatin1Char(')'));
        run.shortTitle = render::runShortTitle(*built->model);
        run.replayRequest = request;
        run.order = order;
        const int id = m_runs->add(std::move(run));
        emit runOpened(id);
      });
  addJob(job);
}

void MainWindow::addJob(Job* job) {
  m_jobs.push_back(job);
  connect(job, &Job::progressChanged, this, &MainWindow::updateJobStatus);
  connect(job, &Job::finished, this, [this, job] {
    m_jobs.erase(std::remove(m_jobs.begin(), m_jobs.end(), job), m_jobs.end());
    updateJobStatus();
  });
  updateJobStatus();
}

void MainWindow::updateJobStatus() {
  m_jobs.erase(std::remove_if(m_jobs.begin(), m_jobs.end(), [](const QPointer<Job>& j) { return !j; }), m_jobs.end());
  const Job* shown = nullptr;
  int userJobs = 0;
  for (const auto& jp : m_jobs) {
    const Job* j = jp.data();
    if (!j) continue;
    if (!shown) shown = j;
    if (j->userCancellable()) {
      if (userJobs++ == 0) shown = j;
    }
  }
  const bool busy = shown != nullptr;
  m_jobLabel->setVisible(busy);
  m_jobProgress->setVisible(busy);
  m_jobCancel->setVisible(userJobs > 0);
  if (busy) {
    QString text = shown->title() + QStringLiteral("\u2026");
    if (m_jobs.size() > 1) text += tr(" (+%1 more)").arg(m_jobs.size() - 1);
    m_jobLabel->setText(text);
    m_jobProgress->setValue(static_cast<int>(shown->progress() * 1000));
  }
  const bool idle = isIdle();
  if (idle != m_wasIdle) {
    m_wasIdle = idle;
    emit idleChanged();
  }
}

void MainWindow::cancelAllJobs() {
  for (auto& jp : m_jobs)
    if (Job* j = jp.data()) j->cancel();
}

bool MainWindow::isIdle() const {
  for (const auto& j : m_jobs)
    if (j) return false;
  return m_statsPending == 0 && !m_statsTimer->isActive() && m_area->allDrawListsReady() && (!m_why || m_why->isIdle());
}

void MainWindow::reportError(const QString& title, const QString& message) {
  m_errors << message;
  emit jobFailed(message);
  statusBar()->showMessage(message, 10000);
  if (m_interactive) QMessageBox::critical(this, title, message);
}

void MainWindow::offerSeparateRuns(const QString& folder, const QString& message, const QStringList& runs) {
  m_errors << message;
  statusBar()->showMessage(tr("%1 holds %n unrelated recordings", nullptr, static_cast<int>(runs.size())).arg(folder), 10000);
  emit separateRunsFound(folder, runs);
  if (!m_interactive) return;
  QMessageBox box(QMessageBox::Question, tr("Several recordings in one folder"),
                  tr("%1 holds traces of %n unrelated recordings; read together they would make one run of "
                     "events that never ran together.",
                     nullptr, static_cast<int>(runs.size()))
                      .arg(folder),
                  QMessageBox::NoButton, this);
  box.setInformativeText(tr("Open each as a run of its own?"));
  box.setDetailedText(message);
  QPushButton* openEach = box.addButton(tr("Open %n runs", nullptr, static_cast<int>(runs.size())), QMessageBox::AcceptRole);
  box.addButton(QMessageBox::Cancel);
  box.exec();
  if (box.clickedButton() == openEach) openFiles(runs);
}

void MainWindow::showBanner(const QString& text) {
  // Several partial files opened together: one line each, until dismissed.
  if (!m_bannerBox->isVisible()) m_bannerLines.clear();
  m_bannerLines << QStringLiteral("\u26a0 ") + text;
  while (m_bannerLines.size() > 4) m_bannerLines.removeFirst();
  m_banner->setText(m_bannerLines.join(QStringLiteral("<br>")));
  m_bannerBox->show();
}

void MainWindow::scheduleStats() { m_statsTimer->start(); }

std::optional<core::analysis::TimeRange> MainWindow::absoluteRange(const Run& run) const {
  const auto& sel = m_view->selection();
  if (!sel) return std::nullopt;
  const int64_t origin = run.render ? run.render->origin : run.model->firstTs;
  return core::analysis::TimeRange{origin + sel->first, origin + sel->second};
}

QString MainWindow::rangeText() const {
  const auto& sel = m_view->selection();
  if (!sel) return tr("Whole trace");
  return tr("Range %1 \u2013 %2 (%3)")
      .arg(render::formatDuration(sel->first), render::formatDuration(sel->second), render::formatDuration(sel->second - sel->first));
}

void MainWindow::recomputeStats() {
  const uint64_t generation = ++m_statsGeneration;
  m_statsPending = 0;
  for (int id : m_runs->ids()) {
    const Run* r = m_runs->run(id);
    if (!r || !r->model) continue;
    auto model = r->model;
    const auto range = absoluteRange(*r);
    // Statistics already computed over this very range (another run arrived, not a new range): keep them.
    const auto want = range.value_or(core::analysis::wholeTrace(*model));
    if (r->stats && r->stats->range.from == want.from && r->stats->range.to == want.to) continue;
    auto* job = new Job(tr("Statistics of %1").arg(r->title), this);
    job->setUserCancellable(false);
    ++m_statsPending;
    job->start<std::shared_ptr<const core::analysis::RunStats>>(
        [model, range](Job&) {
          return std::make_shared<const core::analysis::RunStats>(
              range ? core::analysis::computeStats(*model, *range) : core::analysis::computeStats(*model));
        },
        [this, generation, id](std::shared_ptr<const core::analysis::RunStats>& stats) {
          if (generation != m_statsGeneration) return;
          --m_statsPending;
          if (m_runs->run(id)) m_runs->setStats(id, stats);
          if (m_statsPending == 0) refreshTables();
        });
    addJob(job);
  }
  if (m_statsPending == 0) refreshTables();
}

void MainWindow::refreshTables() {
  std::vector<TaskTableModel::RunColumns> cols;
  std::vector<StatsView::RunEntry> entries;
  for (int id : m_runs->ids()) {
    const Run* r = m_runs->run(id);
    if (!r) continue;
    cols.push_back({id, r->shortTitle, r->stats});
    entries.push_back({id, r->title, r->model, r->stats});
  }
  m_taskModel->setRuns(std::move(cols));
  m_taskView->horizontalHeader()->resizeSection(TaskTableModel::TaskColumn, 150);
  m_taskView->setColumnHidden(TaskTableModel::TgidColumn, !m_taskModel->anyTgidKnown());
  // A run's headers take three lines ("hackbench-proc", "dat", "Switches vol/inv") beside the sort
  // arrow; a column narrower than its header clips the run's name on both sides.
  for (int c = TaskTableModel::FixedColumns; c < m_taskModel->columnCount(); ++c) {
    m_taskView->resizeColumnToContents(c);
    m_taskView->setColumnWidth(c, std::max(98, m_taskView->columnWidth(c)));
  }
  m_statsView->setRuns(entries, rangeText());
  std::vector<DiffView::RunChoice> choices;
  for (int id : m_runs->ids())
    if (const Run* r = m_runs->run(id)) choices.push_back({id, r->title});
  m_diffView->setRunChoices(choices);
  recomputeDiff();
  updateJobStatus();
}

void MainWindow::recomputeDiff() {
  const uint64_t generation = ++m_diffGeneration;
  const Run* a = m_runs->run(m_diffView->runA());
  const Run* b = m_runs->run(m_diffView->runB());
  if (!a || !b || a == b) {
    m_diffView->setDiff(nullptr, rangeText(),
                        m_runs->count() < 2 ? tr("Open two traces (File \u2192 Compare\u2026), or replay one, to compare them.")
                                            : tr("Choose two different runs as A and B."));
    return;
  }
  if (!a->stats || !b->stats) {
    m_diffView->setDiff(nullptr, rangeText(), tr("computing\u2026"));
    return;
  }
  auto ma = a->model, mb = b->model;
  auto sa = a->stats, sb = b->stats;
  const std::string la = a->title.toStdString(), lb = b->title.toStdString();
  auto* job = new Job(tr("Comparing %1 and %2").arg(a->shortTitle, b->shortTitle), this);
  job->setUserCancellable(false);
  job->start<std::shared_ptr<const core::analysis::RunDiff>>(
      [ma, mb, sa, sb, la, lb](Job&) {
        return std::make_shared<const core::analysis::RunDiff>(core::analysis::diffRuns(*ma, *sa, la, *mb, *sb, lb));
      },
      [this, generation](std::shared_ptr<const core::analysis::RunDiff>& diff) {
        if (generation != m_diffGeneration) return;
        m_diffView->setDiff(diff, rangeText());
      });
  addJob(job);
}

std::vector<int> MainWindow::defaultExportRuns() const {
  std::vector<int> recs;
  for (int id : {m_diffView->runA(), m_diffView->runB()}) {
    const Run* r = m_runs->run(id);
    if (!r) continue;
    const int rec = r->isReplay() ? r->parentId : id;
    if (m_runs->run(rec) && std::find(recs.begin(), recs.end(), rec) == recs.end()) recs.push_back(rec);
  }
  if (recs.empty() && currentRecording() >= 0) recs.push_back(currentRecording());
  std::vector<int> out;
  for (int rec : recs) {
    out.push_back(rec);
    for (int rep : m_runs->replaysOf(rec)) out.push_back(rep);
  }
  return out;
}

void MainWindow::showCompareDialog() {
  QSettings settings;
  CompareDialog dialog(settings.value(QStringLiteral("files/recent")).toStringList(),
                       settings.value(QStringLiteral("files/lastDir")).toString(), this);
  if (dialog.exec() != QDialog::Accepted) return;
  settings.setValue(QStringLiteral("files/lastDir"), QFileInfo(dialog.fileA()).absolutePath());
  openComparison(dialog.fileA(), dialog.fileB());
}

void MainWindow::showExportDialog() {
  if (m_runs->recordings().empty()) {
    reportError(tr("Export report"), tr("Open a trace first: a report covers one recording, or two compared."));
    return;
  }
  QSettings settings;
  QString dir = settings.value(QStringLiteral("files/lastReportDir")).toString();
  if (dir.isEmpty()) dir = settings.value(QStringLiteral("files/lastDir")).toString();
  const QString path = QDir(dir.isEmpty() ? QDir::homePath() : dir).filePath(QStringLiteral("schedlab-report.pdf"));
  ExportReportDialog dialog(*m_runs, defaultExportRuns(), m_view->selection(), path, this);
  if (dialog.exec() != QDialog::Accepted) return;
  settings.setValue(QStringLiteral("files/lastReportDir"), QFileInfo(dialog.options().path).absolutePath());
  exportReport(dialog.options());
}

void MainWindow::exportReport(const ExportOptions& options) {
  auto plan = planExport(*m_runs, options);
  if (!plan) {
    reportError(tr("Export report"), QString::fromStdString(plan.error().message()));
    emit reportExported(options.path, false);
    return;
  }
  const QString path = options.path;
  auto* job = new Job(tr("Exporting report %1").arg(QFileInfo(path).fileName()), this);
  job->start<std::shared_ptr<core::Status>>(
      [p = std::move(*plan)](Job& j) {
        return std::make_shared<core::Status>(runExport(p, [&j](double f) { j.setProgress(f); }, j.stopToken()));
      },
      [this, path, job](std::shared_ptr<core::Status>& status) {
        if (job->isCancelled()) {
          statusBar()->showMessage(tr("Report export cancelled"), 5000);
          emit reportExported(path, false);
        } else if (!*status) {
          reportError(tr("Export report"), tr("Cannot write the report %1: %2").arg(path, QString::fromStdString(status->message())));
          emit reportExported(path, false);
        } else {
          statusBar()->showMessage(tr("Wrote %1").arg(path), 8000);
          emit reportExported(path, true);
        }
      });
  addJob(job);
}

void MainWindow::updateStatusTexts() {
  if (const auto c = m_view->cursor())
    m_cursorLabel->setText(tr("t = %1").arg(render::formatTime(*c, static_cast<int64_t>(m_view->viewport().nsPerPx) + 1)));
  else
    m_cursorLabel->setText(QString());
  if (const auto& sel = m_view->selection())
    m_selectionLabel->setText(tr("selection %1  [%2 \u2013 %3]")
                                  .arg(render::formatDuration(sel->second - sel->first), render::formatDuration(sel->first),
                                       render::formatDuration(sel->second)));
  else
    m_selectionLabel->setText(m_runs->count() ? tr("Shift+drag to select a range") : QString());
}

void MainWindow::zoomToSelection() {
  if (const auto& sel = m_view->selection()) m_view->showRange(sel->first, sel->second, 0.02);
}

void MainWindow::selectSlice(const SliceRef& slice) {
  if (slice.runId < 0) {
    m_selectedSlice.reset();
    m_area->setSelectedSlice(std::nullopt);
    m_details->clearSlice();
    return;
  }
  m_selectedSlice = slice;
  m_area->setSelectedSlice(slice);
  m_details->showSlice(m_runs->run(slice.runId), slice);
  m_why->selectSlice(slice);
  m_tabs->setCurrentWidget(m_details);
}

int MainWindow::currentRecording() const {
  int id = m_runsModel->runIdAt(m_runsView->currentIndex());
  if (const Run* r = m_runs->run(id); r && r->isReplay()) id = r->parentId;
  if (id < 0 && !m_runs->recordings().empty()) id = m_runs->recordings().front();
  return id;
}

void MainWindow::showReplayDialog() {
  ReplayDialog dialog(*m_runs, currentRecording(), m_backend, this);
  if (dialog.exec() != QDialog::Accepted) return;
  for (const auto& req : dialog.requests()) startReplay(dialog.recordingId(), req);
}

void MainWindow::showShortcuts() {
  QDialog dialog(this);
  dialog.setWindowTitle(tr("Keyboard and mouse shortcuts"));
  auto* layout = new QVBoxLayout(&dialog);
  auto* table = new QTableWidget(static_cast<int>(shortcutTable().size()), 2, &dialog);
  table->setHorizontalHeaderLabels({tr("Keys"), tr("Action")});
  table->verticalHeader()->setVisible(false);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setSelectionMode(QAbstractItemView::NoSelection);
  for (size_t i = 0; i < shortcutTable().size(); ++i) {
    table->setItem(static_cast<int>(i), 0, new QTableWidgetItem(shortcutTable()[i].keys));
    table->setItem(static_cast<int>(i), 1, new QTableWidgetItem(shortcutTable()[i].action));
  }
  table->resizeColumnToContents(0);
  table->horizontalHeader()->setStretchLastSection(true);
  layout->addWidget(table);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  layout->addWidget(buttons);
  dialog.resize(640, 560);
  dialog.exec();
}

void MainWindow::exportPng() {
  if (m_runs->count() == 0) return;
  QSettings settings;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export timeline"), settings.value(QStringLiteral("files/lastDir")).toString() + QStringLiteral("/timeline.png"),
      tr("PNG images (*.png)"));
  if (path.isEmpty()) return;
  std::vector<render::ImageRun> runs;
  for (auto* pane : m_area->panes()) {
    render::ImageRun r;
    r.data = pane->run().render;
    r.title = pane->run().title;
    r.rows = pane->rows();
    runs.push_back(std::move(r));
  }
  render::ImageOptions options;
  options.width = std::max(1200, m_view->viewport().width + options.gutterWidth);
  options.from = m_view->viewport().start;
  options.to = m_view->viewport().end();
  options.rowHeight = kRowHeight;
  auto* job = new Job(tr("Exporting %1").arg(QFileInfo(path).fileName()), this);
  job->start<QString>(
      [runs, options, path](Job&) {
        const QImage image = render::renderTimelineImage(runs, options);
        return image.save(path, "PNG") ? QString() : QObject::tr("Cannot write %1").arg(path);
      },
      [this, path](QString& error) {
        if (!error.isEmpty())
          reportError(tr("Export failed"), error);
        else
          statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
      });
  addJob(job);
}

void MainWindow::exportPerfetto(const QString& chosen) {
  int id = m_runsModel->runIdAt(m_runsView->currentIndex());
  if (id < 0 && !m_runs->ids().empty()) id = m_runs->ids().back();
  const Run* run = id >= 0 ? m_runs->run(id) : nullptr;
  if (!run || !run->model) {
    reportError(tr("Export Perfetto trace"), tr("Open a trace first: the chosen run (a recording or a replay) is exported."));
    return;
  }
  QString path = chosen;
  if (path.isEmpty()) {
    QSettings settings;
    path = QFileDialog::getSaveFileName(this, tr("Export Perfetto trace"),
                                        settings.value(QStringLiteral("files/lastDir")).toString() + QStringLiteral("/") +
                                            run->shortTitle + QStringLiteral(".perfetto-trace"),
                                        tr("Perfetto traces (*.perfetto-trace *.pftrace)"));
    if (path.isEmpty()) return;
  }
  auto model = run->model;
  auto* job = new Job(tr("Exporting %1").arg(QFileInfo(path).fileName()), this);
  job->start<QString>(
      [model, path](Job&) {
        const core::Status st = importers::perfetto::writePerfetto(*model, path.toStdString());
        if (!st) return QString::fromStdString(st.message());
        const auto beside = importers::copyFilesBeside(*model, path.toStdString());
        return beside ? QString() : QString::fromStdString(beside.error().message());
      },
      [this, path](QString& error) {
        if (!error.isEmpty()) {
          reportError(tr("Export failed"), error);
          emit perfettoExported(path, false);
        } else {
          statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
          emit perfettoExported(path, true);
        }
      });
  addJob(job);
}

void MainWindow::closeCurrentRun() {
  int id = m_runsModel->runIdAt(m_runsView->currentIndex());
  if (id < 0 && !m_runs->ids().empty()) id = m_runs->ids().back();
  if (id >= 0) m_runs->remove(id);
}

void MainWindow::addRecentFile(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value(QStringLiteral("files/recent")).toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue(QStringLiteral("files/recent"), recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  m_recentMenu->clear();
  const QStringList recent = QSettings().value(QStringLiteral("files/recent")).toStringList();
  for (const QString& f : recent) m_recentMenu->addAction(f, this, [this, f] { openFile(f); });
  if (recent.isEmpty()) m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
  else {
    m_recentMenu->addSeparator();
    m_recentMenu->addAction(tr("Clear list"), this, [this] {
      QSettings().remove(QStringLiteral("files/recent"));
      rebuildRecentMenu();
    });
  }
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  QStringList files;
  for (const QUrl& url : e->mimeData()->urls())
    if (url.isLocalFile()) files << url.toLocalFile();
  openFiles(files);
  e->acceptProposedAction();
}

void MainWindow::setTabsShare(double share) {
  m_splitRestored = true;
  const int h = std::max(400, m_vsplit->height());
  const int tabs = static_cast<int>(h * std::clamp(share, 0.1, 0.9));
  m_vsplit->setSizes({h - tabs, tabs});
}

void MainWindow::showEvent(QShowEvent* e) {
  QMainWindow::showEvent(e);
  if (!m_splitRestored) {
    m_splitRestored = true;
    const int h = std::max(400, m_vsplit->height());
    m_vsplit->setSizes({h * 55 / 100, h * 45 / 100});
  }
}

void MainWindow::closeEvent(QCloseEvent* e) {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState());
  settings.setValue(QStringLiteral("window/hsplit"), m_hsplit->saveState());
  settings.setValue(QStringLiteral("window/vsplit"), m_vsplit->saveState());
  settings.setValue(QStringLiteral("window/tab"), m_tabs->currentIndex());
  cancelAllJobs();
  QMainWindow::closeEvent(e);
}

}  // namespace app::gui
