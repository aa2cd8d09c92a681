// File → Record… driven offscreen like a user: the shortcut opens the dialog,
// the command or "until Stop" is chosen, Record starts it, Stop ends it, and
// the trace appears as a new run in the runs list. Unusable options and a
// kernel without the events asked for show their message in the dialog.
// Recording needs root and tracefs (CI has both); elsewhere the tests that
// record say why they skip.
#include <gtest/gtest.h>

#include <QAction>
#include <QLineEdit>
#include <QPushButton>
#include <QLabel>
#include <QRadioButton>
#include <QComboBox>
#include <QProgressBar>
#include <QTest>
#include <filesystem>

#include "app/gui/main_window.h"
#include "app/gui/record_dialog.h"
#include "app/gui/run_set.h"
#include "gui_test_support.h"
#include "recorder/tracefs_instance.h"
#include "support/scratch_dir.h"
#include "support/tracefs_support.h"

namespace {

using namespace app::gui;
using guitest::ensureApp;
using guitest::waitIdle;
using test_support::ScratchDir;

template <typename T>
T* child(QWidget* w, const char* name) {
  auto* c = w->findChild<T*>(QString::fromLatin1(name));
  EXPECT_TRUE(c) << name;
  return c;
}

// Opens the dialog the way a user does: its shortcut, Ctrl+Shift+R.
RecordDialog* openRecordDialog(MainWindow& w) {
  for (QAction* a : w.findChildren<QAction*>())
    if (a->shortcut() == QKeySequence(QStringLiteral("Ctrl+Shift+R"))) a->trigger();
  auto* d = w.findChild<RecordDialog*>();
  EXPECT_TRUE(d && d->isVisible());
  return d;
}

// On its indicator, where a user clicks: a radio button spanning a form row
// does not take clicks in the empty middle of the row.
void choose(QRadioButton* radio) {
  QTest::mouseClick(radio, Qt::LeftButton, {}, QPoint(radio->height() / 2, radio->height() / 2));
}

bool waitFor(const std::function<bool()>& condition, int timeoutMs) {
  QElapsedTimer t;
  t.start();
  while (!condition()) {
    if (t.elapsed() > timeoutMs) return false;
    QTest::qWait(20);
  }
  return true;
}

TEST(GuiRecord, ACommandIsRecordedAndOpensAsANewRun) {
  if (auto why = tracefs_test::recordingUnavailable(); !why.empty()) GTEST_SKIP() << why;
  ensureApp();
  ScratchDir dir("gui-record");
  const auto before = tracefs_test::tracingState(tracefs_test::tracefsRoot());
  MainWindow w;
  w.setInteractive(false);
  w.show();
  RecordDialog* d = openRecordDialog(w);
  ASSERT_TRUE(d);
  const std::string out = dir.file("gui.dat");
  child<QLineEdit>(d, "output")->setText(QString::fromStdString(out));
  QTest::keyClicks(child<QLineEdit>(d, "command"), QStringLiteral("hackbench -g 2 -l 20"));
  EXPECT_TRUE(child<QRadioButton>(d, "forCommand")->isChecked());
  auto* start = child<QPushButton>(d, "start");
  QTest::mouseClick(start, Qt::LeftButton);
  EXPECT_TRUE(d->isRecording());
  EXPECT_EQ(start->text(), QStringLiteral("&Stop"));
  EXPECT_TRUE(child<QProgressBar>(d, "progress")->isVisible());
  ASSERT_TRUE(waitFor([&] { return w.runs()->count() == 1; }, 60000)) << d->errorText().toStdString();
  ASSERT_TRUE(waitIdle(w));
  EXPECT_FALSE(d->isVisible());
  const app::gui::Run* run = w.runs()->run(w.runs()->ids().front());
  ASSERT_TRUE(run);
  EXPECT_EQ(run->path.toStdString(), out);
  uint64_t switches = 0;
  for (const auto& [name, n] : run->model->eventCounts)
    if (name == "sched_switch") switches = n;
  EXPECT_GT(switches, 100u);
  EXPECT_EQ(run->model->topology.source(), "gui.dat.topology");
  EXPECT_TRUE(w.errors().isEmpty()) << w.errors().join('\n').toStdString();
  EXPECT_EQ(tracefs_test::changes(before, tracefs_test::tracingState(tracefs_test::tracefsRoot())), "");
}

TEST(GuiRecord, StopEndsARecordingThatRunsUntilStopped) {
  if (auto why = tracefs_test::recordingUnavailable(); !why.empty()) GTEST_SKIP() << why;
  ensureApp();
  ScratchDir dir("gui-record-stop");
  MainWindow w;
  w.setInteractive(false);
  w.show();
  RecordDialog* d = openRecordDialog(w);
  ASSERT_TRUE(d);
  child<QLineEdit>(d, "output")->setText(QString::fromStdString(dir.file("stopped.dat")));
  choose(child<QRadioButton>(d, "untilStop"));
  ASSERT_TRUE(child<QRadioButton>(d, "untilStop")->isChecked());
  auto* start = child<QPushButton>(d, "start");
  QTest::mouseClick(start, Qt::LeftButton);
  auto* status = child<QLabel>(d, "status");
  ASSERT_TRUE(waitFor([&] { return status->text().startsWith(QStringLiteral("Recording: ")); }, 10000))
      << status->text().toStdString() << d->errorText().toStdString();
  EXPECT_EQ(child<QProgressBar>(d, "progress")->maximum(), 0);  // no end known: a busy bar
  QTest::mouseClick(start, Qt::LeftButton);  // Stop
  ASSERT_TRUE(waitFor([&] { return w.runs()->count() == 1; }, 30000)) << d->errorText().toStdString();
  ASSERT_TRUE(waitIdle(w));
  EXPECT_EQ(w.runs()->run(w.runs()->ids().front())->path.toStdString(), dir.file("stopped.dat"));
}

TEST(GuiRecord, UnusableOptionsShowTheirMessageInTheDialog) {
  ensureApp();
  ScratchDir dir("gui-record-errors");
  MainWindow w;
  w.setInteractive(false);
  RecordDialog* d = openRecordDialog(w);
  ASSERT_TRUE(d);
  child<QLineEdit>(d, "output")->setText(QString::fromStdString(dir.file("x.dat")));
  choose(child<QRadioButton>(d, "forCommand"));
  QTest::mouseClick(child<QPushButton>(d, "start"), Qt::LeftButton);
  EXPECT_EQ(d->errorText(), QStringLiteral("type the command to record, or choose a duration"));
  EXPECT_FALSE(d->isRecording());

  // An event this kernel lacks; without root, the root message comes first,
  // and without tracefs (a chroot without /sys) the recorder's own reason.
  choose(child<QRadioButton>(d, "forDuration"));
  child<QComboBox>(d, "events")->setEditText(QStringLiteral("sched:no_such_event"));
  QTest::mouseClick(child<QPushButton>(d, "start"), Qt::LeftButton);
  ASSERT_TRUE(waitFor([&] { return !d->isRecording(); }, 10000));
  QTest::qWait(50);
  const auto tracefs = recorder::locateTracefs("");
  std::string expected;
  if (tracefs_test::recordingUnavailable().starts_with("recording needs root"))
    expected = recorder::needRootMessage();
  else if (!tracefs)
    expected = tracefs.error().message();
  else
    expected = "this kernel has no such event: sched:no_such_event (see " + *tracefs + "/events)";
  EXPECT_EQ(d->errorText().toStdString(), expected);
  EXPECT_TRUE(d->isVisible());
  EXPECT_EQ(w.runs()->count(), 0);
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.dat")));
}

}  // namespace
