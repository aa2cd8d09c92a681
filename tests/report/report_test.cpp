// Reports as a user sees them: the PDF's text (through pdftotext) names the
// tasks, the fairness index, latency figures and the diff table; the CLI and
// the library give the same content; `diff --json` pairs tasks by name; the
// demo report with replays carries every parameter and the validation block.
#include <gtest/gtest.h>

#include <QFile>
#include <QGuiApplication>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPainter>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <filesystem>
#include <sstream>

#include "app/cli/cli.h"
#include "app/cli/drawing_commands.h"
#include "app/render/chart_painter.h"
#include "app/render/time_axis.h"
#include "app/report/report.h"
#include "app/report/report_data.h"
#include "app/report/report_figures.h"
#include "importers/importer.h"
#include "support/trace_builder.h"
#include "replay/replay.h"

namespace {

using app::report::ReportFormat;
using app::report::ReportSpec;

void ensureApp() {
  static std::unique_ptr<QGuiApplication> app;
  if (QCoreApplication::instance()) return;
  qputenv("QT_QPA_PLATFORM", "offscreen");
  static int argc = 1;
  static char arg0[] = "report_test";
  static char* argv[] = {arg0, nullptr};
  app = std::make_unique<QGuiApplication>(argc, argv);
}

std::string dataPath(const std::string& name) { return std::string(SCHEDLAB_TEST_DATA) + "/report/" + name; }
std::string demoPath() { return std::string(SCHEDLAB_TEST_DATA) + "/../../resources/demo/pipe-and-hogs.txt"; }

std::shared_ptr<const core::TraceModel> load(const std::string& path, std::optional<core::Topology> topo = {}) {
  importers::ImportOptions options;
  options.topology = std::move(topo);
  auto r = importers::importTrace(path, options);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  return r ? r->model : nullptr;
}

std::string readFile(const std::string& path) {
  QFile f(QString::fromStdString(path));
  EXPECT_TRUE(f.open(QIODevice::ReadOnly)) << path;
  return f.readAll().toStdString();
}

bool havePdftotext() { return !QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty(); }

QString pdfText(const QString& pdf, bool layout = true) {
  QProcess p;
  QStringList args;
  if (layout) args << QStringLiteral("-layout");
  args << pdf << QStringLiteral("-");
  p.start(QStringLiteral("pdftotext"), args);
  p.waitForFinished(60000);
  return QString::fromUtf8(p.readAllStandardOutput());
}

int pdfPages(const QString& pdf) {
  const QString text = pdfText(pdf, false);
  return static_cast<int>(text.count(QChar(u'\f')));
}

QString withoutDate(const QString& text) {
  QStringList keep;
  for (const QString& line : text.split(u'\n'))
    if (!line.contains(QStringLiteral("Report date:"))) keep << line;
  return keep.join(u'\n');
}

int runCli(const std::vector<std::string>& argv, std::string* outText = nullptr, std::string* errText = nullptr) {
  app::cli::runDrawingCommandsHere();
  std::ostringstream out, err;
  const int rc = app::cli::run(argv, out, err);
  if (outText) *outText = out.str();
  if (errText) *errText = err.str();
  return rc;
}

ReportSpec twoRuns() {
  ReportSpec spec;
  spec.runs.push_back({load(dataPath("pipe-alone.txt")), {}});
  spec.runs.push_back({load(dataPath("pipe-hogs.txt")), {}});
  return spec;
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ensureApp();
    ASSERT_TRUE(m_dir.isValid());
  }
  QString file(const QString& name) const { return m_dir.filePath(name); }
  QTemporaryDir m_dir;
};

