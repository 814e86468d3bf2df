#include "ui/common/screen_fit.h"

#include <QApplication>
#include <QEvent>
#include <QObject>
#include <QScreen>
#include <QStyle>
#include <QWidget>
#include <algorithm>

namespace attnscope::ui {

namespace {

QRect available(const QWidget* w) {
  const QScreen* s = w->screen() ? w->screen() : QGuiApplication::primaryScreen();
  return s ? s->availableGeometry() : QRect(0, 0, 1280, 800);
}

// Refits the window when the window manager frames it (it moves, or its frame grows) until it fits.
class Keeper : public QObject {
 public:
  explicit Keeper(QWidget* w) : QObject(w), w_(w) { w->installEventFilter(this); }

 protected:
  bool eventFilter(QObject* o, QEvent* e) override {
    if (o != w_ || (e->type() != QEvent::Show && e->type() != QEvent::Move && e->type() != QEvent::Resize))
      return false;
    // Framed: the window manager's title bar is known (more than an offscreen platform's 2 px).
    const bool framed = w_->geometry().top() - w_->frameGeometry().top() > 2;
    if (!(w_->windowState() & (Qt::WindowMaximized | Qt::WindowFullScreen)) &&
        !available(w_).contains(w_->frameGeometry()))
      fitToScreen(w_, w_->size());
    if (framed) deleteLater();  // once framed and fitted, the window is the user's to move
    return false;
  }

 private:
  QWidget* w_;
};

}  // namespace

QMargins windowFrame(const QWidget* w) {
  const QRect frame = w->frameGeometry(), inner = w->geometry();
  const QMargins real(inner.left() - frame.left(), inner.top() - frame.top(), frame.right() - inner.right(),
                      frame.bottom() - inner.bottom());
  // Unframed (no window manager yet, or an offscreen platform's 2 px): the title bar a window
  // manager will add, at least.
  const int title = w->style()->pixelMetric(QStyle::PM_TitleBarHeight, nullptr, w);
  const int titleBar = std::max({real.top(), title, 24});
  return {std::max(real.left(), 4), titleBar, std::max(real.right(), 4), std::max(real.bottom(), 4)};
}

QSize fitToScreen(QWidget* w, QSize wanted) {
  const QRect avail = available(w);
  const QMargins m = windowFrame(w);
  const QSize room(avail.width() - m.left() - m.right(), avail.height() - m.top() - m.bottom());
  const QSize size = wanted.boundedTo(room).expandedTo(w->minimumSize());
  w->resize(size);
  // The frame's top-left (what move() sets) kept where the whole frame lies inside the available geometry.
  const QSize outer(size.width() + m.left() + m.right(), size.height() + m.top() + m.bottom());
  QPoint at = w->pos();
  at.setX(std::clamp(at.x(), avail.left(), std::max(avail.left(), avail.right() + 1 - outer.width())));
  at.setY(std::clamp(at.y(), avail.top(), std::max(avail.top(), avail.bottom() + 1 - outer.height())));
  if (at != w->pos()) w->move(at);
  return size;
}

void keepInsideScreen(QWidget* w) {
  if (!w->findChild<Keeper*>(QString(), Qt::FindDirectChildrenOnly)) new Keeper(w);
}

}  // namespace attnscope::ui
