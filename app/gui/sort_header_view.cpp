#include "app/gui/sort_header_view.h"

#include <QStyleOptionHeader>
#include <QTableView>

namespace app::gui {

SortHeaderView::SortHeaderView(QWidget* parent) : QHeaderView(Qt::Horizontal, parent) {
  setSectionsClickable(true);
  setHighlightSections(true);
}

void SortHeaderView::install(QTableView* view) { view->setHorizontalHeader(new SortHeaderView(view)); }

void SortHeaderView::initStyleOptionForIndex(QStyleOptionHeader* option, int logicalIndex) const {
  QHeaderView::initStyleOptionForIndex(option, logicalIndex);
  if (option->sortIndicator == QStyleOptionHeader::SortUp)
    option->sortIndicator = QStyleOptionHeader::SortDown;
  else if (option->sortIndicator == QStyleOptionHeader::SortDown)
    option->sortIndicator = QStyleOptionHeader::SortUp;
}

}  // namespace app::gui
