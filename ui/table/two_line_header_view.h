// A horizontal header that breaks long titles ("CUDA time avg") onto two
// lines, so torch's 15 columns fit a 1280-pixel window. The model's titles
// stay as they are; only the painting and the section sizes change. Sorting is the shared header's
// (sort_header_view.h).
#pragma once

#include <QStyleOptionHeader>

#include "ui/table/sort_header_view.h"

namespace attnscope::ui {

class TwoLineHeaderView : public SortHeaderView {
  Q_OBJECT

 public:
  explicit TwoLineHeaderView(QWidget* parent = nullptr);

  // The title with its best space turned into a line break (the split that
  // makes the wider line narrowest); titles without a space stay whole.
  static QString wrapped(const QString& title, const QFontMetrics& fm);

 protected:
  void initStyleOptionForIndex(QStyleOptionHeader* option, int logicalIndex) const override;
  QSize sectionSizeFromContents(int logicalIndex) const override;
};

}  // namespace attnscope::ui
