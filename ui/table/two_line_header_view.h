// A horizontal header that breaks long titles ("CUDA time avg") onto two
// lines, so torch's 15 columns fit a 1280-pixel window. The model's titles
// stay as they are; only the painting and the section sizes change.
#pragma once

#include <QHeaderView>
#include <QStyleOptionHeader>

namespace attnscope::ui {

class TwoLineHeaderView : public QHeaderView {
  Q_OBJECT

 public:
  explicit TwoLineHeaderView(QWidget* parent = nullptr);

  // The title with its best space turned into a line break (the split that
  // makes the wider line narrowest); titles without a space stay whole.
  static QString wrapped(const QString& title, const QFontMetrics& fm);
  // The arrow the style draws for a section (tests read it): SortDown for a descending sort.
  QStyleOptionHeader::SortIndicator sortArrow(int logicalIndex) const;

 protected:
  void initStyleOptionForIndex(QStyleOptionHeader* option, int logicalIndex) const override;
  QSize sectionSizeFromContents(int logicalIndex) const override;
};

}  // namespace attnscope::ui
