#include "core/write/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace attnscope {

namespace {
std::string dirOf(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}
bool writeAll(int fd, std::string_view data, int* err) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

bool writeSpecial(const std::string& path, std::string_view data, std::string* error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = path + ": cannot write (" + std::strerror(errno) + ")";
    return false;
  }
  int err = 0;
  const bool ok = writeAll(fd, data, &err);
  ::close(fd);
  if (!ok) *error = path + ": write failed (" + std::strerror(err) + ")";
  return ok;
}

}  // namespace

bool writeFileAtomic(const std::string& path, std::string_view data, std::string* error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      *error = path + ": is a directory";
      return false;
    }
    // A device, pipe or socket (/dev/stdout, /dev/full, a FIFO) cannot be
    // replaced by a rename: write to it directly.
    if (!S_ISREG(st.st_mode)) return writeSpecial(path, data, error);
  }
  std::random_device rd;
  const std::string tmp = dirOf(path) + "/." +
                          path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1) +
                          "." + std::to_string(rd()) + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = path + ": cannot write (" + std::strerror(errno) + ")";
    return false;
  }
  int werr = 0;
  if (!writeAll(fd, data, &werr)) {
    ::close(fd);
    ::unlink(tmp.c_str());
    *error = path + ": write failed (" + std::strerror(werr) + ")";
    return false;
  }
  if (::fsync(fd) != 0 && errno != EINVAL) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    *error = path + ": write failed (" + std::strerror(err) + ")";
    return false;
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    *error = path + ": write failed (" + std::strerror(err) + ")";
    return false;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    *error = path + ": cannot replace (" + std::strerror(err) + ")";
    return false;
  }
  return true;
}

}  // namespace attnscope
