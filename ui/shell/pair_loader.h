// Compare's loads: A and B read at once, each by a TraceLoader of its own (off the UI thread, with
// its progress and Cancel), the latest pair winning (a new pair supersedes one still loading),
// and traces already loaded taken from the window's cache instead of read again.
#pragma once

#include <QObject>
#include <QString>
#include <functional>
#include <memory>

#include "ui/common/loaded_trace.h"

namespace attnscope::ui {

class TraceLoader;

class PairLoader : public QObject {
  Q_OBJECT

 public:
  // `cached(path)`: a trace already loaded, or null.
  using Cache = std::function<std::shared_ptr<const LoadedTrace>(const QString&)>;
  PairLoader(Cache cached, QObject* parent = nullptr);

  void load(const QString& pathA, const QString& pathB);
  void cancel();
  bool isBusy() const;
  TraceLoader* loaderA() const { return loader_[0]; }
  TraceLoader* loaderB() const { return loader_[1]; }

 signals:
  void loaded(std::shared_ptr<const attnscope::ui::LoadedTrace> a, std::shared_ptr<const attnscope::ui::LoadedTrace> b);
  void failed(const QString& message);  // "A: <file>: <reason>"
  void cancelled();

 private:
  void settle(int side, std::shared_ptr<const LoadedTrace> trace);
  Cache cached_;
  TraceLoader* loader_[2] = {nullptr, nullptr};
  std::shared_ptr<const LoadedTrace> got_[2];
  bool pending_[2] = {false, false};
  bool done_ = true;  // the latest pair has reported (loaded, failed or cancelled)
};

}  // namespace attnscope::ui
