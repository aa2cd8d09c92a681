// What every GUI test needs: one offscreen QApplication whose settings never
// touch the user's, and a wait for the main window to have nothing left to do.
#pragma once

#include <QApplication>
#include <QElapsedTimer>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/main_window.h"

namespace guitest {

inline void ensureApp() {
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

inline bool waitIdle(app::gui::MainWindow& w, int timeoutMs = 60000) {
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

}  // namespace guitest
