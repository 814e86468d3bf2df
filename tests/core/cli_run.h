// Runs the built attnscope-cli as a user would, for the CLI tests.
#pragma once

#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

struct Run {
  int code = -1;
  QString out;
  QString err;
};

inline Run cli(const QStringList& args, int timeoutMs = 30000) {
  QProcess p;
  p.start(QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli"), args);
  Run r;
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished();
    r.err = "timed out";
    return r;
  }
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

// Runs attnscope-cli and returns its exit code, with its own peak resident
// memory in KiB (the CLI reports it; -1 when it did not).
inline int cliPeakRss(const QStringList& args, long* peakKb, int timeoutMs = 600000) {
  QProcess p;
  auto env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("ATTNSCOPE_REPORT_PEAK_MEMORY"), QStringLiteral("1"));
  p.setProcessEnvironment(env);
  p.start(QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli"), args);
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished();
    return -1;
  }
  const QString err = QString::fromUtf8(p.readAllStandardError());
  const qsizetype at = err.lastIndexOf(QStringLiteral("peak_rss_kb="));
  *peakKb = at < 0 ? -1 : err.mid(at + 12).trimmed().toLong();
  return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
}