TEST_F(ReportTest, PdfTextNamesTasksFairnessLatencyAndDiff) {
  if (!havePdftotext()) GTEST_SKIP() << "pdftotext (poppler-utils) not installed";
  ReportSpec spec = twoRuns();
  const QString pdf = file(QStringLiteral("two.pdf"));
  ASSERT_TRUE(app::report::writeReport(spec, pdf, ReportFormat::Pdf).isOk());
  const QString text = pdfText(pdf);
  ASSERT_FALSE(text.isEmpty());

  // The numbers the report prints are the statistics of the runs, as
  // core::analysis computes them (tests/core/stats_test.cpp checks those
  // against hand-worked cases): here, that each lands on its own row, A then B.
  const auto a = core::analysis::computeStats(*spec.runs[0].model);
  const auto b = core::analysis::computeStats(*spec.runs[1].model);
  for (const char* comm : {"sched-pipe", "memfd:sealed-91", "rcu_preempt"}) EXPECT_TRUE(text.contains(comm)) << comm;
  EXPECT_TRUE(text.contains(QStringLiteral("sh "))) << "the hogs (only in B)";
  const auto expectRow = [&](const QString& label, const QString& valueA, const QString& valueB) {
    const QRegularExpression row(QStringLiteral("(^|\\n) *") + QRegularExpression::escape(label) + QStringLiteral(" +") +
                                 QRegularExpression::escape(valueA) + QStringLiteral(" +") +
                                 QRegularExpression::escape(valueB) + QStringLiteral(" "));
    EXPECT_TRUE(text.contains(row)) << label.toStdString() << ": " << valueA.toStdString() << " then " << valueB.toStdString();
  };
  expectRow(QStringLiteral("Jain's fairness index"), QString::number(a.fairness.jain, 'f', 4),
            QString::number(b.fairness.jain, 'f', 4));
  expectRow(QStringLiteral("Wakeup latency p99"), app::render::formatDuration(a.wakeupLatency.p99),
            app::render::formatDuration(b.wakeupLatency.p99));
  expectRow(QStringLiteral("Scheduling delay p99"), app::render::formatDuration(a.schedDelay.p99),
            app::render::formatDuration(b.schedDelay.p99));
  // The headline: B (the same workload beside two hogs) switched involuntarily more often.
  ASSERT_GT(b.switchesInvoluntary, a.switchesInvoluntary);
  EXPECT_TRUE(text.contains(QStringLiteral("Headline changes: B against A")));
  EXPECT_TRUE(text.contains(QStringLiteral("Involuntary switches (preempted)")));
  // The diff section and its task table.
  EXPECT_TRUE(text.contains(QStringLiteral("Differences: B against A")));
  EXPECT_TRUE(text.contains(QStringLiteral("Task changes")));
  EXPECT_TRUE(text.contains(QStringLiteral("Kolmogorov")));
  EXPECT_TRUE(text.contains(QStringLiteral("new"))) << "tasks only in B are marked";
  // Charts and timelines carry text too (axis labels, pane headers).
  EXPECT_TRUE(text.contains(QStringLiteral("Wakeup latency CDF")));
  EXPECT_TRUE(text.contains(QStringLiteral("busiest window")));
  EXPECT_TRUE(text.contains(QStringLiteral("CPU 0")));
  const int pages = pdfPages(pdf);
  EXPECT_GE(pages, 5);
  EXPECT_TRUE(text.contains(QStringLiteral("page 1 of %1").arg(pages)));
  EXPECT_TRUE(text.contains(QStringLiteral("page %1 of %1").arg(pages)));
}

TEST_F(ReportTest, DiffJsonPairsTasksByName) {
  std::string out, err;
  ASSERT_EQ(runCli({"diff", dataPath("pipe-alone.txt"), dataPath("pipe-hogs.txt"), "--json"}, &out, &err), 0) << err;
  const auto doc = QJsonDocument::fromJson(QByteArray::fromStdString(out));
  ASSERT_TRUE(doc.isObject());
  const QJsonArray tasks = doc.object().value(QStringLiteral("tasks")).toArray();
  ASSERT_FALSE(tasks.isEmpty());
  const auto a = core::analysis::computeStats(*load(dataPath("pipe-alone.txt")));
  const auto b = core::analysis::computeStats(*load(dataPath("pipe-hogs.txt")));
  auto pipeRuntime = [](const core::analysis::RunStats& s) {
    int64_t sum = 0;
    for (const auto& t : s.tasks)
      if (t.comm == "sched-pipe") sum += t.runtimeNs;
    return sum;
  };
  std::map<std::pair<QString, QString>, int> seen;
  bool pipePaired = false, hogsOnlyInB = false;
  for (const auto& v : tasks) {
    const QJsonObject t = v.toObject();
    const QString comm = t.value(QStringLiteral("comm")).toString();
    const QString process = t.value(QStringLiteral("process")).toString();
    ++seen[{process, comm}];
    const bool inA = t.value(QStringLiteral("a")).isObject();
    const bool inB = t.value(QStringLiteral("b")).isObject();
    EXPECT_TRUE(inA || inB) << comm.toStdString();
    if (comm == QLatin1String("sched-pipe")) {
      // Both runs have the two pipe tasks (other tids): one row, both sides, summed.
      pipePaired = inA && inB;
      EXPECT_EQ(t.value(QStringLiteral("tasks_a")).toInt(), 2);
      EXPECT_EQ(t.value(QStringLiteral("tasks_b")).toInt(), 2);
      EXPECT_EQ(t.value(QStringLiteral("a")).toObject().value(QStringLiteral("runtime_ns")).toInteger(), pipeRuntime(a));
      EXPECT_EQ(t.value(QStringLiteral("b")).toObject().value(QStringLiteral("runtime_ns")).toInteger(), pipeRuntime(b));
    }
    if (comm == QLatin1String("sh")) hogsOnlyInB = !inA && inB;
  }
  EXPECT_TRUE(pipePaired);
  EXPECT_TRUE(hogsOnlyInB);
  for (const auto& [key, n] : seen) EXPECT_EQ(n, 1) << key.second.toStdString() << " listed twice";

  // The report's diff is the same pairing.
  auto data = app::report::computeReportData(twoRuns(), {}, {});
  ASSERT_TRUE(data);
  ASSERT_TRUE((*data)->diff);
  EXPECT_EQ((*data)->diff->tasks.size(), static_cast<size_t>(tasks.size()));
  for (const auto& t : (*data)->diff->tasks)
    EXPECT_EQ(seen.count({QString::fromStdString(t.process), QString::fromStdString(t.comm)}), 1u) << t.comm;
}

