// The Details tab: everything known about the clicked slice — task, times, how
// it ended, who woke it and the wakeup latency, what ran before and after, the
// sibling that forced an idle. Links highlight the waker or add task rows.
#pragma once

#include <QTextBrowser>

#include "app/gui/run_set.h"
#include "app/gui/timeline_view.h"

namespace app::gui {

/// HTML description of a slice (also used by tests).
QString sliceDetailsHtml(const Run& run, const SliceRef& slice);

class DetailsView : public QTextBrowser {
  Q_OBJECT
 public:
  explicit DetailsView(QWidget* parent = nullptr);
  void showSlice(const Run* run, const SliceRef& slice);
  void clearSlice();

 signals:
  void highlightRequested(const QString& text);
  void taskRowRequested(int runId, core::Utid utid);
  void zoomRequested(int64_t from, int64_t to);
};

}  // namespace app::gui
