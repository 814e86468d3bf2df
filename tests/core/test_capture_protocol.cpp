// core/capture's pieces on their own, fast: the wire format against the bytes strace showed torch 2.11
// sending (docs/capture.md), the config's text and timing rules, Kineto's file naming, the roundup a
// measured step and ask window call for, the alignment check; then the session against a stand-in
// for Kineto's client (real datagram sockets in a folder of this test, as with KINETO_IPC_SOCKET_DIR):
// the first poll never answered with a config (it may be a retry built before the bind), a busy
// profiler waited for, and two processes asked in the order that puts the asks closest together.
// test_capture drives real torch processes; this one checks what they cannot show on demand.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <thread>

#include "core/capture/capture_align.h"
#include "core/capture/capture_session.h"
#include "core/capture/dynolog_endpoint.h"
#include "core/capture/kineto_config.h"
#include "core/capture/kineto_wire.h"
#include "core/write/atomic_file.h"

using namespace attnscope::capture;

namespace {

// A `req` from pid 9753 with 7 pids (itself and 6 ancestors), type 3, job 0, as strace printed it on
// torch 2.11 (the first 8 of 44 payload bytes shown there: "\3\0\0\0\7\0\0\0"; then jobid 0; pids).
std::string straceRequest() {
  std::string d("\x2c\0\0\0\0\0\0\0", 8);
  std::string type("req");
  type.resize(32, '\0');
  d += type;
  d += std::string("\x03\0\0\0\x07\0\0\0", 8) + std::string(8, '\0');
  for (int32_t pid : {9753, 9750, 9746, 9742, 5345, 5344, 1}) d.append(reinterpret_cast<const char*>(&pid), 4);
  return d;
}

// A stand-in for Kineto's IpcFabricConfigClient: its own socket in `dir`, polls to DIR/dynolog,
// the reply awaited 50 ms like Kineto's.
class FakeClient {
 public:
  FakeClient(const std::string& dir, int pid) : pid_(pid), dir_(dir) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string path = dir + "/dynoconfigclient-fake-" + std::to_string(pid);
    path.copy(a.sun_path, sizeof a.sun_path - 1);
    ::unlink(path.c_str());
    ::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    struct timeval tv {
      0, 50000
    };
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~FakeClient() { ::close(fd_); }
  // One poll; the config it got (empty: none), or nullopt when no reply came.
  std::optional<std::string> poll(int type) {
    KinetoPoll p;
    p.configType = type;
    p.pids = {pid_, static_cast<int32_t>(::getpid())};
    const std::string bytes = encodePoll(p);
    sockaddr_un to{};
    to.sun_family = AF_UNIX;
    (dir_ + "/dynolog").copy(to.sun_path, sizeof to.sun_path - 1);
    if (::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to) < 0)
      return std::nullopt;
    char buf[8192];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0) return std::nullopt;
    const auto m = decodeMessage(std::string_view(buf, static_cast<size_t>(n)));
    return m ? std::optional<std::string>(m->payload) : std::nullopt;
  }

 private:
  int fd_ = -1;
  int pid_;
  std::string dir_;
};

std::string configValue(const std::string& config, const std::string& key) {
  const size_t at = config.find(key + "=");
  if (at == std::string::npos) return {};
  const size_t from = at + key.size() + 1;
  return config.substr(from, config.find('\n', from) - from);
}

// Writes what Kineto would: the trace at ACTIVITIES_LOG_FILE with the pid before the extension.
void writeTraceFor(const std::string& config, int pid) {
  std::string why;
  attnscope::writeFileAtomic(
      kinetoTraceFile(configValue(config, "ACTIVITIES_LOG_FILE"), pid),
      "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"Optimizer.step#SGD.step\", \"pid\": 1, \"tid\": 1, "
      "\"ts\": 10, \"dur\": 5}]}",
      &why);
}

}  // namespace

