// The diagnosis against traces whose causes are known by construction (tests/common/kineto_gen.h,
// kineto_gen_random.h):
// 600 Kineto-layout traces from a fixed seed, each mixing 2 to 5 causes at random shares (compute,
// launch-bound dispatch, host ops, untraced host work, pageable or pinned copies, small reads behind
// queued work, synchronizes, allocator calls inside empty_cache or ops or bare, the DataLoader with
// or without workers, collectives all-reduce or all-to-all, with DDP or not, late or not, a sync on a
// short kernel then long untraced host work, torch.cuda.graph() captures with their prologue's
// allocations, untraced host work at a step's start after a sync on nothing or at its end with or
// without a sync before it), with noise, set-up in the first step, a longer first step with no set-up,
// periodic work; one in ten CPU-only.
// The gates: the first cause right on 95% of the traces or more, its share within 0.05 of the
// construction's on 95% or more, no fix offered whose preconditions the generator did not put in the
// trace, no set-up where none was built, periodic work found where it was built and nowhere else.
// The figures and the misses are printed (qInfo) for the closing note.
#include <QtTest>

#include <map>

#include "core/explain/explanation.h"
#include "core/explain/fixes.h"
#include "core/read/trace_reader.h"
#include "core/snapshot/trace_snapshot.h"
#include "kineto_gen_random.h"

using namespace attnscope;

namespace {

constexpr uint64_t kSeed = 45'000;
constexpr int kCases = 600;

std::shared_ptr<const TraceSnapshot> snapshotOf(const std::string& json) {
  LoadResult lr = parseTrace(json, "generated");
  if (!lr.ok()) return nullptr;
  return buildSnapshot(std::make_shared<const EventStore>(std::move(*lr.store)));
}

}  // namespace

class DiagnosisGenTest : public QObject {
  Q_OBJECT

