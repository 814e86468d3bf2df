// The attention block's four steps read a second way, from a trace's raw JSON events and nothing of
// attnscope's core: the ops each step ran (by the block's op order: QK MATMUL up to the first
// aten::matmul, SCALE up to the softmax, SOFTMAX PASS, then AV MATMUL; a step's record_function holds
// its ops), per iteration (a ProfilerStep#N each, else the MULTIHEAD_ATTENTION_FULL scope), then:
//  - the host time of the step's own ops: its outermost cpu_ops' durations added up;
//  - the GPU time of the work it launched: kernels, copies and memsets joined to the runtime calls
//    made inside the step's window on its thread, by correlation id;
//  - its record_function's duration (torch's CPU total of that call), when it is wrapped.
// The tests of the founding answer (core/snapshot/founding_answer.h) check the app's figures against it.
#pragma once

#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QVector>
#include <algorithm>
#include <cmath>
#include <functional>

namespace oracle {

inline const QStringList kStepNames{QStringLiteral("QK MATMUL"), QStringLiteral("SCALE"),
                                    QStringLiteral("SOFTMAX PASS"), QStringLiteral("AV MATMUL")};

struct OracleStep {
  QString name;
  bool wrapped = false;                // a record_function of its own (in every iteration)
  QVector<qint64> ownOps, gpu, scope;  // per iteration: host time of its outermost ops, GPU time, its scope
  QStringList ops;                     // the names of its outermost ops (first iteration)
};

// numpy's median (the mean of the two middle values), rounded to the nearest ns.
inline qint64 median(QVector<qint64> v) {
  if (v.isEmpty()) return -1;
  std::sort(v.begin(), v.end());
  const qsizetype n = v.size();
  return n % 2 ? v[n / 2] : std::llround((static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2.0);
}

namespace detail {

struct Ev {
  QString name, cat;
  qint64 tid = 0, start = 0, dur = 0, corr = -1;
  int parent = -1;
  QVector<int> children;
};

inline qint64 ns(const QJsonValue& v) { return std::llround(v.toDouble() * 1000.0); }

}  // namespace detail

// The four steps of the attention block in `path` (plain JSON); empty when it cannot be read.
inline QVector<OracleStep> attentionSteps(const QString& path) {
  using detail::Ev;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  const QJsonArray raw = QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("traceEvents")).toArray();
  QVector<Ev> cpu;
  QVector<Ev> runtime;
  QHash<qint64, qint64> gpuByCorr;  // correlation -> its GPU work's duration
  for (const QJsonValue& v : raw) {
    const QJsonObject o = v.toObject();
    if (o.value(QStringLiteral("ph")).toString() != QLatin1String("X")) continue;
    Ev e;
    e.name = o.value(QStringLiteral("name")).toString();
    e.cat = o.value(QStringLiteral("cat")).toString();
    e.tid = o.value(QStringLiteral("tid")).toVariant().toLongLong();
    e.start = detail::ns(o.value(QStringLiteral("ts")));
    e.dur = detail::ns(o.value(QStringLiteral("dur")));
    const QJsonValue corr = o.value(QStringLiteral("args")).toObject().value(QStringLiteral("correlation"));
    e.corr = corr.isDouble() ? static_cast<qint64>(corr.toDouble()) : -1;
    if (e.cat == QLatin1String("cpu_op") || e.cat == QLatin1String("user_annotation"))
      cpu.push_back(e);
    else if ((e.cat == QLatin1String("cuda_runtime") || e.cat == QLatin1String("cuda_driver")) && e.corr >= 0)
      runtime.push_back(e);
    else if ((e.cat == QLatin1String("kernel") || e.cat == QLatin1String("gpu_memcpy") ||
              e.cat == QLatin1String("gpu_memset")) &&
             e.corr >= 0)
      gpuByCorr[e.corr] += e.dur;
  }
  // Nesting per thread: by start, the longer first; a parent holds its child's whole span.
  std::sort(cpu.begin(), cpu.end(), [](const Ev& a, const Ev& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.start != b.start ? a.start < b.start : a.dur > b.dur;
  });
  QVector<int> stack;
  for (int i = 0; i < cpu.size(); ++i) {
    while (!stack.isEmpty() && (cpu[stack.back()].tid != cpu[i].tid ||
                                cpu[i].start + cpu[i].dur > cpu[stack.back()].start + cpu[stack.back()].dur))
      stack.pop_back();
    if (!stack.isEmpty()) {
      cpu[i].parent = stack.back();
      cpu[stack.back()].children.push_back(i);
    }
    stack.push_back(i);
  }
  // The iterations: ProfilerStep#N scopes, else the block's own scope, each holding one block; else
  // (an engine run that wrote neither) the busiest thread's top-level events, a block after another.
  QVector<int> containers;
  for (int i = 0; i < cpu.size(); ++i)
    if (cpu[i].cat == QLatin1String("user_annotation") && cpu[i].name.startsWith(QLatin1String("ProfilerStep#")))
      containers.push_back(i);
  if (containers.isEmpty())
    for (int i = 0; i < cpu.size(); ++i)
      if (cpu[i].name == QLatin1String("MULTIHEAD_ATTENTION_FULL") && cpu[i].cat == QLatin1String("user_annotation"))
        containers.push_back(i);
  auto isStepScope = [&](const Ev& e) {
    return e.cat == QLatin1String("user_annotation") && kStepNames.contains(e.name);
  };
  // A container's items: its children, other scopes (the whole block's) opened up.
  std::function<void(int, QVector<int>&)> open = [&](int i, QVector<int>& items) {
    for (int c : cpu[i].children) {
      if (cpu[c].cat == QLatin1String("user_annotation") && !isStepScope(cpu[c]))
        open(c, items);
      else
        items.push_back(c);
    }
  };
  QVector<QVector<int>> blocks;  // one item list per iteration
  for (int c : containers) {
    blocks.push_back({});
    open(c, blocks.back());
  }
  if (containers.isEmpty()) {
    QHash<qint64, int> perThread;
    for (const Ev& e : cpu) perThread[e.tid]++;
    qint64 busiest = 0;
    for (auto it = perThread.begin(); it != perThread.end(); ++it)
      if (it.value() > perThread.value(busiest)) busiest = it.key();
    QVector<int> top;
    for (int i = 0; i < cpu.size(); ++i)
      if (cpu[i].tid == busiest && cpu[i].parent < 0) top.push_back(i);
    // A new block after an AV MATMUL item (its scope, or the second matmul).
    int matmuls = 0;
    for (int i : top) {
      if (blocks.isEmpty()) blocks.push_back({});
      blocks.back().push_back(i);
      const bool av = cpu[i].name == QLatin1String("AV MATMUL") ||
                      (cpu[i].name == QLatin1String("aten::matmul") && ++matmuls % 2 == 0);
      if (cpu[i].name == QLatin1String("QK MATMUL")) ++matmuls;
      if (av) blocks.push_back({});
    }
    if (!blocks.isEmpty() && blocks.back().isEmpty()) blocks.pop_back();
  }
  QVector<OracleStep> steps(4);
  for (int k = 0; k < 4; ++k) steps[k].name = kStepNames[k];
  QVector<bool> wrappedEvery(4, true);
  // The outermost ops under an event (itself, if it is an op).
  std::function<void(int, QVector<int>&)> outermost = [&](int i, QVector<int>& out) {
    if (cpu[i].cat == QLatin1String("cpu_op")) {
      out.push_back(i);
      return;
    }
    for (int c : cpu[i].children) outermost(c, out);
  };
  for (const QVector<int>& items : blocks) {
    const qint64 tid = cpu[items.front()].tid;
    QVector<QVector<int>> byStep(4);
    QVector<int> scopeOf(4, -1);
    int phase = 0;
    for (int i : items) {
      const Ev& e = cpu[i];
      int k = -1;
      if (isStepScope(e)) {
        k = static_cast<int>(kStepNames.indexOf(e.name));
        scopeOf[k] = i;
      } else if (phase == 0) {
        k = 0;
      } else if (phase == 1 &&
                 (e.name == QLatin1String("aten::softmax") || e.name == QLatin1String("aten::_softmax"))) {
        k = 2;
      } else {
        k = phase == 1 ? 1 : 3;
      }
      byStep[k].push_back(i);
      if (k == 0 && (e.name == QLatin1String("aten::matmul") || isStepScope(e))) phase = 1;
      if (k == 1 && isStepScope(e)) phase = 1;
      if (k >= 2) phase = 3;
    }
    for (int k = 0; k < 4; ++k) {
      QVector<int> ops;
      for (int i : byStep[k]) outermost(i, ops);
      qint64 own = 0, lo = INT64_MAX, hi = INT64_MIN;
      for (int i : byStep[k]) {
        lo = std::min(lo, cpu[i].start);
        hi = std::max(hi, cpu[i].start + cpu[i].dur);
      }
      for (int i : ops) own += cpu[i].dur;
      if (steps[k].ops.isEmpty())
        for (int i : ops) steps[k].ops << cpu[i].name;
      // The work launched from the step's window on its thread, each correlation once.
      qint64 gpu = 0;
      QSet<qint64> seen;
      for (const Ev& r : runtime)
        if (r.tid == tid && r.start >= lo && r.start <= hi && !seen.contains(r.corr)) {
          seen.insert(r.corr);
          gpu += gpuByCorr.value(r.corr, 0);
        }
      steps[k].ownOps.push_back(own);
      steps[k].gpu.push_back(gpu);
      steps[k].scope.push_back(scopeOf[k] >= 0 ? cpu[scopeOf[k]].dur : -1);
      if (scopeOf[k] < 0) wrappedEvery[k] = false;
    }
  }
  for (int k = 0; k < 4; ++k) steps[k].wrapped = !blocks.isEmpty() && wrappedEvery[k];
  return steps;
}

}  // namespace oracle
