// Dropping a trace file on the window opens it; dropping a broken one keeps
// what was loaded and says why.
#include <QDropEvent>
#include <QLabel>
#include <QMimeData>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "ui/panels/compare_view.h"
#include "ui/shell/main_window.h"
#include "ui/table/key_averages_proxy.h"
#include "ui/table/table_pane.h"

using namespace attnscope::ui;

namespace {

bool drop(MainWindow& w, const QStringList& paths) {
  QMimeData mime;
  QList<QUrl> urls;
  for (const QString& p : paths) urls << QUrl::fromLocalFile(p);
  mime.setUrls(urls);
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(&w, &enter);
  if (!enter.isAccepted()) return false;
  QDropEvent dropEv(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(&w, &dropEv);
  return dropEv.isAccepted();
}

}  // namespace

class MainWindowDropTest : public QObject {
  Q_OBJECT
 private slots:
  // Settings (recent files, the layout) go to a folder of the test's own, never the user's.
  void initTestCase() {
    QVERIFY(settings_.isValid());
    qputenv("XDG_CONFIG_HOME", settings_.path().toUtf8());
    QCoreApplication::setOrganizationName(QStringLiteral("attnscope-test"));
  }

  void droppedTraceOpensAndBadDropKeepsIt() {
    MainWindow w;
    QSignalSpy shown(&w, &MainWindow::traceShown);
    const QString good = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/none_8x16x1024x64.json");
    QVERIFY(drop(w, {good}));
    QVERIFY(shown.wait(30000));
    QVERIFY(w.trace());
    const auto before = w.trace();
    QCOMPARE(w.tablePane()->proxy()->rowCount() > 0, true);
    // A broken trace dropped next: the load ends in an error naming the file, shown in the window,
    // and the loaded trace stays.
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    const QString broken = QStringLiteral(ATTNSCOPE_TEST_DATA "/malformed/not_json.json");
    QVERIFY(drop(w, {broken}));
    QVERIFY(failed.wait(30000));
    const QString message = failed.front().front().toString();
    QVERIFY2(message.contains(QStringLiteral("not_json.json")), qPrintable(message));
    auto* errorText = w.findChild<QLabel*>(QStringLiteral("errorText"));
    QVERIFY(errorText && errorText->isVisibleTo(&w));
    QVERIFY2(errorText->text().contains(QStringLiteral("not_json.json")), qPrintable(errorText->text()));
    QCOMPARE(w.trace(), before);
    QCOMPARE(shown.size(), 1);
  }

  // Two files dropped at once are compared, the first as A; three open as a job in the Ranks window
  // (test_ranks_ui drives it).
  void twoDroppedFilesAreCompared() {
    MainWindow w;
    const QString a = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/none_8x16x1024x64.json");
    const QString b = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json");
    QSignalSpy compared(w.compareView(), &CompareView::compared);
    QVERIFY(drop(w, {a, b}));
    QVERIFY(compared.wait(30000));
    QVERIFY(w.compareView()->comparison());
    QVERIFY(QString::fromStdString(w.compareView()->comparison()->pathA)
                .endsWith(QStringLiteral("none_8x16x1024x64.json")));
    QVERIFY(QString::fromStdString(w.compareView()->comparison()->pathB)
                .endsWith(QStringLiteral("softmax_8x16x1024x64.json")));
    QVERIFY(!w.ranksView());
    QVERIFY(drop(w, {a, b, a}));
    QVERIFY(w.ranksView());
  }

 private:
  QTemporaryDir settings_;
};

QTEST_MAIN(MainWindowDropTest)
#include "test_main_window_drop.moc"
