// SchedLab's main window: the runs list, the synchronised timeline panes, the
// Tasks / Statistics / Details tabs, the status bar with job progress, menus
// and shortcuts. Imports, replays, statistics and exports run as Jobs.
#pragma once

#include <QElapsedTimer>
#include <QMainWindow>
#include <QPointer>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "app/gui/job.h"
#include "app/gui/replay_backend.h"
#include "app/gui/report_export.h"
#include "app/gui/run_set.h"
#include "app/gui/timeline_view.h"

class QLabel;
class QLineEdit;
class QMenu;
class QProgressBar;
class QSplitter;
class QTabWidget;
class QTableView;
class QToolButton;
class QTreeView;

namespace app::gui {

class DetailsView;
class DiffView;
class RunsModel;
class StatsView;
class FidelityView;
class TaskFilterProxy;
class TaskTableModel;
class WhyController;

struct Shortcut {
  QString keys;
  QString action;
};
/// Every keyboard and mouse shortcut, for Help → Shortcuts and the README.
const std::vector<Shortcut>& shortcutTable();

/// The process's peak resident set so far, in MiB (--timing's figures).
double peakRssMib();

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(std::shared_ptr<ReplayBackend> backend = defaultReplayBackend(), QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Imports each file on a worker (several runs per window).
  void openFiles(const QStringList& paths);
  /// Returns the run's place among recordings (RunSet::reserveOrder()).
  int openFile(const QString& path, std::optional<core::Topology> topology = std::nullopt);
  /// Opens A and B as a comparison: once both are loaded the Diff tab shows B against A.
  void openComparison(const QString& pathA, const QString& pathB, std::optional<core::Topology> topology = std::nullopt);
  /// Marks an absolute time in a recording (a replay's marker is its recording's).
  void setMarker(int runId, std::optional<int64_t> absTs);
  enum class Alignment { Starts, Markers };
  /// Starts: every run's 0 is its first event. Markers: a recording with a
  /// marker has its 0 there (its replays follow), so the runs line up at the markers.
  void setAlignment(Alignment alignment);
  Alignment alignment() const { return m_alignment; }
  /// Writes a report on a worker through app/report (the `schedlab-cli report` path).
  void exportReport(const ExportOptions& options);
  /// The runs an export offers ticked: the Diff tab's pair (or the current recording) and their replays.
  std::vector<int> defaultExportRuns() const;
  /// Replays a recording through a model on a worker; the replay appears under it.
  void startReplay(int recordingId, const ReplayRequest& request);
  /// Adds an already built model (tests, demo): as a recording, or as a replay of `parentId`.
  int addModel(std::shared_ptr<core::TraceModel> model, const QString& path = {}, int parentId = -1);

  RunSet* runs() const { return m_runs; }
  TimelineViewState* viewState() const { return m_view; }
  TimelineArea* timeline() const { return m_area; }
  TaskTableModel* taskModel() const { return m_taskModel; }
  QTableView* taskView() const { return m_taskView; }
  StatsView* statsView() const { return m_statsView; }
  FidelityView* fidelityView() const { return m_fidelityView; }
  DetailsView* detailsView() const { return m_details; }
  DiffView* diffView() const { return m_diffView; }
  /// The Why and Latency tabs and the timeline's wakeup arrows and critical path.
  WhyController* whyController() const { return m_why; }
  QTabWidget* tabs() const { return m_tabs; }
  /// No job running, statistics current, every pane painted-ready.
  bool isIdle() const;
  int runningJobs() const { return static_cast<int>(m_jobs.size()); }
  /// Errors shown to the user so far (tests read them instead of clicking boxes).
  const QStringList& errors() const { return m_errors; }
  /// Show errors in message boxes (off for tests and --screenshot).
  void setInteractive(bool on) { m_interactive = on; }
  /// Print import/first-paint timings (and the peak RSS so far) to stderr.
  void setTimingLog(bool on) { m_timingLog = on; }
  void cancelAllJobs();
  void setSearchText(const QString& text);
  /// Ticks the View menu's strip actions as `strips` says (--strips); the panes follow.
  void setStrips(const render::StripOptions& strips);
  /// Share of the height given to the tabs under the timeline (0..1).
  void setTabsShare(double share);

 public slots:
  void showOpenDialog();
  void showReplayDialog();
  void showShortcuts();
  void showCompareDialog();
  void showExportDialog();
  void setMarkerAtCursor();
  void exportPng();
  /// The current run (recording or replay) as a Perfetto trace, to `path` (asks when empty).
  void exportPerfetto(const QString& path = {});
  void closeCurrentRun();
  void zoomToSelection();
  /// Shows a slice in Details and frames it in its pane (as a click does).
  void selectSlice(const app::gui::SliceRef& slice);

 signals:
  void idleChanged();
  void runOpened(int runId);
  void jobFailed(const QString& message);
  /// A folder held traces of several unrelated recordings: not opened; `runs`
  /// are the paths that open each as a run of its own (the user is asked).
  void separateRunsFound(const QString& folder, const QStringList& runs);
  /// A report export ended: written, failed or cancelled.
  void reportExported(const QString& path, bool ok);
  /// A Perfetto export ended: written or failed.
  void perfettoExported(const QString& path, bool ok);

 protected:
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;
  void closeEvent(QCloseEvent* e) override;
  void showEvent(QShowEvent* e) override;

 private:
  void buildActions();
  void buildUi();
  void addJob(Job* job);
  void updateJobStatus();
  void reportError(const QString& title, const QString& message);
  void offerSeparateRuns(const QString& folder, const QString& message, const QStringList& runs);
  void showBanner(const QString& text);
  void scheduleStats();
  void recomputeStats();
  void refreshTables();
  void recomputeDiff();
  void checkPendingComparison();
  void updateStatusTexts();
  void addRecentFile(const QString& path);
  void rebuildRecentMenu();
  int currentRecording() const;
  QString rangeText() const;
  std::optional<core::analysis::TimeRange> absoluteRange(const Run& run) const;

  std::shared_ptr<ReplayBackend> m_backend;
  RunSet* m_runs;
  TimelineViewState* m_view;
  TimelineArea* m_area = nullptr;
  QSplitter* m_hsplit = nullptr;
  QSplitter* m_vsplit = nullptr;
  QTreeView* m_runsView = nullptr;
  RunsModel* m_runsModel = nullptr;
  QTabWidget* m_tabs = nullptr;
  QTableView* m_taskView = nullptr;
  TaskTableModel* m_taskModel = nullptr;
  TaskFilterProxy* m_taskProxy = nullptr;
  StatsView* m_statsView = nullptr;
  FidelityView* m_fidelityView = nullptr;
  DetailsView* m_details = nullptr;
  DiffView* m_diffView = nullptr;
  WhyController* m_why = nullptr;
  QAction* m_alignStarts = nullptr;
  QAction* m_alignMarkers = nullptr;
  QAction* m_freqStrips = nullptr;
  QAction* m_idleStrips = nullptr;
  QAction* m_counterLines = nullptr;
  QAction* m_taskSignals = nullptr;
  Alignment m_alignment = Alignment::Starts;
  uint64_t m_diffGeneration = 0;
  std::optional<std::pair<int, int>> m_pendingComparison;  // order tickets of A and B
  QLineEdit* m_search = nullptr;
  QLabel* m_banner = nullptr;
  QWidget* m_bannerBox = nullptr;
  QLabel* m_cursorLabel = nullptr;
  QLabel* m_selectionLabel = nullptr;
  QLabel* m_jobLabel = nullptr;
  QProgressBar* m_jobProgress = nullptr;
  QToolButton* m_jobCancel = nullptr;
  QMenu* m_recentMenu = nullptr;
  QTimer* m_statsTimer = nullptr;
  QTimer* m_searchTimer = nullptr;

  std::vector<QPointer<Job>> m_jobs;
  uint64_t m_statsGeneration = 0;
  int m_statsPending = 0;
  std::optional<SliceRef> m_selectedSlice;
  QStringList m_errors;
  QStringList m_bannerLines;
  bool m_interactive = true;
  bool m_timingLog = false;
  bool m_wasIdle = true;
  bool m_splitRestored = false;
};

}  // namespace app::gui
