// The Fidelity tab: how faithfully each replay reproduces the recording it
// was made from (core/analysis/fidelity.h) - every metric with the recorded
// and replayed value, their ratio, its bound and a coloured verdict, then the
// tasks whose CPU share moved most. What the workload could not represent
// exactly (Unmodelled's counts) is listed under the summary: a verdict reads
// differently when, say, the recording's kernel grouped tasks by session.
// Observes the RunSet; one replay at a time.
#pragma once

#include <QWidget>

#include "app/gui/run_set.h"

class QComboBox;
class QLabel;
class QTableWidget;

namespace app::gui {

class FidelityView : public QWidget {
  Q_OBJECT
 public:
  FidelityView(const RunSet& runs, QWidget* parent = nullptr);
  /// Shows this replay's fidelity (a recording shows its first replay's).
  void showRun(int runId);
  int shownRun() const;
  /// The verdict cell of a metric row, for tests: "pass", "fail" or "info".
  QString verdictOf(const QString& metricKey) const;
  /// The "not modelled exactly" line as shown (counts that are not zero).
  QString unmodelledText() const;

 private:
  void refill();
  void showSelected();

  const RunSet& m_runs;
  QComboBox* m_choice;
  QLabel* m_summary;
  QLabel* m_unmodelled;
  QTableWidget* m_metrics;
  QTableWidget* m_tasks;
};

}  // namespace app::gui