 private slots:
  void generatedTraces() {
    int firstRight = 0, shareRight = 0, falseFixes = 0, falseSetup = 0, periodicBuilt = 0, periodicFound = 0,
        periodicFalse = 0, fixesAllowed = 0, fixesOffered = 0;
    std::map<std::string, int> missByFirst;
    QStringList misses, falseFixList, periodicMisses, shareMisses;
    int fixesAllowedOffered = 0;
    double shareErrSum = 0, shareErrMax = 0;
    std::map<std::string, int> falseByCode;
    // ATTNSCOPE_GEN_SEED=N runs another sweep (by hand: CI keeps the fixed seed).
    const char* other = std::getenv("ATTNSCOPE_GEN_SEED");
    const uint64_t seed = other ? std::strtoull(other, nullptr, 10) : kSeed;
    for (int i = 0; i < kCases; ++i) {
      const auto [json, truth] = kgen::randomCase(seed + static_cast<uint64_t>(i));
      const auto snap = snapshotOf(json);
      QVERIFY2(snap, qPrintable(QString::fromStdString(truth.recipe)));
      const Diagnosis& d = snap->explanation->diagnosis;
      QVERIFY2(!d.causes.empty(), qPrintable(QString::fromStdString(truth.recipe)));
      // The split adds up and the wall time is the construction's.
      QCOMPARE(d.wallNs, truth.wallNs);
      const Cause want = truth.first();
      const DiagnosedCause& got = d.causes.front();
      if (got.code == want) {
        ++firstRight;
        const double err = std::abs(got.share - truth.share(want));
        shareErrSum += err;
        shareErrMax = std::max(shareErrMax, err);
        if (std::abs(got.share - truth.share(want)) <= 0.05)
          ++shareRight;
        else if (shareMisses.size() < 6)
          shareMisses << QStringLiteral("case %1 (%2): %3 built %4, got %5")
                             .arg(i)
                             .arg(QString::fromStdString(truth.recipe))
                             .arg(QString::fromStdString(std::string(causeCode(want))))
                             .arg(truth.share(want), 0, 'f', 3)
                             .arg(got.share, 0, 'f', 3);
      } else {
        missByFirst[std::string(causeCode(want)) + " -> " + std::string(causeCode(got.code))]++;
        if (misses.size() < 12)
          misses << QStringLiteral("case %1 (%2): built %3 %4, got %5 %6")
                        .arg(i)
                        .arg(QString::fromStdString(truth.recipe))
                        .arg(QString::fromStdString(std::string(causeCode(want))))
                        .arg(truth.share(want), 0, 'f', 2)
                        .arg(QString::fromStdString(std::string(causeCode(got.code))))
                        .arg(got.share, 0, 'f', 2);
      }
      for (const auto* list : {&d.causes, &d.minor})
        for (const DiagnosedCause& c : *list)
          for (const Fix& f : c.fixes) {
            ++fixesOffered;
            if (truth.allowed.count(f.code)) continue;
            ++falseFixes;
            falseByCode[f.code]++;
            if (falseFixList.size() < 12)
              falseFixList << QStringLiteral("case %1 (%2): %3 on %4 (%5)")
                                  .arg(i)
                                  .arg(QString::fromStdString(truth.recipe))
                                  .arg(QString::fromStdString(f.code))
                                  .arg(QString::fromStdString(std::string(causeCode(c.code))))
                                  .arg(QString::fromStdString(f.because));
          }
      // How often a fix whose conditions the trace holds is offered, when its cause is listed (a condition
      // on shares can fail where the generator's structural one holds: not a gate, a figure).
      for (const std::string& a : truth.allowed) {
        if (a == "host_ops") continue;
        Cause owner = Cause::Count;
        for (const FixRule& r : fixTable())
          if (r.code == a) owner = r.cause;
        bool listed = false, offered = false;
        for (const auto* list : {&d.causes, &d.minor})
          for (const DiagnosedCause& c : *list) {
            if (c.code != owner) continue;
            listed = true;
            for (const Fix& f : c.fixes) offered |= f.code == a;
          }
        fixesAllowed += listed;
        fixesAllowedOffered += listed && offered;
      }
      if (truth.ns[static_cast<int>(Cause::OneTimeSetup)] == 0)
        for (const StepWaits& st : d.steps) falseSetup += st.parts[static_cast<int>(Cause::OneTimeSetup)] > 0;
      const int found = d.periodic.empty() ? 0 : d.periodic.front().every;
      if (truth.periodicEvery) {
        ++periodicBuilt;
        periodicFound += found == truth.periodicEvery;
        if (found != truth.periodicEvery && periodicMisses.size() < 6) {
          QString spans;
          for (const StepWaits& st : d.steps) spans += QString::number(st.spanNs() / 1000) + " ";
          periodicMisses << QStringLiteral("case %1 (%2): found %3; step spans (us) %4")
                                .arg(i)
                                .arg(QString::fromStdString(truth.recipe))
                                .arg(found)
                                .arg(spans);
        }
      } else {
        periodicFalse += found != 0;
      }
    }
    qInfo("generated traces: %d (seed %llu)", kCases, static_cast<unsigned long long>(seed));

    qInfo("first cause right: %d of %d (%.1f%%); its share within 0.05: %d of those (%.1f%%)", firstRight, kCases,
          100.0 * firstRight / kCases, shareRight, 100.0 * shareRight / std::max(firstRight, 1));
    qInfo("share error of the first cause (where right): mean %.4f, max %.4f", shareErrSum / std::max(firstRight, 1),
          shareErrMax);
    qInfo("fixes offered: %d; without their preconditions in the trace: %d", fixesOffered, falseFixes);
    qInfo("fixes whose conditions the trace holds, on a listed cause: offered %d of %d", fixesAllowedOffered,
          fixesAllowed);
    qInfo("set-up claimed in a step of a trace built with none: %d", falseSetup);
    qInfo("periodic work: found %d of %d built; claimed where none was built: %d", periodicFound, periodicBuilt,
          periodicFalse);
    for (const auto& [k, n] : missByFirst) qInfo("  missed first cause %s: %d", k.c_str(), n);
    for (const QString& m : misses) qInfo("  %s", qPrintable(m));
    for (const QString& m : shareMisses) qInfo("  share off: %s", qPrintable(m));
    for (const auto& [k, n] : falseByCode) qInfo("  false fix %s: %d", k.c_str(), n);
    for (const QString& m : falseFixList) qInfo("  false fix: %s", qPrintable(m));
    for (const QString& m : periodicMisses) qInfo("  periodic missed: %s", qPrintable(m));

    QVERIFY2(firstRight * 100 >= kCases * 95, "the first cause is right on fewer than 95% of the generated traces");
    QVERIFY2(shareRight * 100 >= kCases * 95, "the first cause's share is off by more than 0.05 too often");
    QCOMPARE(falseFixes, 0);
    QCOMPARE(falseSetup, 0);
    QCOMPARE(periodicFalse, 0);
    QVERIFY2(periodicFound * 100 >= periodicBuilt * 95, "periodic work missed");
  }
};

QTEST_GUILESS_MAIN(DiagnosisGenTest)
#include "test_diagnosis_gen.moc"
