#include "ui/common/wheel_guard.h"

#include <QAbstractScrollArea>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QEvent>
#include <QScrollBar>
#include <QWheelEvent>

namespace attnscope::ui {

namespace {

class WheelGuard : public QObject {
 public:
  using QObject::QObject;

 protected:
  bool eventFilter(QObject* o, QEvent* e) override {
    if (e->type() != QEvent::Wheel) return false;
    auto* w = qobject_cast<QWidget*>(o);
    if (!w || w->hasFocus()) return false;
    // The scroll area around it scrolls instead (its vertical bar, as the wheel over its margin would).
    for (QWidget* p = w->parentWidget(); p; p = p->parentWidget())
      if (auto* area = qobject_cast<QAbstractScrollArea*>(p)) {
        if (QScrollBar* bar = static_cast<QWheelEvent*>(e)->modifiers() & Qt::ShiftModifier
                                  ? area->horizontalScrollBar()
                                  : area->verticalScrollBar();
            bar && bar->isVisible())
          QCoreApplication::sendEvent(bar, e);
        break;
      }
    return true;  // never the control's
  }
};

}  // namespace

void guardWheel(QWidget* root) {
  static auto* guard = new WheelGuard(QCoreApplication::instance());
  const auto guardOne = [](QWidget* w) {
    // A slider inside a scroll bar is the scroll bar itself: it keeps its wheel.
    if (qobject_cast<QScrollBar*>(w)) return;
    if (w->focusPolicy() == Qt::WheelFocus) w->setFocusPolicy(Qt::StrongFocus);
    w->removeEventFilter(guard);
    w->installEventFilter(guard);
  };
  for (QComboBox* c : root->findChildren<QComboBox*>()) guardOne(c);
  for (QAbstractSpinBox* s : root->findChildren<QAbstractSpinBox*>()) guardOne(s);
  for (QAbstractSlider* s : root->findChildren<QAbstractSlider*>()) guardOne(s);
}

}  // namespace attnscope::ui
