// Runs the built attnscope-cli as a user would, for the CLI tests.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <QProcess>
#include <QString>
#include <QStringList>
#include <string>
#include <vector>

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

extern char** environ;

// Runs attnscope-cli (output discarded) and returns its exit code (-1 when it
// could not run, -2 when it crashed) and its peak resident memory in KiB.
inline int cliPeakRss(const QStringList& args, long* peakKb) {
  std::vector<std::string> argv{ATTNSCOPE_BIN_DIR "/attnscope-cli"};
  for (const QString& a : args) argv.push_back(a.toStdString());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  struct rusage ru {};
  if (wait4(pid, &status, 0, &ru) != pid) return -1;
  *peakKb = ru.ru_maxrss;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}