class TestCaptureProtocol : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::vector<QProcess*> sleepers_;

  // A real process to stand for a target (alive, Python or not does not matter to the session).
  ProcessInfo target(const std::string& socketDir) {
    auto* p = new QProcess(this);
    p->start(QStringLiteral("sleep"), {QStringLiteral("120")});
    p->waitForStarted();
    sleepers_.push_back(p);
    ProcessInfo info = probeProcess(static_cast<int>(p->processId()));
    info.socketDir = socketDir;
    return info;
  }

 private slots:
  void cleanupTestCase() {
    for (QProcess* p : sleepers_) {
      p->kill();
      p->waitForFinished();
    }
  }

  void decodesWhatTorchSends() {
    const auto m = decodeMessage(straceRequest());
    QVERIFY(m);
    QCOMPARE(m->type, std::string("req"));
    QCOMPARE(m->payload.size(), size_t{44});
    const auto p = decodePoll(m->payload);
    QVERIFY(p);
    QCOMPARE(p->configType, 3);
    QVERIFY(p->activitiesFree());
    QCOMPARE(p->jobId, int64_t{0});
    QCOMPARE(p->pids.size(), size_t{7});
    QCOMPARE(p->pids.front(), 9753);
    QCOMPARE(encodePoll(*p), straceRequest());
    // Torn or lying datagrams are refused, never read past.
    std::string torn = straceRequest();
    torn.resize(50);
    QVERIFY(!decodeMessage(torn));
    std::string lying = m->payload;
    lying[4] = 100;  // n = 100 pids in a 44-byte payload
    QVERIFY(!decodePoll(lying));
    QVERIFY(!decodePoll(std::string(10, '\0')));
    // A reply: the header (size, "req") and the config text.
    const std::string r = encodeConfigReply("ACTIVITIES_ITERATIONS=3");
    QCOMPARE(r.size(), kWireHeaderBytes + 23);
    QCOMPARE(decodeMessage(r)->payload, std::string("ACTIVITIES_ITERATIONS=3"));
  }

  void configFollowsKinetosRules() {
    CaptureSpec s;
    s.iterations = 3;
    s.roundup = 20;
    QVERIFY(validateSpec(s).empty());
    const std::string c = kinetoConfig(s, "/tmp/x/trace.json", 0);
    QCOMPARE(configValue(c, "ACTIVITIES_LOG_FILE"), std::string("/tmp/x/trace.json"));
    QCOMPARE(configValue(c, "PROFILE_START_ITERATION"), std::string("0"));
    QCOMPARE(configValue(c, "PROFILE_START_ITERATION_ROUNDUP"), std::string("20"));
    QCOMPARE(configValue(c, "ACTIVITIES_ITERATIONS"), std::string("3"));
    QCOMPARE(configValue(c, "ACTIVITIES_DURATION_MSECS"), std::string("0"));  // never a capture by time
    QVERIFY(configValue(c, "PROFILE_START_TIME").empty());
    CaptureSpec t;
    t.durationMs = 500;
    t.warmupSec = 2;
    const int64_t send = 1'000'000;
    const int64_t start = earliestStartMs(t, send);
    QVERIFY(startTimeAcceptable(t, start, send));
    // Kineto refuses a start inside the warm-up plus its loop's tick: never sent.
    QVERIFY(!startTimeAcceptable(t, send + 2000, send));
    QCOMPARE(configValue(kinetoConfig(t, "/tmp/x/t.json", start), "PROFILE_START_TIME"), std::to_string(start));
    QCOMPARE(configValue(kinetoConfig(t, "/tmp/x/t.json", start), "ACTIVITIES_WARMUP_PERIOD_SECS"), std::string("2"));
    QVERIFY(!validateSpec(CaptureSpec{}).empty());  // neither steps nor time
    CaptureSpec both = s;
    both.durationMs = 10;
    QVERIFY(!validateSpec(both).empty());
    // The file Kineto writes (seen on torch 2.11: out.json -> out_10334.json).
    QCOMPARE(kinetoTraceFile("/tmp/cap/out.json", 10334), std::string("/tmp/cap/out_10334.json"));
    QCOMPARE(kinetoTraceFile("/tmp/c.d/out", 7), std::string("/tmp/c.d/out_7"));
  }

  void roundupAndAlignment() {
    // K x step >= 100 x W: 65 ms apart, 61 ms steps -> 106.6 -> 200; 5 s apart, 1 s steps -> 500.
    QCOMPARE(roundupFor(65, 61'000'000), 200);
    QCOMPARE(roundupFor(5000, 1'000'000'000), 500);
    QCOMPARE(roundupFor(10, 2'000'000'000), 1);  // the 20 ms floor over a 2 s step
    StepTiming a, b;
    a.ends = {1000, 2000, 3000};
    b.ends = {1200, 2200, 3200};
    b.baseNs = 0;
    Alignment al = alignmentOf({a, b}, {0, 1});
    QVERIFY(al.known && al.aligned);
    QCOMPARE(al.stepNs, int64_t{1000});
    b.ends = {2000, 3000, 4000};  // a step later
    al = alignmentOf({a, b}, {0, 1});
    QVERIFY(al.known && !al.aligned);
    QCOMPARE(al.lastRank, 1);
    QVERIFY(!alignmentOf({a}, {0}).known);
  }

  void firstPollIsNeverAnsweredWithAConfig() {
    const std::string dir = dir_.filePath(QStringLiteral("one")).toStdString();
    QVERIFY(QDir().mkpath(QString::fromStdString(dir)));
    const ProcessInfo t = target(dir);
    CaptureOptions o;
    o.spec.iterations = 3;
    o.workDir = dir;
    o.timeoutSec = 20;
    std::vector<std::string> got;
    std::thread client([&] {
      FakeClient c(dir, t.pid);
      QThread::msleep(300);  // the session binds first
      for (int i = 0; i < 4; ++i) {
        const auto r = c.poll(3);
        got.push_back(r ? *r : std::string("(no reply)"));
        if (r && !r->empty()) writeTraceFor(*r, t.pid);
        QThread::msleep(300);
      }
    });
    const CaptureOutcome out = runCapture({t}, o);
    client.join();
    QCOMPARE(out.written(), 1);
    QVERIFY(got.size() >= 2);
    QCOMPARE(got[0], std::string());  // the first poll: nothing
    QVERIFY(got[1].find("ACTIVITIES_ITERATIONS=3") != std::string::npos);
  }

  void waitsForABusyProfiler() {
    const std::string dir = dir_.filePath(QStringLiteral("busy")).toStdString();
    QVERIFY(QDir().mkpath(QString::fromStdString(dir)));
    const ProcessInfo t = target(dir);
    CaptureOptions o;
    o.spec.iterations = 2;
    o.workDir = dir;
    o.timeoutSec = 20;
    std::vector<std::string> messages;
    o.onProgress = [&](const CaptureProgress& p) { messages.push_back(p.message); };
    std::vector<std::string> got;
    std::thread client([&] {
      FakeClient c(dir, t.pid);
      QThread::msleep(300);
      // Free (a stale retry), busy, busy, then free: asked only then.
      for (int type : {3, 1, 1, 3, 3}) {
        const auto r = c.poll(type);
        got.push_back(r ? *r : std::string("(no reply)"));
        if (r && !r->empty()) writeTraceFor(*r, t.pid);
        QThread::msleep(300);
      }
    });
    const CaptureOutcome out = runCapture({t}, o);
    client.join();
    QCOMPARE(out.written(), 1);
    QCOMPARE(got[0] + got[1] + got[2], std::string());
    QVERIFY(got[3].find("ACTIVITIES_ITERATIONS=2") != std::string::npos);
    QVERIFY(std::any_of(messages.begin(), messages.end(),
                        [](const std::string& m) { return m.find("another profiler") != std::string::npos; }));
    QVERIFY(!out.notes.empty());  // said in the result too
  }

  // Two processes polling every second, 900 ms apart: asked from the second one's poll, so the asks
  // are 100 ms apart, not 900.
  void asksSeveralClosestTogether() {
    const std::string dir = dir_.filePath(QStringLiteral("two")).toStdString();
    QVERIFY(QDir().mkpath(QString::fromStdString(dir)));
    const ProcessInfo a = target(dir), b = target(dir);
    CaptureOptions o;
    o.spec.iterations = 1;
    o.spec.roundup = 10;
    o.workDir = dir;
    o.timeoutSec = 30;
    std::atomic<qint64> askedA{0}, askedB{0};
    QElapsedTimer clock;
    clock.start();
    auto run = [&](int pid, int offsetMs, std::atomic<qint64>* asked) {
      FakeClient c(dir, pid);
      QThread::msleep(static_cast<unsigned long>(300 + offsetMs));
      for (int i = 0; i < 8 && !*asked; ++i) {
        const qint64 at = clock.elapsed();
        const auto r = c.poll(3);
        if (r && !r->empty()) {
          *asked = at;
          writeTraceFor(*r, pid);
        }
        QThread::msleep(static_cast<unsigned long>(std::max<qint64>(0, 1000 - (clock.elapsed() - at))));
      }
    };
    std::thread ta(run, a.pid, 0, &askedA), tb(run, b.pid, 900, &askedB);
    const CaptureOutcome out = runCapture({a, b}, o);
    ta.join();
    tb.join();
    QCOMPARE(out.written(), 2);
    QVERIFY(askedA > 0 && askedB > 0);
    QVERIFY2(askedA > askedB, "the later-phased process is asked first");
    QVERIFY2(askedA - askedB < 250, qPrintable(QString::number(askedA - askedB)));
    QVERIFY2(out.askWindowMs >= 0 && out.askWindowMs < 250, qPrintable(QString::number(out.askWindowMs)));
  }

  void aHeldEndpointWithoutADaemonIsSaid() {
    const std::string dir = dir_.filePath(QStringLiteral("held")).toStdString();
    QVERIFY(QDir().mkpath(QString::fromStdString(dir)));
    DynologEndpoint other;
    std::string why;
    QCOMPARE(other.bind(dir, &why), DynologEndpoint::Bind::Bound);
    QVERIFY(endpointHeld(dir));
    CaptureOptions o;
    o.spec.iterations = 1;
    o.workDir = dir;
    o.daemonPort = 1;  // nothing listens there
    const CaptureOutcome out = runCapture({target(dir)}, o);
    QVERIFY2(out.failure.find("served by another process") != std::string::npos &&
                 out.failure.find("no dynolog daemon answers") != std::string::npos,
             out.failure.c_str());
  }
};

QTEST_GUILESS_MAIN(TestCaptureProtocol)
#include "test_capture_protocol.moc"
