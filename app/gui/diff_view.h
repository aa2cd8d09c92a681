// The Diff tab: pick two runs (A and B: two recordings, or a recording and a
// replay), see the run-level summary and a sortable table of per-task changes
// with significant ones highlighted. MainWindow computes the diff over the
// current range and hands it over; the view only shows it.
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "core/analysis/diff.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSplitter;
class QTableView;

namespace app::gui {

class DiffFilterProxy;
class DiffSummaryModel;
class DiffTaskModel;

class DiffView : public QWidget {
  Q_OBJECT
 public:
  struct RunChoice {
    int runId = -1;
    QString title;
  };

  explicit DiffView(QWidget* parent = nullptr);

  /// The runs on offer; keeps the chosen pair when both still exist, else picks the first two.
  void setRunChoices(const std::vector<RunChoice>& runs);
  /// Chooses A and B (emits pairChanged when that changes the pair).
  void setPair(int runA, int runB);
  int runA() const;
  int runB() const;
  /// Shows a diff (of runA() vs runB()) over `rangeText`, or a message when null.
  void setDiff(std::shared_ptr<const core::analysis::RunDiff> diff, const QString& rangeText, const QString& message = {});

  DiffTaskModel* taskModel() const { return m_taskModel; }
  DiffSummaryModel* summaryModel() const { return m_summaryModel; }
  DiffFilterProxy* proxy() const { return m_proxy; }
  QTableView* taskView() const { return m_taskView; }
  QTableView* summaryView() const { return m_summaryView; }
  void setShowValues(bool on);
  void setOnlySignificant(bool on);
  QString statusText() const;

 signals:
  void pairChanged(int runA, int runB);
  /// Double-click on a task: highlight it in the timeline.
  void highlightRequested(const QString& text);

 private:
  void updateColumns();
  void emitPair();
  QComboBox* m_a;
  QComboBox* m_b;
  QCheckBox* m_onlySignificant;
  QCheckBox* m_showValues;
  QLineEdit* m_filter;
  QLabel* m_status;
  QTableView* m_summaryView;
  QTableView* m_taskView;
  DiffSummaryModel* m_summaryModel;
  DiffTaskModel* m_taskModel;
  DiffFilterProxy* m_proxy;
  QSplitter* m_split = nullptr;
  bool m_updating = false;
  int m_lastA = -1;
  int m_lastB = -1;
};

}  // namespace app::gui
