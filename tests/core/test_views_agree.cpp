// One definition of device activity (core/store/device_activity.h) in every view: on every shared
// trace (../shared/traces/ext, the H200 attention captures in tests/data/h200 and the shared
// transformer_train20 capture), the union of what the Kernels view lists is the device-busy time of
// the whole trace, each Overview step's device parts (communication, kernels, copies, memsets) add up
// to the device-busy time inside that step, and each diagnosis step's device_busy_ns is the
// device-busy time inside its window. The device-busy time of each step of the diagnosis is also
// checked against tests/reference/diagnosis_reference.py's raw-event union (test_diagnosis). MTIA's
// trace, whose device work the views once did not count, has kernels in all three.
#include <QDir>
#include <QtTest>

#include "core/explain/explanation.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/store/intervals.h"
#include "core/views/views.h"
#include "ext_traces.h"

using namespace attnscope;

namespace {

QStringList traces() {
  QStringList out;
  for (const QString& f :
       QDir(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext")).entryList({"*.json", "*.json.gz"}, QDir::Files, QDir::Name))
    if (!f.startsWith(QStringLiteral("NEG_"))) out << testutil::extTracePath(f);
  for (const QString& f :
       QDir(QStringLiteral(ATTNSCOPE_TEST_DATA "/h200")).entryList({"*.json"}, QDir::Files, QDir::Name))
    out << QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/") + f;
  out << QStringLiteral(ATTNSCOPE_SHARED_TRACES "/h200/transformer_train20.json.gz");
  return out;
}

}  // namespace

class ViewsAgreeTest : public QObject {
  Q_OBJECT

 private slots:
  void deviceBusyIsTheSameEverywhere_data() {
    QTest::addColumn<QString>("path");
    const QStringList all = traces();
    QVERIFY(all.size() >= 25);
    for (const QString& p : all) QTest::newRow(qPrintable(QFileInfo(p).fileName())) << p;
  }

  void deviceBusyIsTheSameEverywhere() {
    QFETCH(QString, path);
    QVERIFY2(QFile::exists(path), qPrintable(path + " is missing"));
    const auto snap = testutil::snapshotAt(path);
    QVERIFY(snap);
    const ActivityIndex& index = snap->index;
    // Kernels: the union of every row's events.
    const KernelView k = kernelView(*snap, KernelGrouping::Name, false);
    Intervals listed;
    for (const KernelRow& r : k.rows) {
      if (r.family == Family::CudaSync) continue;
      for (EventId id : r.events) listed.emplace_back(snap->store->event(id).start, snap->store->event(id).end());
    }
    int64_t kernelsBusy = 0;
    for (const auto& [a, b] : merged(std::move(listed))) kernelsBusy += b - a;
    QCOMPARE(kernelsBusy, index.deviceBusyTotal());
    // Overview: each step's device parts.
    const OverviewView o = overviewView(*snap);
    for (const OverviewStep& st : o.steps) {
      int64_t device = 0;
      for (OverviewPart p :
           {OverviewPart::Communication, OverviewPart::Kernel, OverviewPart::Memcpy, OverviewPart::Memset})
        device += st.parts[static_cast<int>(p)];
      QVERIFY2(device == index.deviceBusyWithin(st.startNs, st.endNs),
               qPrintable(QStringLiteral("%1: overview %2 vs %3")
                              .arg(QString::fromStdString(st.name))
                              .arg(device)
                              .arg(index.deviceBusyWithin(st.startNs, st.endNs))));
    }
    // The diagnosis: each step's device busy time.
    for (const StepWaits& st : snap->explanation->diagnosis.steps)
      QVERIFY2(st.deviceBusyNs == index.deviceBusyWithin(st.startNs, st.endNs),
               qPrintable(QStringLiteral("%1: diagnosis %2 vs %3")
                              .arg(QString::fromStdString(st.name))
                              .arg(st.deviceBusyNs)
                              .arg(index.deviceBusyWithin(st.startNs, st.endNs))));
    if (path.contains(QStringLiteral("mtia"))) {
      QVERIFY(index.deviceBusyTotal() > 0);
      QVERIFY(!k.rows.empty());
      int64_t kernelPart = 0;
      for (const OverviewStep& st : o.steps) kernelPart += st.parts[static_cast<int>(OverviewPart::Kernel)];
      QVERIFY(kernelPart > 0);
    }
  }
};

QTEST_GUILESS_MAIN(ViewsAgreeTest)
#include "test_views_agree.moc"