TEST_F(ReportTest, CliAndLibraryGiveTheSameContent) {
  if (!havePdftotext()) GTEST_SKIP() << "pdftotext (poppler-utils) not installed";
  const QString viaCli = file(QStringLiteral("cli.pdf"));
  std::string err;
  ASSERT_EQ(runCli({"report", dataPath("pipe-alone.txt"), dataPath("pipe-hogs.txt"), "--replay", "cfs", "-o",
                    viaCli.toStdString(), "--quiet"},
                   nullptr, &err),
            0)
      << err;

  ReportSpec spec = twoRuns();
  auto replayed = app::report::makeReplay(spec.runs[0].model, 0, "cfs", {}, std::nullopt);
  ASSERT_TRUE(replayed) << replayed.error().message();
  spec.replays.push_back(std::move(*replayed));
  spec.date = QDateTime(QDate(2001, 2, 3), QTime(4, 5));  // a different date: only that line may differ
  const QString viaLib = file(QStringLiteral("lib.pdf"));
  ASSERT_TRUE(app::report::writeReport(spec, viaLib, ReportFormat::Pdf).isOk());

  const QString a = pdfText(viaCli), b = pdfText(viaLib);
  EXPECT_NE(a, b) << "the dates differ";
  EXPECT_EQ(withoutDate(a), withoutDate(b));
  EXPECT_TRUE(b.contains(QStringLiteral("Report date: 2001-02-03")));

  // JSON: same document apart from the date.
  const QString jsonCli = file(QStringLiteral("cli.json")), jsonLib = file(QStringLiteral("lib.json"));
  ASSERT_EQ(runCli({"report", dataPath("pipe-alone.txt"), dataPath("pipe-hogs.txt"), "--replay", "cfs", "-o",
                    jsonCli.toStdString(), "--quiet"}),
            0);
  ASSERT_TRUE(app::report::writeReport(spec, jsonLib, ReportFormat::Json).isOk());
  auto readJson = [](const QString& path) {
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::ReadOnly));
    QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    QJsonObject r = o.value(QStringLiteral("report")).toObject();
    r.remove(QStringLiteral("date"));
    o.insert(QStringLiteral("report"), r);
    return o;
  };
  EXPECT_EQ(readJson(jsonCli), readJson(jsonLib));
}

TEST_F(ReportTest, DemoWithReplaysListsEveryParameterAndTheValidation) {
  if (!std::filesystem::exists(demoPath())) GTEST_SKIP() << "no bundled demo at " << demoPath();
  if (!havePdftotext()) GTEST_SKIP() << "pdftotext (poppler-utils) not installed";
  const QString pdf = file(QStringLiteral("demo.pdf"));
  std::string out, err;
  ASSERT_EQ(runCli({"report", demoPath(), "--replay", "cfs", "--replay", "bfs", "-o", pdf.toStdString()}, &out, &err),
            0)
      << err;
  EXPECT_NE(out.find("wrote "), std::string::npos);
  const QString text = pdfText(pdf, false);
  for (const char* model : {"cfs", "bfs"}) {
    EXPECT_TRUE(text.contains(QStringLiteral("Replay: %1").arg(QLatin1String(model)))) << model;
    auto params = replay::defaultParams(model);
    ASSERT_TRUE(params);
    for (const auto& s : params->specs()) EXPECT_TRUE(text.contains(QString::fromStdString(s.key))) << model << " " << s.key;
  }
  EXPECT_TRUE(text.contains(QStringLiteral("Makespan recorded vs replay")));
  EXPECT_TRUE(text.contains(QStringLiteral("Work conserved")));
  EXPECT_TRUE(text.contains(QStringLiteral("Not modelled exactly")));
  EXPECT_TRUE(text.contains(QStringLiteral("timeout"))) << "the demo's hogs run under timeout";
  EXPECT_TRUE(text.contains(QStringLiteral("sched-pipe")));
}

TEST_F(ReportTest, RunsTableCountsTheTasksTheKeyNumbersAndTaskTablesCount) {
  // The idle task (utid 0) is in the model's thread table but in no task table.
  if (!std::filesystem::exists(demoPath())) GTEST_SKIP() << "no bundled demo at " << demoPath();
  ReportSpec spec;
  spec.runs.push_back({load(demoPath()), {}});
  const QString html = file(QStringLiteral("demo.html"));
  ASSERT_TRUE(app::report::writeReport(spec, html, ReportFormat::Html).isOk());
  const QString h = QString::fromUtf8(readFile(html.toStdString()).c_str());
  const auto tasks = core::analysis::computeStats(*spec.runs[0].model).tasks.size();
  const QRegularExpression runsRow(QStringLiteral("<th class=\"num\">Tasks</th></tr></thead><tbody><tr>.*?"
                                                  "<td class=\"num\">([0-9,]+)</td></tr>"));
  const auto inRuns = runsRow.match(h);
  ASSERT_TRUE(inRuns.hasMatch());
  EXPECT_EQ(inRuns.captured(1).toStdString(), std::to_string(tasks));
  const auto inKeyNumbers = QRegularExpression(QStringLiteral("<td>Tasks</td><td class=\"num\">([0-9,]+)</td>")).match(h);
  ASSERT_TRUE(inKeyNumbers.hasMatch());
  EXPECT_EQ(inKeyNumbers.captured(1).toStdString(), std::to_string(tasks));
  EXPECT_TRUE(h.contains(QStringLiteral("the idle task not counted")));
}

