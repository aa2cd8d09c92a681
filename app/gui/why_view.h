// The "Why" tab: the why-not-running breakdown of the selected task (time per
// state, antagonists, wakers, idle-while-runnable), its critical path as a list
// (double-click jumps there), and the breakdown's change in another run (a
// replay, a second recording). WhyController computes what it shows off the GUI thread.
#pragma once

#include <QWidget>
#include <memory>
#include <optional>

#include "core/analysis/why.h"

class QComboBox;
class QLabel;
class QTableWidget;

namespace app::gui {

struct WhyResult {
  int runId = -1;
  QString runTitle;
  std::shared_ptr<const core::TraceModel> model;
  core::analysis::WhyReport why;
  struct Comparison {
    int runId = -1;
    QString runTitle;
    std::shared_ptr<const core::TraceModel> model;
    core::analysis::WhyReport why;
    core::analysis::WhyDiff diff;
  };
  std::optional<Comparison> other;  ///< the same task in the run chosen to compare with
};

/// Running / runnable / sleeping / blocked / unknown as one proportional bar.
class StateBar : public QWidget {
  Q_OBJECT
 public:
  explicit StateBar(QWidget* parent = nullptr);
  void setReport(const core::analysis::WhyReport* report);
  QSize sizeHint() const override { return {600, 44}; }

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  int64_t m_ns[5] = {};
};

class WhyView : public QWidget {
  Q_OBJECT
 public:
  explicit WhyView(QWidget* parent = nullptr);
  void setResult(std::shared_ptr<const WhyResult> result);
  void setMessage(const QString& text);
  /// Runs offered to compare with (id, title); -1 is "none".
  void setCompareChoices(const std::vector<std::pair<int, QString>>& runs);
  int compareRun() const;
  const WhyResult* result() const { return m_result.get(); }
  QTableWidget* pathTable() const { return m_path; }

 signals:
  void compareRunChanged();
  /// The user asked to see a piece of the path (absolute times of run `runId`).
  void jumpRequested(int runId, core::Utid utid, int64_t from, int64_t to);

 private:
  std::shared_ptr<const WhyResult> m_result;
  QLabel* m_title;
  StateBar* m_bar;
  QLabel* m_totals;
  QTableWidget* m_antagonists;
  QTableWidget* m_wakers;
  QTableWidget* m_path;
  QComboBox* m_compare;
  QTableWidget* m_diff;
};

}  // namespace app::gui
