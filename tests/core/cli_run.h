// Runs the built attnscope-cli as a user would, for the CLI tests.
#pragma once

#include <QProcess>
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