TEST_F(ReportTest, HtmlJsonAndCsvCarryTheSameRuns) {
  ReportSpec spec = twoRuns();
  const QString html = file(QStringLiteral("r.html")), json = file(QStringLiteral("r.json")),
                csv = file(QStringLiteral("r.csv"));
  ASSERT_TRUE(app::report::writeReport(spec, html, ReportFormat::Html).isOk());
  ASSERT_TRUE(app::report::writeReport(spec, json, ReportFormat::Json).isOk());
  ASSERT_TRUE(app::report::writeReport(spec, csv, ReportFormat::Csv).isOk());
  auto read = [](const QString& p) {
    QFile f(p);
    EXPECT_TRUE(f.open(QIODevice::ReadOnly));
    return QString::fromUtf8(f.readAll());
  };
  const QString h = read(html);
  EXPECT_TRUE(h.startsWith(QStringLiteral("<!DOCTYPE html>")));
  EXPECT_TRUE(h.contains(QStringLiteral("data:image/png;base64,")));
  EXPECT_TRUE(h.contains(QStringLiteral("<td>sched-pipe</td>")) || h.contains(QStringLiteral("</span>sched-pipe</td>")));
  EXPECT_TRUE(h.contains(QStringLiteral("Differences: B against A")));
  EXPECT_TRUE(h.contains(QStringLiteral("Jain&#x27;s")) || h.contains(QStringLiteral("Jain's")));

  const QJsonObject j = QJsonDocument::fromJson(read(json).toUtf8()).object();
  const QJsonArray runs = j.value(QStringLiteral("runs")).toArray();
  ASSERT_EQ(runs.size(), 2);
  EXPECT_EQ(runs[0].toObject().value(QStringLiteral("tag")).toString(), QStringLiteral("A"));
  EXPECT_FALSE(runs[0].toObject().value(QStringLiteral("stats")).toObject().value(QStringLiteral("tasks")).toArray().isEmpty());
  EXPECT_TRUE(j.value(QStringLiteral("diff")).toObject().value(QStringLiteral("tasks")).isArray());

  const QStringList lines = read(csv).split(u'\n', Qt::SkipEmptyParts);
  ASSERT_GT(lines.size(), 2);
  EXPECT_TRUE(lines[0].startsWith(QStringLiteral("run,kind,tid,tgid,comm,")));
  const auto a = core::analysis::computeStats(*spec.runs[0].model);
  const auto b = core::analysis::computeStats(*spec.runs[1].model);
  EXPECT_EQ(static_cast<size_t>(lines.size() - 1), a.tasks.size() + b.tasks.size());
  EXPECT_TRUE(lines[1].startsWith(QStringLiteral("A,recording,")));
}

TEST_F(ReportTest, RangeRestrictsEveryRun) {
  ReportSpec spec = twoRuns();
  spec.fromNs = 10'000'000;
  spec.toNs = 30'000'000;
  auto data = app::report::computeReportData(spec, {}, {});
  ASSERT_TRUE(data);
  for (const auto& r : (*data)->runs) {
    EXPECT_EQ(r.stats.range.from - r.origin, 10'000'000);
    EXPECT_EQ(r.stats.range.length(), 20'000'000);
  }
}

TEST_F(ReportTest, SmtSectionAppearsWithSiblings) {
  if (!havePdftotext()) GTEST_SKIP() << "pdftotext (poppler-utils) not installed";
  ReportSpec spec;
  spec.runs.push_back({load(dataPath("pipe-alone.txt"), *core::Topology::parseSpec("1x2")), {}});
  const QString pdf = file(QStringLiteral("smt.pdf"));
  ASSERT_TRUE(app::report::writeReport(spec, pdf, ReportFormat::Pdf).isOk());
  const QString text = pdfText(pdf);
  EXPECT_TRUE(text.contains(QStringLiteral("SMT and forced idle")));
  EXPECT_TRUE(text.contains(QStringLiteral("1 core x 2 threads")) || text.contains(QStringLiteral("1 cores x 2 threads")));

  // Without siblings or forced idle the section is left out.
  ReportSpec flat = twoRuns();
  const QString pdf2 = file(QStringLiteral("flat.pdf"));
  ASSERT_TRUE(app::report::writeReport(flat, pdf2, ReportFormat::Pdf).isOk());
  EXPECT_FALSE(pdfText(pdf2).contains(QStringLiteral("SMT and forced idle")));
}

