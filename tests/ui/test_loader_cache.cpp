// Issue 44 in the window: a trace opened once is opened again from its columnar cache (the store's
// columns are then views of the cache's files, no JSON read), and the window shows the same table,
// explanation and timeline; the load's progress names the cache's stages.
#include <QTemporaryDir>
#include <QtTest>

#include "app_harness.h"
#include "cache_compare.h"
#include "core/cache/trace_cache.h"
#include "ui/shell/load_progress_bar.h"
#include "ui/timeline/index.h"

using namespace apptest;

namespace {

QStringList tableTexts(QTableView* view) {
  QStringList out;
  const QAbstractItemModel* m = view->model();
  for (int r = 0; r < m->rowCount(); ++r)
    for (int c = 0; c < m->columnCount(); ++c) out << m->index(r, c).data().toString();
  return out;
}

}  // namespace

class LoaderCacheTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void initTestCase() {
    initSuite();
    if (!cache::available()) QSKIP(cache::kNoCache);
    QVERIFY(tmp_.isValid());
    qputenv("ATTNSCOPE_CACHE_DIR", tmp_.filePath(QStringLiteral("user-cache")).toUtf8());
    qunsetenv("ATTNSCOPE_CACHE");
  }

  void reopenedFromTheCacheShowsTheSame() {
    const QString file = tmp_.filePath(QStringLiteral("train.json.gz"));
    QVERIFY(QFile::copy(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/h200/transformer_train20.json.gz"), file));
    App app;
    QVERIFY(app.open(file));
    const auto first = app.w.trace();
    QVERIFY(first->store().columns().start.owned());  // read from the JSON
    QVERIFY(QFile::exists(file + QStringLiteral(".attnscope/trace/manifest.arrow")));
    const QStringList table = tableTexts(app.w.tablePane()->view());
    const QString explain = app.w.explainPanel()->plainText();
    QVERIFY(table.size() > 100 && !explain.isEmpty());

    QVERIFY(app.openSample());  // something else in between
    QVERIFY(app.open(file));
    const auto second = app.w.trace();
    QVERIFY(second != first);
    QVERIFY(!second->store().columns().start.owned());  // mapped from the cache
    QCOMPARE(tableTexts(app.w.tablePane()->view()), table);
    QCOMPARE(app.w.explainPanel()->plainText(), explain);
    QCOMPARE(second->timeline->tracks().size(), first->timeline->tracks().size());
    for (size_t t = 0; t < first->timeline->tracks().size(); ++t)
      QCOMPARE(second->timeline->tracks()[t].eventCount, first->timeline->tracks()[t].eventCount);
    const std::string d = testutil::compareSnapshots(*second->snapshot, *first->snapshot);
    QVERIFY2(d.empty(), d.c_str());
  }

  void progressNamesTheCacheStages() {
    LoadProgressBar bar;
    bar.show();
    auto progress = std::make_shared<LoadProgress>();
    progress->stage = kStageWritingCache;
    bar.start(QStringLiteral("/data/big.json"), progress);
    QTRY_VERIFY2(bar.text().contains(QStringLiteral("Saving it for quick reopening")), qPrintable(bar.text()));
    progress->stage = kStageReadingCache;
    QTRY_VERIFY2(bar.text().contains(QStringLiteral("Opening its saved copy")), qPrintable(bar.text()));
    QVERIFY2(bar.text().startsWith(QStringLiteral("big.json")), qPrintable(bar.text()));
  }
};

QTEST_MAIN(LoaderCacheTest)
#include "test_loader_cache.moc"
