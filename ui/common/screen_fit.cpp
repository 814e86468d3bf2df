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

constexpr const char* kFittedProperty = "attnscope_fitted_size";
constexpr const char* kKeeperName = "attnscope_screen_keeper";

QRect available(const QWidget* w) {
  const QScreen* s = w->screen() ? w->screen() : QGuiApplication::primaryScreen();
  return s ? s->availableGeometry() : QRect(0, 0, 1280, 800);
}

// Refits the window when the window manager frames it (it moves, or its frame grows) until it fits.
class Keeper : public QObject {
 public:
  explicit Keeper(QWidget* w) : QObject(w), w_(w) {
    setObjectName(QString::fromLatin1(kKeeperName));
    w->installEventFilter(this);
  }

 protected:
  bool eventFilter(QObject* o, QEvent* e) override {
    if (o != w_ || (e->type() != QEvent::Show && e->type() != QEvent::Move && e->type() != QEvent::Resize))
      return false;
    // Shown at the size it was fitted to (not resized since by the code that made it): placed again with
    // the real frame known. Then, once a window manager has framed it (a title bar of more than an
    // offscreen platform's 2 px), where the frame sticks out of the screen the window shrinks into it,
    // once; after that it is the user's to move and size.
    const bool framed = w_->geometry().top() - w_->frameGeometry().top() > 2;
    if ((e->type() == QEvent::Show || e->type() == QEvent::Move) && !framed) {
      if (w_->size() == w_->property(kFittedProperty).toSize()) fitToScreen(w_, w_->size());
      return false;
    }
    if (!framed) return false;
    if (!(w_->windowState() & (Qt::WindowMaximized | Qt::WindowFullScreen)) &&
        !available(w_).contains(w_->frameGeometry()))
      fitToScreen(w_, w_->size());
    deleteLater();
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
  w->setProperty(kFittedProperty, size);
  // Inside the available geometry, the estimated frame included: the window's own rect between
  // avail + the frame's margins; move() places the real frame's top-left, so the real frame is taken off.
  const QPoint realFrame = w->geometry().topLeft() - w->frameGeometry().topLeft();
  QPoint inner = w->geometry().topLeft();
  inner.setX(std::clamp(inner.x(), avail.left() + m.left(),
                        std::max(avail.left() + m.left(), avail.right() - m.right() - size.width() + 1)));
  inner.setY(std::clamp(inner.y(), avail.top() + m.top(),
                        std::max(avail.top() + m.top(), avail.bottom() - m.bottom() - size.height() + 1)));
  if (inner != w->geometry().topLeft()) w->move(inner - realFrame);
  return size;
}

void keepInsideScreen(QWidget* w) {
  // (found by name: Keeper has no meta-object of its own for findChild to tell it apart)
  if (!w->findChild<QObject*>(QString::fromLatin1(kKeeperName), Qt::FindDirectChildrenOnly)) new Keeper(w);
}

}  // namespace attnscope::ui