TEST_F(ReportTest, ErrorsNameTheProblem) {
  ReportSpec empty;
  auto st = app::report::writeReport(empty, file(QStringLiteral("x.pdf")), ReportFormat::Pdf);
  EXPECT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("at least one run"), std::string::npos);

  ReportSpec spec = twoRuns();
  spec.fromNs = 5'000'000;
  spec.toNs = 1'000'000;
  st = app::report::writeReport(spec, file(QStringLiteral("x.pdf")), ReportFormat::Pdf);
  EXPECT_NE(st.message().find("range is empty"), std::string::npos) << st.message();

  ReportSpec ok = twoRuns();
  const std::string bad = "/nonexistent-folder/report.json";
  st = app::report::writeReport(ok, QString::fromStdString(bad), ReportFormat::Json);
  EXPECT_NE(st.message().find(bad), std::string::npos) << st.message();
  st = app::report::writeReport(ok, QStringLiteral("/nonexistent-folder/report.pdf"), ReportFormat::Pdf);
  EXPECT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("/nonexistent-folder/report.pdf"), std::string::npos) << st.message();

  std::stop_source stop;
  stop.request_stop();
  st = app::report::writeReport(ok, file(QStringLiteral("c.pdf")), ReportFormat::Pdf, {}, stop.get_token());
  EXPECT_NE(st.message().find("cancelled"), std::string::npos);
  EXPECT_FALSE(QFile::exists(file(QStringLiteral("c.pdf"))));

  EXPECT_EQ(app::report::formatFromPath("a/b.report.PDF"), ReportFormat::Pdf);
  EXPECT_EQ(app::report::formatFromPath("out.htm"), ReportFormat::Html);
  EXPECT_FALSE(app::report::formatFromPath("dir.pdf/report"));

  std::string err;
  const std::string out = file(QStringLiteral("u.pdf")).toStdString();
  EXPECT_EQ(runCli({"report", dataPath("pipe-alone.txt"), "--replay", "nosuch", "-o", out}, nullptr, &err), 2);
  EXPECT_NE(err.find("unknown model 'nosuch'"), std::string::npos) << err;
  EXPECT_EQ(runCli({"report", dataPath("pipe-alone.txt"), "--replay", "cfs", "--param", "no_such_knob=1", "-o", out},
                   nullptr, &err),
            2);
  EXPECT_NE(err.find("no_such_knob"), std::string::npos) << err;
  // Keys with dots of their own (coresched.cookie) are not model scopes; the
  // core-scheduling replay's forced idle reaches the report.
  const std::string jsonOut = file(QStringLiteral("cs.json")).toStdString();
  EXPECT_EQ(runCli({"report", dataPath("pipe-alone.txt"), "--replay", "cfs+coresched", "--param",
                    "coresched.cookie=per-thread", "--topology", "1x2", "-o", jsonOut},
                   nullptr, &err),
            0)
      << err;
  std::string json = readFile(jsonOut);
  EXPECT_NE(json.find("\"coresched.cookie\""), std::string::npos);
  const size_t cookieParam = json.find("\"key\": \"coresched.cookie\"");
  ASSERT_NE(cookieParam, std::string::npos);
  EXPECT_LT(json.find("\"origin\": \"user\"", cookieParam), json.find("\"doc\"", cookieParam));
  EXPECT_NE(json.find("\"cookies\""), std::string::npos);
  // A uclamp replay carries its energy estimate and frequency residency into the report.
  EXPECT_EQ(runCli({"report", dataPath("pipe-alone.txt"), "--replay", "cfs+uclamp", "-o", jsonOut}, nullptr, &err), 0)
      << err;
  json = readFile(jsonOut);
  EXPECT_NE(json.find("\"replay.energy_j\""), std::string::npos);
  EXPECT_NE(json.find("\"freq_residency\""), std::string::npos);
  // An EEVDF replay says what DELAY_DEQUEUE kept queued, as `replay` does on
  // its Model: line (on flat queues: with autogroup this trace's lone tasks
  // leave their groups' queues at once, and the groups' entities are delayed).
  const std::string html = file(QStringLiteral("dd.html")).toStdString();
  EXPECT_EQ(runCli({"report", std::string(SCHEDLAB_TEST_DATA) + "/replay/pipe-small.txt", "--replay", "eevdf",
                    "--param", "release=6.18.44", "--param", "autogroup=off", "-o", html},
                   nullptr, &err),
            0)
      << err;
  const std::string page = readFile(html);
  EXPECT_NE(page.find("Model counts"), std::string::npos);
  EXPECT_NE(page.find("DELAY_DEQUEUE kept "), std::string::npos);
  // A replay of a recording says how many recorded blocks it kept, as on `replay`'s Blocks: line.
  EXPECT_NE(page.find(">Blocks</td><td>"), std::string::npos);
  EXPECT_NE(page.find(" recorded blocks on a task's wakeup replayed"), std::string::npos);
  EXPECT_EQ(runCli({"report", dataPath("pipe-alone.txt"), "-o", file(QStringLiteral("u.txt")).toStdString()}, nullptr,
                   &err),
            2);
  EXPECT_NE(err.find("cannot tell the format"), std::string::npos) << err;
  EXPECT_EQ(runCli({"report", dataPath("pipe-alone.txt")}, nullptr, &err), 2);
  EXPECT_EQ(runCli({"report", "/nonexistent/trace.txt", "-o", out}, nullptr, &err), 1);
  EXPECT_NE(err.find("/nonexistent/trace.txt"), std::string::npos) << err;
}

TEST_F(ReportTest, UclampReplayFrequenciesBesideTheRecordings) {
  // freq-steps.txt (hand-written, tests/data/report/README.md): CPU 0 is at
  // 1 GHz for the first quarter of the covered second and at 2 GHz after; CPU 1
  // at 1 GHz throughout; the task writes two atrace slices.
  const std::string html = file(QStringLiteral("f.html")).toStdString();
  std::string err;
  ASSERT_EQ(runCli({"report", dataPath("freq-steps.txt"), "--replay", "cfs+uclamp", "-o", html}, nullptr, &err), 0)
      << err;
  const std::string h = readFile(html);
  const size_t table = h.find("CPU frequencies");
  ASSERT_NE(table, std::string::npos);
  EXPECT_NE(h.find("freq-steps.txt)</th>", h.find("<th>Recorded (", table)), std::string::npos);
  const size_t cpu0 = h.find("2.00 GHz 75.0%, 1.00 GHz 25.0%", table);
  EXPECT_NE(cpu0, std::string::npos);
  EXPECT_NE(h.find("1.00 GHz 100.0%", cpu0), std::string::npos);
  // The replay's own column (its +uclamp frequency model) is filled too.
  EXPECT_EQ(h.find("<td>—</td>", table), std::string::npos);
  // The recording's atrace slices: two "frame"s, 300 ms in all, the longest 200 ms.
  const size_t slices = h.find("User-space slices");
  ASSERT_NE(slices, std::string::npos);
  const size_t frame = h.find("<td>frame</td>", slices);
  ASSERT_NE(frame, std::string::npos);
  const std::string row = h.substr(frame, h.find("</tr>", frame) - frame);
  EXPECT_NE(row.find(">2<"), std::string::npos) << row;
  EXPECT_NE(row.find(">" + app::render::formatDuration(300'000'000).toStdString() + "<"), std::string::npos) << row;
  EXPECT_NE(row.find(">" + app::render::formatDuration(200'000'000).toStdString() + "<"), std::string::npos) << row;
}

