// `schedlab`: the desktop application. Files on the command line are opened
// as runs (--compare A B opens two as a comparison); --replay adds replays of
// each; --sweep shows a sweep's results; --screenshot renders the window
// offscreen once everything is loaded and --export-report writes a report
// through the GUI's export path.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "app/gui/diff_view.h"
#include "app/gui/fidelity_view.h"
#include "app/gui/latency_view.h"
#include "app/gui/main_window.h"
#include "app/gui/sweep_view.h"
#include "app/gui/timeline_view.h"
#include "app/gui/why_controller.h"
#include "app/gui/why_view.h"
#include "app/render/time_axis.h"
#include "core/huge_pages.h"
#include "core/malloc_arena.h"

namespace {
bool wantsScreenshot(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--screenshot", 12) == 0) return true;
  return false;
}

// --help and --version need no display: QApplication would abort without one
// before the parser could print anything.
bool mayAskForHelpOrVersion(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    for (const char* name : {"-h", "--help", "-?", "-v", "--version"})
      if (std::strcmp(argv[i], name) == 0) return true;
  return false;
}
}  // namespace

int main(int argc, char** argv) {
  core::rerunWithHugePageMalloc(argv);
  core::useOneMallocArena();
  QElapsedTimer sinceStart;
  sinceStart.start();
  const bool screenshot = wantsScreenshot(argc, argv);
  // Screenshots need no display: use the offscreen platform unless one was chosen.
  if (screenshot && qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  if (screenshot) {
    // The offscreen platform's chatter says nothing about the picture.
    static QtMessageHandler previous = qInstallMessageHandler(
        [](QtMsgType type, const QMessageLogContext& context, const QString& message) {
          if (message.startsWith(QLatin1String("QStandardPaths:")) || message.contains(QLatin1String("propagateSizeHints")))
            return;
          if (previous) previous(type, context, message);
        });
  }
  QCoreApplication::setOrganizationName(QStringLiteral("SchedLab"));
  QCoreApplication::setApplicationName(QStringLiteral("SchedLab"));
  QCoreApplication::setApplicationVersion(QStringLiteral("0.1.0"));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("SchedLab: scheduler traces, replays and statistics side by side."));
  const QCommandLineOption helpOpt = parser.addHelpOption();
  const QCommandLineOption versionOpt = parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("files"), QStringLiteral("Traces to open (files, or CTF folders)."), QStringLiteral("[FILES...]"));
  const QCommandLineOption screenshotOpt(QStringLiteral("screenshot"),
                                         QStringLiteral("Render the main window to OUT.png once loaded, then exit."), QStringLiteral("OUT.png"));
  const QCommandLineOption replayOpt(QStringLiteral("replay"), QStringLiteral("Replay every recording through MODEL (repeatable)."),
                                     QStringLiteral("MODEL"));
  const QCommandLineOption paramOpt(QStringLiteral("param"), QStringLiteral("key=value for --replay (repeatable)."), QStringLiteral("KEY=VALUE"));
  const QCommandLineOption topologyOpt(QStringLiteral("topology"), QStringLiteral("Topology of the traces (CxT, or fields such as 2s:64c:2t), overriding theirs."), QStringLiteral("TOPO"));
  const QCommandLineOption replayTopologyOpt(QStringLiteral("replay-topology"), QStringLiteral("Topology of the replays (CxT, or fields such as 2s:64c:2t:8l)."), QStringLiteral("TOPO"));
  const QCommandLineOption sizeOpt(QStringLiteral("size"), QStringLiteral("Window size for --screenshot (default 1600x1000)."), QStringLiteral("WxH"));
  const QCommandLineOption searchOpt(QStringLiteral("search"), QStringLiteral("Highlight tasks matching TEXT."), QStringLiteral("TEXT"));
  const QCommandLineOption fromOpt(QStringLiteral("from"), QStringLiteral("Show from this time (e.g. 10ms)."), QStringLiteral("T"));
  const QCommandLineOption toOpt(QStringLiteral("to"), QStringLiteral("Show up to this time."), QStringLiteral("T"));
  const QCommandLineOption selectOpt(QStringLiteral("select"), QStringLiteral("Select the range FROM:TO (statistics follow it)."), QStringLiteral("FROM:TO"));
  const QCommandLineOption tabOpt(QStringLiteral("tab"), QStringLiteral("Tab to show: tasks, statistics, details, diff, why, latency, fidelity or sweep."), QStringLiteral("NAME"));
  const QCommandLineOption compareOpt(QStringLiteral("compare"),
                                      QStringLiteral("Open A and B (the next argument) as a comparison: side by side, with the Diff tab."),
                                      QStringLiteral("A"));
  const QCommandLineOption markerOpt(QStringLiteral("marker"),
                                     QStringLiteral("Set a marker at T (relative to the start) in the Nth recording, for the Nth --marker; "
                                                    "the runs are then aligned at their markers."),
                                     QStringLiteral("T"));
  const QCommandLineOption exportOpt(QStringLiteral("export-report"),
                                     QStringLiteral("Once loaded, write a report (pdf, html, json or csv by extension) of the compared "
                                                    "runs and their replays through File \u2192 Export report, then exit."),
                                     QStringLiteral("OUT"));
  const QCommandLineOption taskRowOpt(QStringLiteral("task-row"), QStringLiteral("Show the state row of tasks whose tid is TID (repeatable)."), QStringLiteral("TID"));
  const QCommandLineOption sliceOpt(QStringLiteral("select-slice"),
                                    QStringLiteral("Show the details of the slice running on CPU at time T in the first recording."),
                                    QStringLiteral("CPU@T"));
  const QCommandLineOption timingOpt(QStringLiteral("timing"), QStringLiteral("Print import and first-paint timings to stderr."));
  const QCommandLineOption sweepOpt(QStringLiteral("sweep"),
                                    QStringLiteral("Open the results of schedlab-cli sweep in the Sweep tab."), QStringLiteral("RESULTS"));
  const QCommandLineOption sweepRowOpt(QStringLiteral("sweep-row"),
                                       QStringLiteral("Open the replay of job N (from 1, the manifest's order) of --sweep beside its recording."),
                                       QStringLiteral("N"));
  const QCommandLineOption groupByOpt(QStringLiteral("group-by"),
                                      QStringLiteral("Group CPU rows by LEVELS: package, node, llc, core (comma-separated), or none."),
                                      QStringLiteral("LEVELS"));
  const QCommandLineOption collapseOpt(QStringLiteral("collapse-groups"), QStringLiteral("Show every CPU group as its summary rows."));
  const QCommandLineOption rowHeightOpt(QStringLiteral("row-height"), QStringLiteral("Height of a CPU row in pixels (2 to 40)."),
                                        QStringLiteral("PX"));
  const QCommandLineOption stripsOpt(QStringLiteral("strips"),
                                     QStringLiteral("Show the View menu's strips: freq, idle, counters, tasks (the task rows' "
                                                    "PELT signals), comma-separated, or all."),
                                     QStringLiteral("LIST"));
  const QCommandLineOption heatmapOpt(QStringLiteral("heatmap"), QStringLiteral("Overview heat map above the rows: busy, waiting or off."),
                                      QStringLiteral("METRIC"));
  parser.addOptions({screenshotOpt, replayOpt, paramOpt, topologyOpt, replayTopologyOpt, sizeOpt, searchOpt, fromOpt, toOpt,
                     selectOpt, tabOpt, taskRowOpt, sliceOpt, timingOpt, compareOpt, markerOpt, exportOpt, sweepOpt,
                     sweepRowOpt, groupByOpt, collapseOpt, rowHeightOpt, heatmapOpt, stripsOpt});
  if (mayAskForHelpOrVersion(argc, argv)) {
    // A core application knows the arguments and names the parser prints. Qt's
    // own options (-platform ...) and --help-all, which lists them, are left to
    // QApplication below, as is any command line that does not parse here.
    QCoreApplication console(argc, argv);
    if (parser.parse(QCoreApplication::arguments()) && !parser.isSet(QStringLiteral("help-all"))) {
      if (parser.isSet(helpOpt)) parser.showHelp(0);
      if (parser.isSet(versionOpt)) parser.showVersion();
    }
  }
  QApplication app(argc, argv);
  parser.process(app);

  QTemporaryDir settingsDir;
  std::optional<app::report::ReportFormat> exportFormat;
  if (parser.isSet(exportOpt)) {
    exportFormat = app::report::formatFromPath(parser.value(exportOpt).toStdString());
    if (!exportFormat) {
      std::fprintf(stderr, "schedlab: --export-report: name the file .pdf, .html, .json or .csv\n");
      return 2;
    }
  }
  QStringList positional = parser.positionalArguments();
  if (parser.isSet(compareOpt) && positional.isEmpty()) {
    std::fprintf(stderr, "schedlab: --compare A B needs two traces\n");
    return 2;
  }
  const bool headless = parser.isSet(screenshotOpt) || parser.isSet(exportOpt);
  if (headless) {
    // Screenshots must not depend on (or change) the user's remembered layout.
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir.path());
  }

  std::optional<core::Topology> topology;
  if (parser.isSet(topologyOpt)) {
    auto t = core::Topology::parseSpec(parser.value(topologyOpt).toStdString());
    if (!t) {
      std::fprintf(stderr, "schedlab: %s\n", t.error().message().c_str());
      return 2;
    }
    topology = *t;
  }
  app::gui::ReplayRequest replayTemplate;
  for (const QString& kv : parser.values(paramOpt)) {
    auto parsed = app::gui::parseAssignments(kv.toStdString());
    if (!parsed) {
      std::fprintf(stderr, "schedlab: %s\n", parsed.error().message().c_str());
      return 2;
    }
    for (auto& p : *parsed) replayTemplate.params.push_back(p);
  }
  if (parser.isSet(replayTopologyOpt)) {
    auto t = core::Topology::parseSpec(parser.value(replayTopologyOpt).toStdString());
    if (!t) {
      std::fprintf(stderr, "schedlab: %s\n", t.error().message().c_str());
      return 2;
    }
    replayTemplate.topology = *t;
  }

  // CPU row options apply to every pane, replays included, once they are all open.
  std::optional<std::vector<app::render::GroupLevel>> groupBy;
  if (parser.isSet(groupByOpt)) {
    groupBy = app::render::parseGroupLevels(parser.value(groupByOpt));
    if (!groupBy) {
      std::fprintf(stderr, "schedlab: --group-by: '%s': name package, node, llc, core (comma-separated) or none\n",
                   parser.value(groupByOpt).toLocal8Bit().constData());
      return 2;
    }
  }
  std::optional<int> rowHeight;
  if (parser.isSet(rowHeightOpt)) {
    bool ok = false;
    rowHeight = parser.value(rowHeightOpt).toInt(&ok);
    if (!ok || *rowHeight < 2 || *rowHeight > 40) {
      std::fprintf(stderr, "schedlab: --row-height: need a number of pixels from 2 to 40\n");
      return 2;
    }
  }
  std::optional<std::optional<app::render::HeatMetric>> heatmap;
  if (parser.isSet(heatmapOpt)) {
    heatmap = app::render::parseHeatMetric(parser.value(heatmapOpt));
    if (!heatmap) {
      std::fprintf(stderr, "schedlab: --heatmap: need busy, waiting or off\n");
      return 2;
    }
  }
  app::render::StripOptions strips;
  for (const QString& name : parser.value(stripsOpt).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    const bool all = name == QLatin1String("all");
    if (!all && name != QLatin1String("freq") && name != QLatin1String("idle") && name != QLatin1String("counters") &&
        name != QLatin1String("tasks")) {
      std::fprintf(stderr, "schedlab: --strips: '%s' is none of freq, idle, counters, tasks, all\n", qPrintable(name));
      return 2;
    }
    strips.frequency = strips.frequency || all || name == QLatin1String("freq");
    strips.idle = strips.idle || all || name == QLatin1String("idle");
    strips.counters = strips.counters || all || name == QLatin1String("counters");
    strips.taskSignals = strips.taskSignals || all || name == QLatin1String("tasks");
  }
  const bool rowOptions = groupBy || rowHeight || heatmap || parser.isSet(collapseOpt);
  bool rowOptionsApplied = false;

  app::gui::MainWindow window;
  window.setTimingLog(parser.isSet(timingOpt));
  if (headless) {
    window.setInteractive(false);
    int w = 1600, h = 1000;
    if (parser.isSet(sizeOpt)) {
      const auto parts = parser.value(sizeOpt).split(QLatin1Char('x'));
      if (parts.size() == 2) {
        w = std::max(640, parts[0].toInt());
        h = std::max(400, parts[1].toInt());
      }
    }
    window.resize(w, h);
  }
  window.show();
  if (strips.any()) window.setStrips(strips);
  if (parser.isSet(compareOpt)) window.openComparison(parser.value(compareOpt), positional.takeFirst(), topology);
  for (const QString& f : positional) window.openFile(f, topology);
  if (parser.isSet(sweepOpt)) {
    auto view = app::gui::openSweepResults(window, parser.value(sweepOpt));
    if (!view) {
      std::fprintf(stderr, "schedlab: %s\n", view.error().message().c_str());
      return 1;
    }
    if (parser.isSet(sweepRowOpt)) {
      bool ok = false;
      const int row = parser.value(sweepRowOpt).toInt(&ok);
      const int rows = (*view)->model()->rowCount();
      if (!ok || row < 1 || row > rows) {
        std::fprintf(stderr, "schedlab: --sweep-row takes a job from 1 to %d\n", rows);
        return 2;
      }
      (*view)->openJob(row - 1);
    }
  }

  // Steps after loading: replays, view settings, then (for --screenshot) the picture.
  const QStringList replays = parser.values(replayOpt);
  int phase = 0;
  auto* driver = new QTimer(&window);
  driver->setInterval(50);
  QObject::connect(driver, &QTimer::timeout, &window, [&] {
    if (!window.isIdle()) return;
    if (phase == 0) {
      phase = 1;
      for (int rec : window.runs()->recordings())
        for (const QString& model : replays) {
          app::gui::ReplayRequest req = replayTemplate;
          req.model = model.toStdString();
          window.startReplay(rec, req);
        }
      auto* view = window.viewState();
      int64_t from = 0, to = view->span();
      bool range = false;
      if (parser.isSet(fromOpt)) range = app::render::parseDuration(parser.value(fromOpt), from) || range;
      if (parser.isSet(toOpt)) range = app::render::parseDuration(parser.value(toOpt), to) || range;
      if (range) view->showRange(from, to);
      if (parser.isSet(selectOpt)) {
        const auto parts = parser.value(selectOpt).split(QLatin1Char(':'));
        int64_t a = 0, b = 0;
        if (parts.size() == 2 && app::render::parseDuration(parts[0], a) && app::render::parseDuration(parts[1], b)) {
          view->setSelection(app::gui::TimelineViewState::Range{a, b});
          view->commitSelection();
        }
      }
      if (parser.isSet(searchOpt)) window.setSearchText(parser.value(searchOpt));
      const QStringList markers = parser.values(markerOpt);
      const auto recs = window.runs()->recordings();
      for (int i = 0; i < markers.size() && i < static_cast<int>(recs.size()); ++i) {
        int64_t t = 0;
        if (app::render::parseDuration(markers[i], t))
          window.setMarker(recs[static_cast<size_t>(i)], window.runs()->run(recs[static_cast<size_t>(i)])->model->firstTs + t);
      }
      if (!markers.isEmpty()) window.setAlignment(app::gui::MainWindow::Alignment::Markers);
      for (const QString& tid : parser.values(taskRowOpt))
        for (int id : window.runs()->recordings()) {
          const auto* run = window.runs()->run(id);
          for (size_t u = 1; u < run->model->threadCount(); ++u)
            if (run->model->threads.tid[u] == tid.toInt()) {
              window.timeline()->showTaskRow(id, core::Utid(static_cast<uint32_t>(u)));
              break;
            }
        }
      if (parser.isSet(sliceOpt) && !window.runs()->recordings().empty()) {
        const auto parts = parser.value(sliceOpt).split(QLatin1Char('@'));
        int64_t t = 0;
        const int id = window.runs()->recordings().front();
        const auto* run = window.runs()->run(id);
        if (parts.size() == 2 && app::render::parseDuration(parts[1], t) && run) {
          const int cpu = parts[0].toInt();
          const auto& track = run->render->index->cpuTrack(cpu);
          if (auto row = track.rowNear(run->render->origin + t, 1000000)) {
            app::gui::SliceRef ref;
            ref.runId = id;
            ref.cpu = cpu;
            ref.row = track.sourceRow(*row);
            ref.utid = run->model->cpuSlices[static_cast<size_t>(cpu)].utid[ref.row];
            window.selectSlice(ref);
          }
        }
      }
      const QString tab = parser.value(tabOpt).toLower();
      if (tab == QLatin1String("tasks")) window.tabs()->setCurrentIndex(0);
      if (tab == QLatin1String("statistics")) {
        window.tabs()->setCurrentIndex(1);
        window.setTabsShare(0.68);  // the charts need the room
      }
      if (tab == QLatin1String("details")) window.tabs()->setCurrentIndex(2);
      if (tab == QLatin1String("why") || tab == QLatin1String("latency")) {
        window.tabs()->setCurrentWidget(tab == QLatin1String("why") ? static_cast<QWidget*>(window.whyController()->whyView())
                                                                    : static_cast<QWidget*>(window.whyController()->latencyView()));
        window.setTabsShare(0.55);
      }
      if (tab == QLatin1String("diff")) {
        window.tabs()->setCurrentWidget(window.diffView());
        window.setTabsShare(0.55);
      }
      if (tab == QLatin1String("sweep"))
        if (auto* sweepView = window.tabs()->findChild<app::gui::SweepView*>()) {
          window.tabs()->setCurrentWidget(sweepView);
          window.setTabsShare(0.5);
        }
      if (tab == QLatin1String("fidelity")) {
        window.tabs()->setCurrentWidget(window.fidelityView());
        window.setTabsShare(0.62);
      }
      return;
    }
    if (phase == 1 && parser.isSet(exportOpt)) {
      // The export waits for the replays; it is one more job, so the idle check covers it.
      phase = 3;
      app::gui::ExportOptions options;
      options.path = parser.value(exportOpt);
      options.format = *exportFormat;
      options.runIds = window.defaultExportRuns();
      options.range = window.viewState()->selection();
      QObject::connect(&window, &app::gui::MainWindow::reportExported, &window, [](const QString& path, bool ok) {
        std::fprintf(stderr, "%s %s\n", ok ? "wrote" : "cannot write", path.toLocal8Bit().constData());
      });
      window.exportReport(options);
      return;
    }
    if (phase == 3) phase = 1;
    if (phase == 1 && rowOptions && !rowOptionsApplied) {
      // The replays' panes exist now; the next idle tick paints what this changes.
      rowOptionsApplied = true;
      for (app::gui::TimelinePane* pane : window.timeline()->panes()) {
        if (rowHeight) pane->setRowHeight(*rowHeight);
        if (groupBy) pane->setCpuGrouping(*groupBy);
        if (parser.isSet(collapseOpt)) pane->setAllGroupsCollapsed(true);
        if (heatmap) pane->setHeatmap(*heatmap);
      }
      return;
    }
    if (phase == 1) {
      phase = 2;
      if (parser.isSet(timingOpt))
        std::fprintf(stderr, "timing: everything loaded and painted %.1f ms after start, peak RSS %.1f MiB\n",
                     static_cast<double>(sinceStart.nsecsElapsed()) / 1e6, app::gui::peakRssMib());
      if (!parser.isSet(screenshotOpt)) {
        driver->stop();
        if (parser.isSet(exportOpt)) {
          for (const QString& e : window.errors()) std::fprintf(stderr, "schedlab: %s\n", e.toLocal8Bit().constData());
          QApplication::exit(window.errors().isEmpty() ? 0 : 1);
        }
        return;
      }
      // One more round of events so the last draw lists are painted.
      QTimer::singleShot(200, &window, [&] {
        const QString out = parser.value(screenshotOpt);
        const QPixmap shot = window.grab();
        const bool ok = shot.save(out, "PNG");
        for (const QString& e : window.errors()) std::fprintf(stderr, "schedlab: %s\n", e.toLocal8Bit().constData());
        std::fprintf(stderr, "%s %s (%dx%d)\n", ok ? "wrote" : "cannot write", out.toLocal8Bit().constData(), shot.width(),
                     shot.height());
        QApplication::exit(!ok ? 1 : (window.runs()->count() == 0 && !parser.positionalArguments().isEmpty() ? 1 : 0));
      });
    }
  });
  driver->start();
  return QApplication::exec();
}
