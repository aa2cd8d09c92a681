// A horizontal header whose sort arrow points the way the values run: ▼ while
// the largest come first, ▲ while the smallest do. Qt's own header passes
// descending order to the style as "sort up" (the Windows convention), which
// Fusion draws as ▲ over a column whose values fall. Every sortable table of
// the window uses it (SortHeaderView::install).
#pragma once

#include <QHeaderView>

class QTableView;

namespace app::gui {

class SortHeaderView : public QHeaderView {
  Q_OBJECT
 public:
  explicit SortHeaderView(QWidget* parent = nullptr);
  /// Replaces the view's horizontal header, keeping its settings that matter here.
  static void install(QTableView* view);

 protected:
  void initStyleOptionForIndex(QStyleOptionHeader* option, int logicalIndex) const override;
};

}  // namespace app::gui
