// The File → Export report… dialog: format (PDF, HTML, JSON, CSV), page size,
// which runs (one or two recordings and their replays), the range (current
// selection or whole runs) and the output file. MainWindow writes the report
// on a worker through report_export.h, the code path of `schedlab-cli report`.
#pragma once

#include <QDialog>
#include <optional>
#include <vector>

#include "app/gui/report_export.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QRadioButton;

namespace app::gui {

class ExportReportDialog : public QDialog {
  Q_OBJECT
 public:
  /// `checked`: the runs ticked at first; `selection`: the view's selected range, if any.
  ExportReportDialog(const RunSet& runs, const std::vector<int>& checked,
                     std::optional<std::pair<int64_t, int64_t>> selection, const QString& defaultPath,
                     QWidget* parent = nullptr);

  /// Valid after accept().
  const ExportOptions& options() const { return m_options; }

  // For tests: drive the dialog without a user.
  void setFormat(report::ReportFormat format);
  void setPath(const QString& path);
  void setRunsChecked(const std::vector<int>& runIds);
  void setUseSelection(bool on);
  QString errorText() const;

 public slots:
  void accept() override;

 private:
  ExportOptions current() const;
  void updateState();

  const RunSet& m_runs;
  std::optional<std::pair<int64_t, int64_t>> m_selection;
  QComboBox* m_format;
  QComboBox* m_page;
  QListWidget* m_runList;
  QRadioButton* m_whole;
  QRadioButton* m_range;
  QLineEdit* m_path;
  QLabel* m_command;
  QLabel* m_error;
  ExportOptions m_options;
};

}  // namespace app::gui
