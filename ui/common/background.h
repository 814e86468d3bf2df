// Work off the UI thread with its result handed back to it: the loader, the
// Why panel and Compare use it.
//
// Each task runs on a std::thread of its own; its result goes into a slot
// guarded by a std::mutex and is delivered on the context's thread through a
// queued call, so the hand-over is visible to ThreadSanitizer (Debian's Qt is
// not instrumented: synchronization inside Qt's thread pool is invisible to
// it, and the tsan preset tells it to ignore what Qt's libraries do).
// Threads still running when the application ends are joined then, as Qt's
// own thread pool does.
#pragma once

#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

namespace attnscope::ui {

namespace detail {

// Lives on the UI thread until its task's result has been delivered. The
// worker calls deliverNow() by name (a queued call carries no functor of
// ours across threads).
class Delivery : public QObject {
  Q_OBJECT

 public:
  std::function<void()> deliver;

 public slots:
  void deliverNow() {
    deliver();
    delete this;
  }
};

// Starts `body` on a new thread, remembered so that it is joined at exit.
void startBackgroundThread(std::function<void()> body);

}  // namespace detail

// Runs `work()` on a thread of its own, then `done(result)` on `context`'s
// thread, unless `context` has been deleted meanwhile. `work` must not throw
// (a throwing task delivers nothing).
template <class Work, class Done>
void runInBackground(QObject* context, Work work, Done done) {
  using Result = std::invoke_result_t<Work&>;
  struct Slot {
    std::mutex mutex;
    std::optional<Result> result;
  };
  auto slot = std::make_shared<Slot>();
  auto* delivery = new detail::Delivery;
  delivery->deliver = [slot, guard = QPointer<QObject>(context), done = std::move(done)]() mutable {
    std::optional<Result> r;
    {
      const std::lock_guard<std::mutex> lock(slot->mutex);
      r = std::move(slot->result);
    }
    if (guard && r) done(std::move(*r));
  };
  detail::startBackgroundThread([slot, delivery, work = std::move(work)]() mutable {
    std::optional<Result> r;
    try {
      r.emplace(work());
    } catch (...) {
    }
    {
      const std::lock_guard<std::mutex> lock(slot->mutex);
      slot->result = std::move(r);
    }
    QMetaObject::invokeMethod(delivery, "deliverNow", Qt::QueuedConnection);
  });
}

}  // namespace attnscope::ui
