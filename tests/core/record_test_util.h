// What the `record` tests share: the scripts' folder, the raw trace (read with QJsonDocument, not
// with our reader), its ProfilerSteps and the events inside them, and `attnscope-cli record` run
// as a user runs it.
#pragma once

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStringList>
#include <QtTest>
#include <map>
#include <tuple>
#include <vector>

#include "cli_run.h"

namespace record_test {

const QString kScripts = QStringLiteral(ATTNSCOPE_SOURCE_DIR "/tests/data/scripts/");

struct Trace {
  QJsonObject root;
  QJsonArray events;
  QJsonObject record;  // attnscope_record
};

inline Trace readTrace(const QString& path) {
  QFile f(path);
  Trace t;
  if (!f.open(QIODevice::ReadOnly)) return t;
  QJsonParseError err;
  const QJsonDocument d = QJsonDocument::fromJson(f.readAll(), &err);
  if (err.error != QJsonParseError::NoError) qWarning() << path << err.errorString();
  t.root = d.object();
  t.events = t.root.value(QStringLiteral("traceEvents")).toArray();
  t.record = t.root.value(QStringLiteral("attnscope_record")).toObject();
  return t;
}

// ProfilerStep#N names, in the trace's order.
inline QStringList profilerSteps(const Trace& t) {
  QStringList out;
  for (const auto& v : t.events) {
    const QString n = v.toObject().value(QStringLiteral("name")).toString();
    if (n.startsWith(QStringLiteral("ProfilerStep#"))) out << n;
  }
  out.sort();
  return out;
}

// Complete events named `name` and, of them, those inside a ProfilerStep's window on their thread.
inline std::pair<int, int> countInSteps(const Trace& t, const QString& name) {
  std::vector<std::tuple<double, double, QString>> steps;
  for (const auto& v : t.events) {
    const QJsonObject o = v.toObject();
    if (o.value(QStringLiteral("name")).toString().startsWith(QStringLiteral("ProfilerStep#")))
      steps.emplace_back(o.value(QStringLiteral("ts")).toDouble(),
                         o.value(QStringLiteral("ts")).toDouble() + o.value(QStringLiteral("dur")).toDouble(),
                         o.value(QStringLiteral("tid")).toVariant().toString());
  }
  int all = 0, inside = 0;
  for (const auto& v : t.events) {
    const QJsonObject o = v.toObject();
    if (o.value(QStringLiteral("name")).toString() != name || o.value(QStringLiteral("ph")).toString() != "X") continue;
    ++all;
    const double a = o.value(QStringLiteral("ts")).toDouble();
    const double b = a + o.value(QStringLiteral("dur")).toDouble();
    const QString tid = o.value(QStringLiteral("tid")).toVariant().toString();
    for (const auto& [s, e, st] : steps)
      if (st == tid && a >= s && b <= e + 0.002) {
        ++inside;
        break;
      }
  }
  return {all, inside};
}

// key_averages rows (attnscope-cli table --format json) by name: their call counts.
inline std::map<QString, int> tableCalls(const QString& trace) {
  const Run r = cli({QStringLiteral("table"), trace, QStringLiteral("--format"), QStringLiteral("json")});
  std::map<QString, int> out;
  const QJsonDocument d = QJsonDocument::fromJson(r.out.toUtf8());
  const QJsonArray rows = d.isArray() ? d.array() : d.object().value(QStringLiteral("rows")).toArray();
  for (const auto& v : rows) {
    const QJsonObject o = v.toObject();
    out[o.value(QStringLiteral("name")).toString()] =
        o.value(QStringLiteral("count")).toInt(o.value(QStringLiteral("calls")).toInt());
  }
  return out;
}

inline Run record(const QStringList& options, const QStringList& command, int timeoutMs = 180000) {
  QStringList args{QStringLiteral("record")};
  args << options << QStringLiteral("--") << command;
  return cli(args, timeoutMs);
}

// Whether python3 imports torch here (record has something to record with).
inline bool pythonHasTorch() {
  QProcess p;
  p.start(QStringLiteral("python3"), {QStringLiteral("-c"), QStringLiteral("import torch")});
  return p.waitForFinished(120000) && p.exitCode() == 0;
}

}  // namespace record_test