TEST_F(ReportTest, ScopedParametersReachOnlyTheirModel) {
  auto rec = load(demoPath());
  ASSERT_TRUE(rec);
  auto cfs = app::report::makeReplay(rec, 0, "cfs", {"hz=1000", "bfs.rr_interval=3"}, std::nullopt);
  ASSERT_TRUE(cfs) << cfs.error().message();
  auto bfs = app::report::makeReplay(rec, 0, "bfs", {"hz=1000", "bfs.rr_interval=3"}, std::nullopt);
  ASSERT_TRUE(bfs) << bfs.error().message();
  auto value = [](const app::report::ReportReplay& r, const std::string& key) {
    for (const auto& p : r.model->replay->params)
      if (p.key == key) return p.value;
    return std::string("(absent)");
  };
  EXPECT_EQ(value(*cfs, "hz"), "1000");
  EXPECT_EQ(value(*bfs, "hz"), "1000");
  EXPECT_EQ(value(*bfs, "rr_interval"), "3");
  EXPECT_EQ(value(*cfs, "rr_interval"), "(absent)");
  ASSERT_TRUE(cfs->validation);
  EXPECT_TRUE(cfs->validation->workConserved);
  auto wrong = app::report::makeReplay(rec, 0, "cfs", {"cfs.rr_interval=3"}, std::nullopt);
  EXPECT_FALSE(wrong);
}

TEST_F(ReportTest, ChartsPaintDataAndSayWhenThereIsNone) {
  QImage img(600, 300, QImage::Format_RGB32);
  auto inked = [&] {
    size_t n = 0;
    for (int y = 0; y < img.height(); ++y)
      for (int x = 0; x < img.width(); ++x) n += img.pixel(x, y) != qRgb(255, 255, 255) ? 1 : 0;
    return n;
  };
  const std::vector<int64_t> a{0, 1000, 2000, 5000, 40000, 1000000}, b{3000, 3000, 9000};
  app::render::CdfChart cdf;
  cdf.title = QStringLiteral("t");
  cdf.series = {{QStringLiteral("a"), Qt::red, a}, {QStringLiteral("b"), Qt::blue, b}};
  img.fill(Qt::white);
  {
    QPainter p(&img);
    app::render::paintCdfChart(p, QRectF(0, 0, 600, 300), cdf);
  }
  size_t reds = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) reds += img.pixel(x, y) == QColor(Qt::red).rgb() ? 1 : 0;
  EXPECT_GT(reds, 200u) << "the CDF line is drawn";
  app::render::CdfChart none;
  none.series = {{QStringLiteral("a"), Qt::red, {}}};
  img.fill(Qt::white);
  {
    QPainter p(&img);
    app::render::paintCdfChart(p, QRectF(0, 0, 600, 300), none);
    app::render::BarChart bars;
    app::render::paintBarChart(p, QRectF(0, 0, 600, 300), bars);  // no categories: must not crash
  }
  EXPECT_GT(inked(), 0u);
}

