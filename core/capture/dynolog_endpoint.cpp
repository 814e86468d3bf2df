#include "core/capture/dynolog_endpoint.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace attnscope::capture {

namespace {

// Kineto's addressing: abstract = NUL, name, NUL (the trailing NUL is part of the name); a path = the
// file name with its NUL.
bool addressOf(const std::string& dir, const std::string& name, sockaddr_un* a, socklen_t* len) {
  *a = sockaddr_un{};
  a->sun_family = AF_UNIX;
  const size_t base = offsetof(sockaddr_un, sun_path);
  if (dir.empty()) {
    if (name.size() + 2 > sizeof a->sun_path) return false;
    name.copy(a->sun_path + 1, sizeof a->sun_path - 2);
    *len = static_cast<socklen_t>(base + name.size() + 2);
  } else {
    const std::string path = dir + "/" + name;
    if (path.size() + 1 > sizeof a->sun_path) return false;
    path.copy(a->sun_path, sizeof a->sun_path - 1);
    *len = static_cast<socklen_t>(base + path.size() + 1);
  }
  return true;
}

std::string errnoText(int e) { return std::strerror(e); }

}  // namespace

std::string Datagram::fromName() const {
  const size_t base = offsetof(sockaddr_un, sun_path);
  if (fromLength <= base) return {};
  size_t n = fromLength - base;
  const char* p = from.sun_path;
  if (p[0] == '\0') {
    ++p;
    --n;
  }
  std::string s(p, n);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

DynologEndpoint::~DynologEndpoint() {
  if (fd_ >= 0) ::close(fd_);
  if (!path_.empty()) ::unlink(path_.c_str());
}

DynologEndpoint::Bind DynologEndpoint::bind(const std::string& socketDir, std::string* error, const std::string& name) {
  sockaddr_un a{};
  socklen_t len = 0;
  if (!addressOf(socketDir, name, &a, &len)) {
    *error = "the socket path " + socketDir + "/" + name + " is too long for a UNIX socket";
    return Bind::Failed;
  }
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = "cannot make a UNIX datagram socket: " + errnoText(errno);
    return Bind::Failed;
  }
  if (!socketDir.empty()) {
    // A socket file nobody is bound to (a daemon that died) is replaced, as dynolog does.
    if (endpointHeld(socketDir, name)) {
      ::close(fd);
      *error = socketDir + "/" + name + " is served by another process";
      return Bind::Held;
    }
    ::unlink(a.sun_path);
  }
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), len) != 0) {
    const int e = errno;
    ::close(fd);
    if (e == EADDRINUSE) {
      *error = (socketDir.empty() ? "the abstract socket @" + name : socketDir + "/" + name) +
               " is served by another process";
      return Bind::Held;
    }
    *error = "cannot bind the " + name + " socket: " + errnoText(e);
    return Bind::Failed;
  }
  if (!socketDir.empty()) {
    path_ = a.sun_path;
    ::chmod(path_.c_str(), 0666);  // as dynolog's: a job of another user may poll it
  }
  fd_ = fd;
  dir_ = socketDir;
  return Bind::Bound;
}

bool DynologEndpoint::receive(Datagram* out) {
  if (fd_ < 0) return false;
  char buf[65536];
  out->fromLength = sizeof out->from;
  const ssize_t n =
      ::recvfrom(fd_, buf, sizeof buf, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&out->from), &out->fromLength);
  if (n < 0) return false;
  out->bytes.assign(buf, static_cast<size_t>(n));
  return true;
}

bool DynologEndpoint::reply(const Datagram& to, std::string_view bytes) {
  if (fd_ < 0 || to.fromLength <= offsetof(sockaddr_un, sun_path)) return false;
  // The client waits ~50 ms for it: a full queue is retried for at most ~20 ms.
  for (int attempt = 0; attempt < 5; ++attempt) {
    const ssize_t n = ::sendto(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                               reinterpret_cast<const sockaddr*>(&to.from), to.fromLength);
    if (n >= 0) return true;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return false;  // the client left: nothing to do
    ::usleep(4000);
  }
  return false;
}

bool endpointHeld(const std::string& socketDir, const std::string& name) {
  sockaddr_un a{};
  socklen_t len = 0;
  if (!addressOf(socketDir, name, &a, &len)) return false;
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  // A datagram connect sends nothing: it succeeds only when a socket is bound to the address.
  const bool held = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), len) == 0;
  ::close(fd);
  return held;
}

int waitReadable(const std::vector<DynologEndpoint*>& endpoints, int timeoutMs) {
  std::vector<pollfd> fds;
  for (const DynologEndpoint* e : endpoints) fds.push_back({e->fd(), POLLIN, 0});
  const int n = ::poll(fds.data(), fds.size(), timeoutMs);
  if (n <= 0) return -1;
  for (size_t i = 0; i < fds.size(); ++i)
    if (fds[i].revents & POLLIN) return static_cast<int>(i);
  return -1;
}

}  // namespace attnscope::capture
