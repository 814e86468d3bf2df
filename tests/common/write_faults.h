// Ways a write can fail, for the tests of every writer (exports, saved
// runs, -o/--out files): a directory that cannot hold files even for root,
// a device whose every write fails with ENOSPC, and a disk that fills up in
// the middle of a regular file (RLIMIT_FSIZE: writes past the limit fail).
#pragma once

#include <signal.h>
#include <sys/resource.h>

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QString>
#include <QStringList>

namespace writefaults {

// sysfs refuses new files whoever asks (root included: EACCES, or EROFS
// where it is mounted read-only); a directory that does not exist.
inline const QString kUnwritableDir = QStringLiteral("/sys");
inline const QString kMissingDir = QStringLiteral("/nonexistent-attnscope-dir");
inline const QString kFullDevice = QStringLiteral("/dev/full");

// While alive, this process cannot grow a regular file past `bytes` (writes
// beyond fail with EFBIG, as a full disk fails them with ENOSPC). Pipes,
// terminals and devices are not limited, so the test's own output goes on.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &old_);
    oldHandler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit lim = old_;
    lim.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &lim);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &old_);
    signal(SIGXFSZ, oldHandler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

  // For a child process (QProcess::setChildProcessModifier): the same limit.
  static void applyInChild(rlim_t bytes) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim;
    getrlimit(RLIMIT_FSIZE, &lim);
    lim.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &lim);
  }

 private:
  rlimit old_{};
  void (*oldHandler_)(int) = nullptr;
};

// The entries of `dir` (hidden ones too): a failed write must add none.
inline QStringList entries(const QString& dir) {
  return QDir(dir).entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::Hidden, QDir::Name);
}

inline QByteArray contents(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace writefaults