// A hackbench report's "CPU time of the busiest task names" spans 308 ms to
// 0.1 ms: on a linear axis every bar but one vanished. More than 100x between
// the smallest positive value and the largest gives a decade axis, begun a
// decade below a smallest value that sits on a decade so its bar has height:
// 0.01 .. 1000 here, where 1 is 2 of 5 decades up; 100x exactly stays linear.
TEST_F(ReportTest, BarChartsTurnLogarithmicWhenValuesSpanMoreThanAHundredfold) {
  using app::render::BarChart;
  using app::render::BarScale;
  BarChart wide;
  wide.categories = {QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c"), QStringLiteral("d")};
  wide.series = {{QStringLiteral("run"), QColor(0x1f, 0x77, 0xb4), {308, 1.4, 0.1, 0}, {}}};
  const auto axis = app::render::barAxis(wide);
  EXPECT_TRUE(axis.log);
  EXPECT_DOUBLE_EQ(axis.lo, 0.01);
  EXPECT_DOUBLE_EQ(axis.hi, 1000);
  EXPECT_EQ(axis.ticks.size(), 6u);
  EXPECT_DOUBLE_EQ(axis.fraction(1), 0.4);
  EXPECT_DOUBLE_EQ(axis.fraction(0.1), 0.2);
  EXPECT_DOUBLE_EQ(axis.fraction(0), 0.0);  // a zero has no bar
  BarChart hundredfold = wide;
  hundredfold.series[0].values = {100, 1};
  const auto linear = app::render::barAxis(hundredfold);
  EXPECT_FALSE(linear.log);
  EXPECT_DOUBLE_EQ(linear.lo, 0);
  EXPECT_DOUBLE_EQ(linear.hi, 100);
  EXPECT_DOUBLE_EQ(linear.fraction(1), 0.01);
  BarChart forced = wide;
  forced.scale = BarScale::Linear;  // percentages: parts of a whole
  EXPECT_FALSE(app::render::barAxis(forced).log);
  BarChart negative = wide;
  negative.series[0].values = {-5, 0.01, 100};
  EXPECT_FALSE(app::render::barAxis(negative).log);

  // Painted: the 0.1 bar (category c) stands a fifth of the plot tall.
  QImage img(600, 300, QImage::Format_RGB32);
  img.fill(Qt::white);
  {
    QPainter p(&img);
    app::render::paintBarChart(p, QRectF(0, 0, 600, 300), wide);
  }
  auto tallest = [&](int x0, int x1) {
    int best = 0;
    for (int x = x0; x < x1; ++x) {
      int n = 0;
      for (int y = 0; y < img.height(); ++y) n += img.pixel(x, y) == QColor(0x1f, 0x77, 0xb4).rgb() ? 1 : 0;
      best = std::max(best, n);
    }
    return best;
  };
  const int a = tallest(70, 140);   // inside bar a, whatever the tick labels' width
  const int c = tallest(355, 420);  // inside bar c
  EXPECT_GT(c, 20) << "the 0.1 bar is visible";
  EXPECT_NEAR(static_cast<double>(c) / a, 0.2 / app::render::barAxis(wide).fraction(308), 0.05);
}

// A 128-CPU run's timeline figure carries the GUI's overview heat map under its
// pane header (26 px ruler + 22 px header), with the colour scale in its
// 130 px label column: 26 + 22 + 112 + 128 rows of 6 px = 928 logical px.
TEST_F(ReportTest, BigMachineTimelineFigureHasTheOverviewHeatMapAndItsScale) {
  testing_support::TraceBuilder tb;
  tb.builder().setTopology(*core::Topology::parseSpec("2s:32c:2t:4l"));
  tb.builder().setFormat("synthetic");
  for (int c = 0; c < 128; ++c) tb.sw(1000 + c, c, 0, "R", 1000 + c);
  for (int c = 0; c < 128; ++c) tb.other(1001000 + c, c, 1000 + c);
  const auto m = tb.build();
  ASSERT_EQ(m->cpuCount(), 128);
  app::report::TimelineFigure fig{app::render::RunRenderData::create(m), 0, 500000, QStringLiteral("big")};
  EXPECT_DOUBLE_EQ(app::report::timelineAspect(fig), 928.0 / app::report::kTimelineLogicalWidth);
  QImage img(app::report::kTimelineLogicalWidth, 928, QImage::Format_RGB32);
  img.fill(Qt::white);
  {
    QPainter p(&img);
    app::report::paintTimelineFigure(p, QRectF(img.rect()), fig);
  }
  const QRect bar = app::render::heatLegendBar(QRect(0, 48, 130, app::render::kHeatmapHeight));
  const int y = bar.center().y();
  EXPECT_EQ(img.pixel(bar.left() - 8, y), app::render::heatColor(0));
  EXPECT_EQ(img.pixel(bar.left(), y), app::render::heatColor(0.5 / bar.width()));
  EXPECT_EQ(img.pixel(bar.right(), y), app::render::heatColor((bar.width() - 0.5) / bar.width()));
  // Every CPU ran throughout: the heat map is the busy end of the scale.
  EXPECT_EQ(img.pixel(700, 48 + 50), app::render::heatColor(1));
}

// Two real recordings of one workload from the shared traces (the trace.txt
// and trace.dat runs of hackbench are separate runs): the report pairs the
// hackbench tasks and prints their numbers.
TEST_F(ReportTest, SharedRecordedHackbenchRuns) {
  const std::string dir = std::string(SCHEDLAB_SHARED_TRACES) + "/recorded/hackbench-proc";
  if (!std::filesystem::exists(dir + "/trace.txt") || !std::filesystem::exists(dir + "/trace.dat"))
    GTEST_SKIP() << "no shared recordings at " << dir;
  if (!havePdftotext()) GTEST_SKIP() << "pdftotext (poppler-utils) not installed";
  ReportSpec spec;
  spec.runs.push_back({load(dir + "/trace.txt"), {}});
  spec.runs.push_back({load(dir + "/trace.dat"), {}});
  ASSERT_TRUE(spec.runs[0].model && spec.runs[1].model);
  const QString pdf = file(QStringLiteral("hb.pdf"));
  ASSERT_TRUE(app::report::writeReport(spec, pdf, ReportFormat::Pdf).isOk());
  const QString text = pdfText(pdf);
  EXPECT_TRUE(text.contains(QStringLiteral("hackbench")));
  const auto a = core::analysis::computeStats(*spec.runs[0].model);
  EXPECT_TRUE(text.contains(QString::number(a.fairness.jain, 'f', 4)));
  EXPECT_TRUE(text.contains(QStringLiteral("Differences: B against A")));
  auto data = app::report::computeReportData(spec, {}, {});
  ASSERT_TRUE(data);
  bool paired = false;
  for (const auto& t : (*data)->diff->tasks)
    if (t.comm == "hackbench") paired = t.a && t.b && t.tasksA > 10 && t.tasksB > 10;
  EXPECT_TRUE(paired) << "the hackbench senders and receivers of both runs meet in one row";
}

// `--replay baseline` is the recording kernel's model, as for `replay`, and the
// parameters table says what set each value: the default, the replay's
// measurement of the recording, or the recorded kernel release.
TEST_F(ReportTest, BaselineReplaySaysWhatSetEachParameter) {
  const std::string trace = std::string(SCHEDLAB_SHARED_TRACES) + "/recorded/hackbench-proc/trace.dat";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "no shared recording at " << trace;
  if (!havePdftotext()) GTEST_SKIP() << "pdftotext (poppler-utils) not installed";
  const QString pdf = file(QStringLiteral("baseline.pdf"));
  std::string out, err;
  ASSERT_EQ(runCli({"report", trace, "--replay", "baseline", "--param", "hz=1000", "-o", pdf.toStdString()}, &out, &err), 0)
      << err;
  const QString text = pdfText(pdf, false);
  EXPECT_TRUE(text.contains(QStringLiteral("Replay: eevdf")));  // the trace says 6.18.44: EEVDF
  EXPECT_TRUE(text.contains(QStringLiteral("Set by")));
  EXPECT_TRUE(text.contains(QStringLiteral("measured from the recording:")));
  EXPECT_TRUE(text.contains(QStringLiteral("the recording's kernel")));
  EXPECT_TRUE(text.contains(QStringLiteral("\nuser\n")));  // hz, set on the command line
}

}  // namespace

