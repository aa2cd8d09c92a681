// The Replay… dialog: pick a recording, one or more scheduler models, the
// topology (the trace's, or CxT), per-task rules (cookies, uclamp, SMT
// factors) and key=value parameters (sysctls, tunables...). MainWindow runs
// each request as a Job.
#pragma once

#include <QDialog>
#include <memory>
#include <vector>

#include "app/gui/replay_backend.h"
#include "app/gui/run_set.h"

class QButtonGroup;
class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QRadioButton;
class QTextBrowser;

namespace app::gui {

class ReplayDialog : public QDialog {
  Q_OBJECT
 public:
  ReplayDialog(const RunSet& runs, int currentRecording, std::shared_ptr<ReplayBackend> backend,
               QWidget* parent = nullptr);

  int recordingId() const;
  /// One request per checked model; valid after accept().
  const std::vector<ReplayRequest>& requests() const { return m_requests; }

  // For tests and --screenshot: drive the dialog without a user.
  void setModelsChecked(const QStringList& names);
  void setTopologySpec(const QString& spec);
  void setParamsText(const QString& text);
  /// The per-task fields: cookies (coresched.cookie), uclamp requests
  /// (uclamp.clamp) and SMT factors (smt.task_factor), as the CLI's flags.
  void setTaskRules(const QString& cookies, const QString& uclamp, const QString& smtFactors);

 public slots:
  void accept() override;

 private:
  void updateHelp();
  void updateTopologyInfo();

  const RunSet& m_runs;
  std::shared_ptr<ReplayBackend> m_backend;
  std::vector<ReplayModelInfo> m_models;
  QComboBox* m_recording;
  QListWidget* m_modelList;
  QRadioButton* m_topoTrace;
  QRadioButton* m_topoSpec;
  QLineEdit* m_topoEdit;
  QPlainTextEdit* m_params;
  QLineEdit* m_cookies;
  QLineEdit* m_uclamp;
  QLineEdit* m_smtFactors;
  QTextBrowser* m_help;
  QLabel* m_error;
  QDialogButtonBox* m_buttons;
  std::vector<ReplayRequest> m_requests;
};

}  // namespace app::gui
