// The Statistics tab: per-run summary and Qt Charts over the current range —
// wakeup-latency CDF of every run overlaid, CPU share per task per run, per-CPU
// utilisation, forced idle per SMT sibling, fairness index per run.
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "core/analysis/stats.h"
#include "core/trace_model.h"

class QChart;
class QChartView;
class QLabel;

namespace app::gui {

class StatsView : public QWidget {
  Q_OBJECT
 public:
  struct RunEntry {
    int runId = -1;
    QString title;
    std::shared_ptr<const core::TraceModel> model;
    std::shared_ptr<const core::analysis::RunStats> stats;
  };

  explicit StatsView(QWidget* parent = nullptr);
  void setRuns(const std::vector<RunEntry>& runs, const QString& rangeText);
  /// The charts, in display order (tests check their series).
  std::vector<QChart*> charts() const;
  QString summaryHtml() const;
  /// The one-line notes shown instead of charts that would have no data.
  QStringList notesShown() const;

 private:
  void replaceChart(QChartView* view, QChart* chart);
  /// Shows the chart, or `note` in its place when the note is not empty.
  void showChartOrNote(QChartView* view, QLabel* noteLabel, const QString& note);
  QString userSlicesHtml(const std::vector<const RunEntry*>& ready) const;
  QLabel* m_summary;
  QChartView* m_latency;
  QChartView* m_share;
  QChartView* m_util;
  QChartView* m_forcedIdle;
  QChartView* m_fairness;
  QChartView* m_frequency;
  QLabel* m_forcedIdleNote;
  QLabel* m_frequencyNote;
};

/// An empty chart in the tabs' style: bold title, legend below, no animation.
QChart* baseChart(const QString& title);

/// Points of an empirical CDF, at most `maxPoints`, x in microseconds (0.1 at
/// least: log axes cannot show 0), starting from 0 at the smallest sample.
std::vector<std::pair<double, double>> cdfPoints(const std::vector<int64_t>& sortedNs, size_t maxPoints = 400);
/// The left end of a log latency axis whose smallest sample is `smallestUs`:
/// the decade below it, so no sample sits on or beyond the edge.
double logAxisMinUs(double smallestUs);

}  // namespace app::gui
