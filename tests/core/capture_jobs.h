// Real torch jobs for the capture tests (tests/data/capture/*.py): started as a user starts them,
// with their own step logs (index, start and end on the wall clock) as the truth a captured trace is
// compared with, read here with QJsonDocument (not with attnscope's reader).
#pragma once

#include <signal.h>
#include <sys/prctl.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTest>
#include <QThread>
#include <map>
#include <vector>

namespace capture_test {

inline const QString kScripts = QStringLiteral(ATTNSCOPE_TEST_DATA "/capture/");

struct Step {
  int index = 0;
  qint64 start = 0, end = 0;  // Unix ns
};

inline std::vector<Step> readSteps(const QString& path) {
  std::vector<Step> out;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return out;
  for (const QByteArray& line : f.readAll().split('\n')) {
    const QList<QByteArray> w = line.split(' ');
    if (w.size() < 3) continue;
    out.push_back({w[0].toInt(), w[1].toLongLong(), w[2].toLongLong()});
  }
  return out;
}

// A Python job. `env` adds variables (KINETO_USE_DAEMON=1, KINETO_IPC_SOCKET_DIR=...).
class Job {
 public:
  Job(const QString& program, const QStringList& args, const std::map<QString, QString>& env) {
    auto e = QProcessEnvironment::systemEnvironment();
    e.remove(QStringLiteral("KINETO_USE_DAEMON"));
    for (const auto& [k, v] : env) e.insert(k, v);
    p_.setProcessEnvironment(e);
    p_.setProcessChannelMode(QProcess::MergedChannels);
    // A test that dies leaves no job behind (torchrun passes SIGTERM on to its ranks).
    p_.setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGTERM); });
    p_.start(program, args);
  }
  ~Job() { stop(); }
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  qint64 pid() const { return p_.processId(); }
  // What it printed so far (stdout and stderr), for a failure's message.
  QString output() {
    p_.waitForReadyRead(0);
    out_ += QString::fromUtf8(p_.readAll());
    return out_;
  }
  // Alive and not a zombie (QProcess's own state needs the event loop to notice an exit).
  bool running() const {
    QFile f(QStringLiteral("/proc/%1/stat").arg(p_.processId()));
    if (p_.processId() <= 0 || !f.open(QIODevice::ReadOnly)) return false;
    const QByteArray s = f.readAll();
    const qsizetype close = s.lastIndexOf(')');
    return close > 0 && close + 2 < s.size() && s[close + 2] != 'Z' && s[close + 2] != 'X';
  }
  QProcess& process() { return p_; }
  void stop() {
    if (p_.state() == QProcess::NotRunning) return;
    ::kill(static_cast<pid_t>(p_.processId()), SIGTERM);
    if (!p_.waitForFinished(15000)) {
      p_.kill();
      p_.waitForFinished(5000);
    }
  }

 private:
  QProcess p_;
  QString out_;
};

// Waits until `log` holds at least `n` steps (the job imported torch and steps), up to `ms`.
inline bool waitForSteps(const QString& log, size_t n, int ms = 240000) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < ms) {
    if (readSteps(log).size() >= n) return true;
    QThread::msleep(200);
  }
  return false;
}

struct TraceFile {
  QJsonObject root;
  QJsonArray events;
  qint64 base = 0;  // baseTimeNanoseconds
};

inline TraceFile readTraceFile(const QString& path) {
  TraceFile t;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return t;
  t.root = QJsonDocument::fromJson(f.readAll()).object();
  t.events = t.root.value(QStringLiteral("traceEvents")).toArray();
  t.base = t.root.value(QStringLiteral("baseTimeNanoseconds")).toVariant().toLongLong();
  return t;
}

// Complete events named `name` (or starting with it when `prefix`), as Unix ns [start, end).
inline std::vector<std::pair<qint64, qint64>> spans(const TraceFile& t, const QString& name, bool prefix = false) {
  std::vector<std::pair<qint64, qint64>> out;
  for (const auto& v : t.events) {
    const QJsonObject o = v.toObject();
    const QString n = o.value(QStringLiteral("name")).toString();
    if (o.value(QStringLiteral("ph")).toString() != QStringLiteral("X") || (prefix ? !n.startsWith(name) : n != name))
      continue;
    const qint64 a = t.base + static_cast<qint64>(o.value(QStringLiteral("ts")).toDouble() * 1000.0);
    out.emplace_back(a, a + static_cast<qint64>(o.value(QStringLiteral("dur")).toDouble() * 1000.0));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The logged step each span lies in (-1 when none holds it), with 1 ms of slack for rounding.
inline std::vector<int> stepsHolding(const std::vector<std::pair<qint64, qint64>>& sp, const std::vector<Step>& steps) {
  std::vector<int> out;
  for (const auto& [a, b] : sp) {
    int found = -1;
    for (const Step& s : steps)
      if (a >= s.start - 1000000 && b <= s.end + 1000000) found = s.index;
    out.push_back(found);
  }
  return out;
}

}  // namespace capture_test
