// File → Record… (Ctrl+Shift+R): records a trace of this machine through the
// recorder library (the `schedlab-cli record` path) on a worker thread, with a
// progress bar and Stop; the trace it writes opens as a new run. Modeless, so
// the window stays usable while it records; one per main window.
#pragma once

#include <QDialog>
#include <QFutureWatcher>
#include <memory>
#include <optional>
#include <stop_token>

#include "core/result.h"
#include "recorder/recorder.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QMenu;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QSpinBox;

namespace app::gui {

class MainWindow;

class RecordDialog : public QDialog {
  Q_OBJECT
 public:
  explicit RecordDialog(QWidget* parent = nullptr);
  /// A recording still running is stopped (and written) before the dialog goes.
  ~RecordDialog() override;

  bool isRecording() const { return m_watcher.isRunning(); }
  QString errorText() const;
  /// The options as the fields say; an error when one is unusable.
  core::Result<recorder::RecordOptions> options() const;

 signals:
  /// The trace was written (and the dialog closed): `notes` are what the user should know.
  void recorded(const QString& path, const QStringList& notes);

 public slots:
  /// Record, or Stop while recording.
  void startOrStop();
  /// Close (Esc) while recording stops it first: the dialog goes once the trace is written.
  void reject() override;

 private:
  void browse();
  void showProgress(const recorder::RecordProgress& progress);
  void finished();
  void setRecording(bool on);

  QComboBox* m_events;
  QSpinBox* m_bufferKb;
  QRadioButton* m_forDuration;
  QDoubleSpinBox* m_seconds;
  QRadioButton* m_forCommand;
  QLineEdit* m_command;
  QRadioButton* m_untilStop;
  QLineEdit* m_output;
  QPushButton* m_browse;
  QProgressBar* m_progress;
  QLabel* m_status;
  QLabel* m_error;
  QPushButton* m_start;
  QPushButton* m_close;
  struct Outcome {
    std::optional<recorder::RecordResult> result;
    QString error;
  };
  std::stop_source m_stop;
  QFutureWatcher<Outcome> m_watcher;
};

/// Adds File → Record… to `fileMenu`: it shows the window's RecordDialog, and a
/// trace it writes opens in `window`.
void addRecordAction(MainWindow& window, QMenu* fileMenu);

}  // namespace app::gui
