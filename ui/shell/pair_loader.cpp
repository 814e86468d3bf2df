#include "ui/shell/pair_loader.h"

#include "ui/shell/trace_loader.h"

namespace attnscope::ui {

PairLoader::PairLoader(Cache cached, QObject* parent) : QObject(parent), cached_(std::move(cached)) {
  for (int side = 0; side < 2; ++side) {
    loader_[side] = new TraceLoader(this);
    connect(loader_[side], &TraceLoader::loaded, this,
            [this, side](std::shared_ptr<const LoadedTrace> t) { settle(side, std::move(t)); });
    connect(loader_[side], &TraceLoader::failed, this, [this, side](const QString& message) {
      if (done_ || !pending_[side]) return;
      done_ = true;
      loader_[1 - side]->cancel();  // the other one is not wanted any more
      emit failed((side == 0 ? QStringLiteral("A: ") : QStringLiteral("B: ")) + message);
    });
    connect(loader_[side], &TraceLoader::cancelled, this, [this, side](const QString&) {
      if (done_ || !pending_[side]) return;
      done_ = true;
      emit cancelled();
    });
  }
}

void PairLoader::load(const QString& pathA, const QString& pathB) {
  done_ = false;
  const QString paths[2] = {pathA, pathB};
  for (int side = 0; side < 2; ++side) {
    got_[side] = cached_ ? cached_(paths[side]) : nullptr;
    pending_[side] = !got_[side];
  }
  // Both start before either reports: a trace from the cache settles at once.
  for (int side = 0; side < 2; ++side)
    if (pending_[side]) loader_[side]->load(paths[side]);
  if (!pending_[0] && !pending_[1]) settle(-1, nullptr);
}

void PairLoader::settle(int side, std::shared_ptr<const LoadedTrace> trace) {
  if (done_) return;
  if (side >= 0) {
    if (!pending_[side]) return;  // an older pair's load, superseded
    got_[side] = std::move(trace);
    pending_[side] = false;
  }
  if (pending_[0] || pending_[1]) return;
  done_ = true;
  emit loaded(got_[0], got_[1]);
}

void PairLoader::cancel() {
  for (TraceLoader* l : loader_) l->cancel();
}

bool PairLoader::isBusy() const { return !done_; }

}  // namespace attnscope::ui
