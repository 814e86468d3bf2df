// What the viewer suites on real captures share (test_models, test_engine_runner): the
// captures they read, loading one into a store, and opening one in a main window.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>
#if __has_include(<QtCharts/QChartView>)
#include <QToolTip>
#include <QtCharts/QBoxPlotSeries>
#include <QtCharts/QBoxSet>
#include <QtCharts/QChartView>
#endif

#include "core/read/trace_reader.h"
#include "core/run/engine_run.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/tables/key_averages.h"
#include "ui/common/export.h"
#include "ui/panels/compare_view.h"
#include "ui/panels/explain_panel.h"
#include "ui/panels/glossary_dock.h"
#include "ui/panels/plots_panel.h"
#include "ui/panels/why_panel.h"
#include "ui/run/engine_runner.h"
#include "ui/run/run_panel.h"
#include "ui/run/runs_model.h"
#include "ui/shell/main_window.h"
#include "ui/shell/trace_loader.h"
#include "ui/table/key_averages_model.h"
#include "ui/table/key_averages_proxy.h"
#include "ui/table/table_pane.h"

#include "ui/panels/steps_model.h"
#include "ui/panels/timeline_diff.h"
#include "ui/views/views_panels.h"

using namespace attnscope;
using namespace attnscope::ui;

namespace viewer_fixture {

inline const QString kKineto = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto");
inline const QString kSoftmax = kKineto + QStringLiteral("/softmax_8x16x1024x64.json");
inline const QString kNone = kKineto + QStringLiteral("/none_8x16x1024x64.json");
inline const QString kEngineTrace = QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/softmax_none_8x16x1024x64.json");

inline std::shared_ptr<const EventStore> load(const QString& path) {
  LoadResult r = loadTrace(path.toStdString());
  if (!r.ok()) return nullptr;
  return std::make_shared<const EventStore>(std::move(*r.store));
}

inline bool openAndWait(MainWindow& w, QSignalSpy& shown, const QString& path) {
  const qsizetype before = shown.size();
  w.openTrace(path);
  return shown.size() > before || shown.wait(30000);
}

// Each suite's initTestCase: settings in a folder of the suite's own (never the user's), and the
// shared capture loaded.
inline void initViewerSuite(QTemporaryDir& tmp, std::shared_ptr<const EventStore>* softmax) {
  qRegisterMetaType<RunOutcome>();
  QVERIFY(tmp.isValid());
  qputenv("XDG_CONFIG_HOME", tmp.filePath(QStringLiteral("config")).toUtf8());
  QCoreApplication::setOrganizationName(QStringLiteral("attnscope-test"));
  *softmax = load(kSoftmax);
  QVERIFY2(*softmax, "the shared capture softmax_8x16x1024x64.json must load");
}

}  // namespace viewer_fixture
