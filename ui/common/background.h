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
#include <QString>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
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
// thread, unless `context` has been deleted meanwhile. When `work` throws,
// `failed(message)` runs there instead, with the exception's what(): a view
// whose computation fails says so rather than staying blank.
template <class Work, class Done, class Failed>
void runInBackground(QObject* context, Work work, Done done, Failed failed) {
  using Result = std::invoke_result_t<Work&>;
  struct Slot {
    std::mutex mutex;
    std::optional<Result> result;
    QString error;
  };
  auto slot = std::make_shared<Slot>();
  auto* delivery = new detail::Delivery;
  delivery->deliver = [slot, guard = QPointer<QObject>(context), done = std::move(done),
                       failed = std::move(failed)]() mutable {
    std::optional<Result> r;
    QString error;
    {
      const std::lock_guard<std::mutex> lock(slot->mutex);
      r = std::move(slot->result);
      error = slot->error;
    }
    if (!guard) return;
    if (r)
      done(std::move(*r));
    else
      failed(error);
  };
  detail::startBackgroundThread([slot, delivery, work = std::move(work)]() mutable {
    std::optional<Result> r;
    QString error;
    try {
      r.emplace(work());
    } catch (const std::bad_alloc&) {
      error = QStringLiteral("out of memory");
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    } catch (...) {
      error = QStringLiteral("an unknown error");
    }
    {
      const std::lock_guard<std::mutex> lock(slot->mutex);
      slot->result = std::move(r);
      slot->error = error;
      // Posted with the slot held: deliverNow takes the slot first, so the delivery is not deleted while
      // this call still reads it (a hand-over ThreadSanitizer sees; the one inside Qt's event queue is
      // invisible to it, and test_loader's tsan run once caught the delete racing this read).
      QMetaObject::invokeMethod(delivery, "deliverNow", Qt::QueuedConnection);
    }
  });
}

}  // namespace attnscope::ui
