#include "quit_on_signal.h"

#include <QCoreApplication>
#include <QSocketNotifier>

#include <sys/socket.h>
#include <unistd.h>

#include <csignal>

namespace attnscope::gui {

namespace {

int pipeEnds[2] = {-1, -1};

// Async-signal-safe: one byte down the socket; the event loop reads it and quits.
void onSignal(int) {
  const char b = 1;
  [[maybe_unused]] const ssize_t n = ::write(pipeEnds[0], &b, 1);
}

}  // namespace

void quitOnSignals(QObject* parent) {
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, pipeEnds) != 0) return;
  auto* notifier = new QSocketNotifier(pipeEnds[1], QSocketNotifier::Read, parent);
  QObject::connect(notifier, &QSocketNotifier::activated, parent, [notifier] {
    notifier->setEnabled(false);
    char b = 0;
    [[maybe_unused]] const ssize_t n = ::read(pipeEnds[1], &b, 1);
    QCoreApplication::quit();
  });
  struct sigaction sa = {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int s : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(s, &sa, nullptr);
}

}  // namespace attnscope::gui
