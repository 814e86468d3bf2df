// The `dynolog` datagram endpoint, served by attnscope itself while it captures (when no dynolog
// daemon holds it): Kineto's clients send their polls to it and take its replies. The name is
// abstract ("\0dynolog\0", 11 bytes of address: both NULs count) unless the process sets
// KINETO_IPC_SOCKET_DIR, where it is the file DIR/dynolog. A reply must come from this endpoint:
// Kineto ends a process that gets a message from an address of the other kind.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <string>
#include <string_view>
#include <vector>

namespace attnscope::capture {

struct Datagram {
  std::string bytes;
  sockaddr_un from{};  // the sender, to reply to
  socklen_t fromLength = 0;
  std::string fromName() const;  // "dynoconfigclient<uuid>" (abstract) or the file's path
};

class DynologEndpoint {
 public:
  enum class Bind { Bound, Held, Failed };

  DynologEndpoint() = default;
  DynologEndpoint(const DynologEndpoint&) = delete;
  DynologEndpoint& operator=(const DynologEndpoint&) = delete;
  ~DynologEndpoint();

  // socketDir empty: the abstract name; else DIR/dynolog. Held: another process serves it (a dynolog
  // daemon, another capture); a stale socket file (nobody bound) is replaced. `error` says why.
  Bind bind(const std::string& socketDir, std::string* error, const std::string& name = "dynolog");
  int fd() const { return fd_; }
  const std::string& socketDir() const { return dir_; }

  // One waiting datagram, without blocking; false when none.
  bool receive(Datagram* out);
  // To a sender, without blocking for long (a client that left is not an error); false when not sent.
  bool reply(const Datagram& to, std::string_view bytes);

 private:
  int fd_ = -1;
  std::string dir_;
  std::string path_;  // the socket file we made, removed on close
};

// Whether some process is bound to the endpoint now (the abstract name, or DIR/dynolog).
bool endpointHeld(const std::string& socketDir, const std::string& name = "dynolog");

// Waits up to timeoutMs for a datagram on any endpoint: its index, or -1.
int waitReadable(const std::vector<DynologEndpoint*>& endpoints, int timeoutMs);

}  // namespace attnscope::capture
