#include "ui/table/two_line_header_view.h"

#include <QFontMetrics>
#include <QStyle>
#include <QStyleOptionHeader>
#include <algorithm>

namespace attnscope::ui {

TwoLineHeaderView::TwoLineHeaderView(QWidget* parent) : SortHeaderView(parent) {}

QString TwoLineHeaderView::wrapped(const QString& title, const QFontMetrics& fm) {
  QString best = title;
  int bestWidth = fm.horizontalAdvance(title);
  for (qsizetype i = title.indexOf(' '); i >= 0; i = title.indexOf(' ', i + 1)) {
    const int w = std::max(fm.horizontalAdvance(title.left(i)), fm.horizontalAdvance(title.mid(i + 1)));
    if (w < bestWidth) {
      bestWidth = w;
      best = title.left(i) + QLatin1Char('\n') + title.mid(i + 1);
    }
  }
  return best;
}

void TwoLineHeaderView::initStyleOptionForIndex(QStyleOptionHeader* option, int logicalIndex) const {
  SortHeaderView::initStyleOptionForIndex(option, logicalIndex);
  option->text = wrapped(option->text, QFontMetrics(option->fontMetrics));
}

QSize TwoLineHeaderView::sectionSizeFromContents(int logicalIndex) const {
  QSize size = QHeaderView::sectionSizeFromContents(logicalIndex);
  if (!model()) return size;
  // QHeaderView reserves room for the sort arrow in every section; keep it
  // only where the arrow is (the window refits columns when the sort changes).
  if (isSortIndicatorShown() && logicalIndex != sortIndicatorSection()) {
    size.rwidth() -= size.height() + style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, this);
  }
  const QString title = model()->headerData(logicalIndex, orientation(), Qt::DisplayRole).toString();
  const QFontMetrics fm = fontMetrics();
  int widest = 0;
  for (const QString& line : wrapped(title, fm).split(QLatin1Char('\n'))) {
    widest = std::max(widest, fm.horizontalAdvance(line));
  }
  size.rwidth() -= fm.horizontalAdvance(title) - widest;
  // Every section is two lines tall, wrapped or not, so the header height
  // does not depend on which columns are visible.
  size.rheight() += fm.lineSpacing();
  return size;
}

}  // namespace attnscope::ui
