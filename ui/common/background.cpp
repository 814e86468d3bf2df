#include "ui/common/background.h"

#include <QCoreApplication>
#include <atomic>
#include <vector>

namespace attnscope::ui::detail {

namespace {

struct Running {
  std::thread thread;
  std::shared_ptr<std::atomic<bool>> finished;
};

struct Threads {
  std::mutex mutex;
  std::vector<Running> running;
  bool joinAtExit = false;
};

Threads& threads() {
  static Threads t;
  return t;
}

// Joins every thread still known (QCoreApplication's destructor calls it).
void joinAll() {
  std::vector<Running> all;
  {
    const std::lock_guard<std::mutex> lock(threads().mutex);
    all.swap(threads().running);
  }
  for (Running& r : all) r.thread.join();
}

}  // namespace

void startBackgroundThread(std::function<void()> body) {
  Threads& t = threads();
  std::vector<Running> ended;
  {
    const std::lock_guard<std::mutex> lock(t.mutex);
    if (!t.joinAtExit && QCoreApplication::instance()) {
      qAddPostRoutine(joinAll);  // while the application object still exists
      t.joinAtExit = true;
    }
    // Threads whose work has returned are joined here, outside the lock.
    for (auto it = t.running.begin(); it != t.running.end();) {
      if (it->finished->load(std::memory_order_acquire)) {
        ended.push_back(std::move(*it));
        it = t.running.erase(it);
      } else {
        ++it;
      }
    }
    auto finished = std::make_shared<std::atomic<bool>>(false);
    t.running.push_back({std::thread([body = std::move(body), finished] {
                           body();
                           finished->store(true, std::memory_order_release);
                         }),
                         finished});
  }
  for (Running& r : ended) r.thread.join();
}

}  // namespace attnscope::ui::detail