// The "Why tasks waited" section lists each run's longest waiters with their
// breakdown. In tests/data/why/chain.txt (worked out in tests/core/why_test.cpp)
// taskB waited longest, 800 us (200 after its wakeup, 600 preempted by taskD),
// behind taskA (800 us on CPU 0) and taskD (600 us on CPU 1), and no CPU idled
// while it waited behind another task.
TEST_F(ReportTest, WhySectionNamesTheLongestWaiterAndItsAntagonists) {
  ReportSpec spec;
  spec.runs.push_back({load(std::string(SCHEDLAB_TEST_DATA) + "/why/chain.txt"), {}});
  auto data = app::report::computeReportData(spec, {}, {});
  ASSERT_TRUE(data) << data.error().message();
  const auto doc = app::report::buildDocument(*data);
  const app::report::Table* why = nullptr;
  bool inSection = false;
  for (const auto& b : doc.blocks) {
    if (b.kind == app::report::Block::Kind::Heading) inSection = b.text == QStringLiteral("Why tasks waited");
    if (inSection && b.kind == app::report::Block::Kind::Table && !why) why = &b.table;
  }
  ASSERT_NE(why, nullptr);
  ASSERT_EQ(why->rows.size(), 4u);  // A, B, C and D all waited
  const auto& first = why->rows[0];
  EXPECT_EQ(first[0].text, QStringLiteral("taskB (102)"));
  EXPECT_EQ(first[2].text, app::render::formatDuration(800'000));
  EXPECT_EQ(first[4].text, app::render::formatDuration(0));
  EXPECT_TRUE(first[5].text.startsWith(QStringLiteral("taskA (101) ") + app::render::formatDuration(800'000)))
      << first[5].text.toStdString();
  EXPECT_TRUE(first[5].text.contains(QStringLiteral("taskD (104) ") + app::render::formatDuration(600'000)));
}

// A 256-CPU machine (2 x 64 cores x 2 threads, 8 LLCs of 32 CPUs): the
// utilisation table has one row per LLC, not 256. Over the span 0..1000 ns,
// CPU 0 is busy half the time and CPU 255 all of it, every other CPU is idle;
// so LLC 0's busy median is 0 with range 0-50%, LLC 7's 0 with range 0-100%.
TEST_F(ReportTest, BigMachineUtilisationIsSummarisedPerLlc) {
  testing_support::TraceBuilder tb;
  tb.sw(0, 0, 0, "R", 1).sw(0, 255, 0, "R", 2).sw(500, 0, 1, "S", 0).sw(1000, 255, 2, "S", 0);
  auto model = tb.build();
  auto topo = core::Topology::parseSpec("2s:64c:2t:8l");
  ASSERT_TRUE(topo.has_value()) << topo.error().message();
  model->topology = topo.value();
  ReportSpec spec;
  spec.runs.push_back({model, {}});
  const QString html = file(QStringLiteral("big.html"));
  ASSERT_TRUE(app::report::writeReport(spec, html, ReportFormat::Html).isOk());
  QFile f(html);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(f.readAll());
  EXPECT_TRUE(text.contains(QStringLiteral("Busy time of the CPUs of each LLC")));
  EXPECT_TRUE(text.contains(QStringLiteral("0-31"))) << "LLC 0's CPUs";
  EXPECT_TRUE(text.contains(QStringLiteral("224-255"))) << "LLC 7's CPUs";
  EXPECT_TRUE(text.contains(QStringLiteral("0.0% (0.0%\u201350.0%)")));
  EXPECT_TRUE(text.contains(QStringLiteral("0.0% (0.0%\u2013100.0%)")));
  EXPECT_FALSE(text.contains(QStringLiteral(">CPU 200<"))) << "no per-CPU rows";
}
