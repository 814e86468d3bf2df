// The header every sortable table uses, so sorting reads and works the same in each: the arrow
// points the way the values go down the column (Qt's own points up for a descending sort), and the
// first click on a column of figures sorts the largest first, as profilers do (a second click
// reverses; a column of names starts A to Z).
#pragma once

#include <QHeaderView>
#include <QStyleOptionHeader>

class QTableView;

namespace attnscope::ui {

class SortHeaderView : public QHeaderView {
  Q_OBJECT

 public:
  explicit SortHeaderView(QWidget* parent = nullptr);

  // The arrow the style draws for a section (tests read it): SortDown for a descending sort.
  QStyleOptionHeader::SortIndicator sortArrow(int logicalIndex) const;
  // Sorts by `section`: the other way when it is the sorted one, else its first order (figures
  // largest first). What a click on the title does, for the keyboard too.
  void sortBy(int section);

 protected:
  void initStyleOptionForIndex(QStyleOptionHeader* option, int logicalIndex) const override;
  void mouseReleaseEvent(QMouseEvent* e) override;

 private:
  bool numeric(int section) const;
};

// Makes a table a good keyboard citizen and gives it the shared header: Tab and Shift+Tab leave the
// table (the arrows move inside it), Ctrl+Shift+S sorts by the current cell's column (again: the
// other way). The header is replaced only when it is a plain QHeaderView.
void useSortableTable(QTableView* view);

}  // namespace attnscope::ui
