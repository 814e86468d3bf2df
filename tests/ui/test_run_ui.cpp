// The Run panel and the Runs list as a user drives them: the engine missing, the command preview,
// each wrapping box and sync mode, Run, and what the run recorded in the Explanation.
#include <QSpinBox>

#include "app_harness.h"
#include "core/text/duration.h"

using namespace apptest;

class RunUiTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { initSuite(); }

  // With no engine where the CLI looks for it, the Run panel names that path and the one command that
  // builds it, and Run is off (the CLI honours ATTNSCOPE_ENGINE_EXE for where it looks).
  void runPanelSaysWhereTheEngineIsMissing() {
    const QByteArray missing = "/opt/nowhere/attnscope-engine";
    qputenv("ATTNSCOPE_ENGINE_EXE", missing);
    EngineRunner probe;
    probe.setProgram(QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli"));
    QSignalSpy probed(&probe, &EngineRunner::availabilityChanged);
    probe.probe();
    const bool answered = probed.wait(30000) || !probed.isEmpty();
    qunsetenv("ATTNSCOPE_ENGINE_EXE");
    QVERIFY(answered);
    QVERIFY(!probe.availability().engineBuilt);
    const QString reason = probe.availability().reason;
    QVERIFY2(reason.contains(QString::fromLatin1(missing)), qPrintable(reason));
    QVERIFY2(reason.contains(QStringLiteral("scripts/run")), qPrintable(reason));
  }

  // The command the Run panel shows when it first appears is the one its boxes ask for: once the
  // engine has said what it can do here (no GPU: the GPU-only boxes are unticked), the preview's
  // --timing list names exactly the ticked methods, before any box is touched.
  void runPreviewMatchesBoxesAtFirstShow() {
    App app;
    QVERIFY(app.openSample());
    RunPanel* panel = showRunPanel(app);
    QVERIFY(waitForProbe(panel->runner()));
    QCoreApplication::processEvents();
    auto* preview = panel->findChild<QPlainTextEdit*>(QStringLiteral("commandPreview"));
    QVERIFY(preview);
    const QRegularExpressionMatch m =
        QRegularExpression(QStringLiteral("--timing (\\S+)")).match(preview->toPlainText());
    QVERIFY2(m.hasMatch(), qPrintable(preview->toPlainText()));
    const QStringList shown = m.captured(1).split(QLatin1Char(','));
    QStringList ticked;
    for (QCheckBox* box : panel->findChildren<QCheckBox*>()) {
      if (!box->objectName().startsWith(QStringLiteral("timing_"))) continue;
      if (box->isChecked()) ticked << box->objectName().mid(7);
    }
    QVERIFY(!ticked.isEmpty());
    ticked.sort();
    QStringList sortedShown = shown;
    sortedShown.sort();
    QCOMPARE(sortedShown, ticked);
  }

  // Every action of the "used by" line, through the widgets: wrapping boxes and sync modes
  // change the command the Run panel will start; Run (CPU) ends in the Runs list.
  void runPanelByInput() {
    App app;
    QVERIFY(app.openSample());
    RunPanel* panel = showRunPanel(app);
    auto* preview = panel->findChild<QPlainTextEdit*>(QStringLiteral("commandPreview"));
    QVERIFY(preview);
    for (const char* key : {"qk", "scale", "softmax", "av"}) {
      auto* box = panel->findChild<QCheckBox*>(QStringLiteral("wrap_") + key);
      QVERIFY(box);
      const bool before = box->isChecked();
      clickWidget(box);
      QCOMPARE(box->isChecked(), !before);
      QCOMPARE(preview->toPlainText().contains(QStringLiteral("--wrap")) &&
                   preview->toPlainText().contains(QString::fromLatin1(key)),
               box->isChecked());
      clickWidget(box);
      QCOMPARE(box->isChecked(), before);
    }
    auto* sync = panel->findChild<QComboBox*>(QStringLiteral("sync"));
    QVERIFY(sync);
    const char* modes[] = {"--sync none", "--sync end", "--sync step", "--sync blocking"};
    for (int i = 0; i < sync->count(); ++i) {
      pickComboItem(sync, i);
      QVERIFY2(preview->toPlainText().contains(QString::fromLatin1(modes[i])), qPrintable(preview->toPlainText()));
    }
    pickComboItem(sync, 0);
    // Ranks: the block as N processes; the command says so, and 1 leaves the flag out.
    auto* ranks = panel->findChild<QSpinBox*>(QStringLiteral("ranks"));
    QVERIFY(ranks);
    ranks->setFocus();
    QTest::keyClick(ranks, Qt::Key_Up);
    QCOMPARE(ranks->value(), 2);
    QVERIFY2(preview->toPlainText().contains(QStringLiteral("--ranks 2")), qPrintable(preview->toPlainText()));
    QTest::keyClick(ranks, Qt::Key_Down);
    QVERIFY(!preview->toPlainText().contains(QStringLiteral("--ranks")));
    // Run on the CPU: the run ends in the Runs list, and its trace is shown.
    EngineRunner* runner = panel->runner();
    QVERIFY(waitForProbe(runner));
    // The timing boxes follow the device: a CPU run cannot time CUDA events or sync a GPU.
    auto* device = panel->findChild<QComboBox*>(QStringLiteral("device"));
    pickComboItem(device, device->findData(static_cast<int>(RunDevice::Cpu)));
    for (const char* gpuOnly : {"events", "host-sync", "op-events"}) {
      auto* box = panel->findChild<QCheckBox*>(QStringLiteral("timing_") + QLatin1String(gpuOnly));
      QVERIFY2(box, gpuOnly);
      QVERIFY2(!box->isChecked() && !box->isEnabled(), gpuOnly);
      clickWidget(box);
      QVERIFY2(!box->isChecked(), gpuOnly);
    }
    QVERIFY2(!preview->toPlainText().contains(QStringLiteral("events")), qPrintable(preview->toPlainText()));
    QVERIFY2(!preview->toPlainText().contains(QStringLiteral("host-sync")), qPrintable(preview->toPlainText()));
    // The host clock needs no GPU: its box stays live and follows a click.
    auto* host = panel->findChild<QCheckBox*>(QStringLiteral("timing_host"));
    QVERIFY(host && host->isEnabled());
    const bool hostWas = host->isChecked();
    clickWidget(host);
    QCOMPARE(host->isChecked(), !hostWas);
    QCOMPARE(preview->toPlainText().contains(QStringLiteral("host")), !hostWas);
    clickWidget(host);
    QCOMPARE(host->isChecked(), hostWas);
    if (!runner->availability().engineBuilt) QSKIP("attnscope-cli was built without the engine: Run cannot start");
    // All four steps wrapped, through the boxes.
    for (const char* key : {"qk", "scale", "softmax", "av"}) {
      auto* box = panel->findChild<QCheckBox*>(QStringLiteral("wrap_") + key);
      if (!box->isChecked()) clickWidget(box);
      QVERIFY(box->isChecked());
    }
    QVERIFY2(preview->toPlainText().contains(QStringLiteral("qk,scale,softmax,av")),
             qPrintable(preview->toPlainText()));
    // Input shapes are off by default (they lengthen the steps); the box asks for them.
    auto* shapes = panel->findChild<QCheckBox*>(QStringLiteral("recordShapes"));
    QVERIFY(shapes && !shapes->isChecked());
    QVERIFY(!preview->toPlainText().contains(QStringLiteral("--record-shapes")));
    clickWidget(shapes);
    QVERIFY(shapes->isChecked());
    QVERIFY2(preview->toPlainText().contains(QStringLiteral("--record-shapes")), qPrintable(preview->toPlainText()));
    // The run goes to a folder whose name has a space (the trace's config was recovered by splitting
    // its command line on spaces, which broke there).
    QTemporaryDir tmp;
    const QString spaced = tmp.path() + QStringLiteral("/my runs");
    QVERIFY(QDir().mkpath(spaced));
    panel->setOutputDir(spaced);
    QSignalSpy finished(panel, &RunPanel::runFinished);
    const int runsBefore = app.w.runs()->rowCount();
    clickWidget(panel->findChild<QPushButton*>(QStringLiteral("run")));
    QVERIFY(finished.wait(180000));
    QCOMPARE(app.w.runs()->rowCount(), runsBefore + 1);
    const RunEntry* e = app.w.runs()->entry(app.w.runs()->rowCount() - 1);
    QVERIFY2(e && e->status == RunStatus::Done, e ? qPrintable(e->message + e->stderrText) : "no entry");
    QVERIFY(app.shown.wait(30000) || app.w.trace()->path == e->path);
    QVERIFY2(e->path.startsWith(spaced), qPrintable(e->path));
    // Opened and explained with its configuration intact: the boxes' wrapping, shapes and path.
    const auto& engine = app.w.trace()->snapshot->engine;
    QVERIFY(engine && engine->config);
    QCOMPARE(QString::fromStdString(engine->config->out), e->path);
    QVERIFY(engine->config->wrap == (std::array<bool, kStepCount>{true, true, true, true}));
    QVERIFY(engine->config->recordShapes && engine->config->device == RunDevice::Cpu);
    QVERIFY(app.w.explainPanel()->plainText().contains(QStringLiteral("The answer")));
    // The run recorded what the box asked for: its ops carry their input shapes.
    const EventStore& store = *app.w.trace()->snapshot->store;
    QVERIFY(store.meta().recordShapes);
    size_t withShapes = 0;
    for (const Event& ev : store.events())
      if (const auto a = store.argsOf(ev); a && a->inputDims) ++withShapes;
    QVERIFY2(withShapes > 0, "no op of the run has input shapes");
  }

  // "Your script" through the widgets: choose the workload, type the script's path, wrap its
  // modules and sync each step, Run; the recording lands in the Runs list and is explained.
  void recordYourScriptByInput() {
    QProcess py;
    py.start(QStringLiteral("python3"), {QStringLiteral("-c"), QStringLiteral("import torch")});
    if (!py.waitForFinished(120000) || py.exitCode() != 0) QSKIP("python3 cannot import torch here");
    App app;
    QVERIFY(app.openSample());
    RunPanel* panel = showRunPanel(app);
    QVERIFY(waitForProbe(panel->runner()));
    auto* preview = panel->findChild<QPlainTextEdit*>(QStringLiteral("commandPreview"));
    auto* workload = panel->findChild<QComboBox*>(QStringLiteral("workload"));
    QVERIFY(preview && workload);
    pickComboItem(workload, 1);
    QVERIFY(panel->scriptWorkload());
    auto* run = panel->findChild<QPushButton*>(QStringLiteral("run"));
    QVERIFY(!run->isEnabled());  // no script yet
    auto* script = panel->findChild<QLineEdit*>(QStringLiteral("scriptPath"));
    QVERIFY(script && script->isVisible());
    clickWidget(script);
    QTest::keyClicks(script, QStringLiteral(ATTNSCOPE_SOURCE_DIR "/tests/data/scripts/train_mlp.py"));
    auto* args = panel->findChild<QLineEdit*>(QStringLiteral("scriptArgs"));
    clickWidget(args);
    QTest::keyClicks(args, QStringLiteral("--workers 0 --steps 30"));
    auto* wrap = panel->findChild<QComboBox*>(QStringLiteral("scriptWrap"));
    pickComboItem(wrap, wrap->findData(QStringLiteral("children")));
    auto* sync = panel->findChild<QComboBox*>(QStringLiteral("scriptSync"));
    pickComboItem(sync, sync->findData(static_cast<int>(RecordSync::Step)));
    const QString cmd = preview->toPlainText();
    QVERIFY2(cmd.contains(QStringLiteral(" record ")) && cmd.contains(QStringLiteral("--wrap-modules children")) &&
                 cmd.contains(QStringLiteral("--sync step")) &&
                 cmd.contains(QStringLiteral("train_mlp.py --workers 0")),
             qPrintable(cmd));
    QVERIFY(run->isEnabled());
    QSignalSpy finished(panel, &RunPanel::runFinished);
    const int runsBefore = app.w.runs()->rowCount();
    clickWidget(run);
    QVERIFY(finished.wait(180000));
    QCOMPARE(app.w.runs()->rowCount(), runsBefore + 1);
    const RunEntry* e = app.w.runs()->entry(app.w.runs()->rowCount() - 1);
    QVERIFY2(e && e->status == RunStatus::Done, e ? qPrintable(e->message + e->stderrText) : "no entry");
    QVERIFY2(e->summary.startsWith(QStringLiteral("Your script: train_mlp.py --workers 0 --steps 30, wrap children")),
             qPrintable(e->summary));
    QVERIFY(app.shown.wait(30000) || app.w.trace()->path == e->path);
    QCOMPARE(app.w.trace()->path, e->path);
    // Opened and explained: the recording's own notes, and the wrapped modules as table rows.
    const auto& record = app.w.trace()->snapshot->record;
    QVERIFY(record && record->status == "complete");
    QCOMPARE(record->wrappedModules, (std::vector<std::string>{"encoder", "head"}));
    const QString text = app.w.explainPanel()->plainText();
    QVERIFY2(
        text.contains(QStringLiteral("modules wrapped in record_function (--wrap-modules children): encoder, head")),
        qPrintable(text.left(800)));
    QVERIFY(text.contains(QStringLiteral("sync: step")));
    const QAbstractItemModel* m = app.w.tablePane()->view()->model();
    QVERIFY(rowNamed(m, QStringLiteral("encoder")) >= 0);
    QVERIFY(rowNamed(m, QStringLiteral("attnscope::step_sync")) >= 0);
  }

  // Finding 5: a CPU run shows nothing of CUDA: no CUDA-event time, no "events" bars, and a
  // share of a zero GPU total is a dash, not NaN.
  void cpuRunShowsNoCuda() {
    App app;
    QVERIFY(app.open(kCpuRun));
    const QString explain = app.w.explainPanel()->plainText();
    QVERIFY(!explain.contains(QStringLiteral("CUDA-event time")));
    // The answer: host time only, said so; no CUPTI or CUDA-event column of zeros.
    QVERIFY2(explain.contains(QStringLiteral("This run was on the CPU")), qPrintable(explain.left(300)));
    QVERIFY(!explain.contains(QStringLiteral("CUPTI (its kernels")));
    QVERIFY(!explain.contains(QStringLiteral("CUDA events around it")));
    if (PlotsPanel::chartsAvailable()) QVERIFY(!app.w.plotsPanel()->stepSeries().contains(QStringLiteral("events")));
    const QAbstractItemModel* m = app.w.tablePane()->view()->model();
    const int pct = KeyAveragesModel::columnOf(Column::SelfDevicePct);
    for (int r = 0; r < m->rowCount(); ++r) {
      const QString cell = m->index(r, pct).data().toString();
      QVERIFY2(!cell.contains(QStringLiteral("NaN")), qPrintable(cell));
      QCOMPARE(cell, QStringLiteral("—"));
    }
  }

  // What an engine run says about its own recording (CUPTI APIs left out,
  // input shapes not recorded) is in the Explanation the user reads, after
  // its heading, as the trace's metadata has it.
  void explanationSaysWhatTheRunRecorded() {
    const QString trace = QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/softmax_none_iters3_1x8x64x64.json");
    QFile f(trace);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonArray notes = QJsonDocument::fromJson(f.readAll()).object()["attnscope"].toObject()["notes"].toArray();
    QVERIFY(!notes.isEmpty());
    App app;
    QVERIFY(app.open(trace));
    const QString text = app.w.explainPanel()->plainText();
    const qsizetype heading = text.indexOf(QStringLiteral("What the run recorded:"));
    QVERIFY2(heading >= 0, qPrintable(text.left(600)));
    for (const auto& n : notes) QVERIFY2(text.indexOf(n.toString(), heading) > heading, qPrintable(n.toString()));
  }

  // The answer table: `attnscope-cli explain` prints the one the app shows (issue 33: it was built
  // in the panel, so the CLI could not print it). On an H200 capture with 20 iterations and on a
  // CPU run: every step's row in the app reads the CLI JSON's figures, column by column, in order.
  void cliPrintsTheAppsAnswer() {
    for (const QString& trace : {QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/softmax_none_iters3_1x8x64x64.json"),
                                 QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/none_end_8x16x1024x64.json"), kCpuRun}) {
      QProcess p;
      p.start(QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli"),
              {QStringLiteral("explain"), trace, QStringLiteral("--format"), QStringLiteral("json")});
      QVERIFY(p.waitForFinished(60000));
      QCOMPARE(p.exitCode(), 0);
      const QJsonObject answer = QJsonDocument::fromJson(p.readAllStandardOutput()).object()["answer"].toObject();
      const QJsonArray columns = answer["columns"].toArray();
      QVERIFY2(columns.size() >= 2, qPrintable(trace));
      App app;
      QVERIFY(app.open(trace));
      const QString text = app.w.explainPanel()->plainText();
      const qsizetype table = text.indexOf(QStringLiteral("The answer"));
      QVERIFY2(table >= 0, qPrintable(text.left(400)));
      const QJsonArray steps = answer["steps"].toArray();
      QCOMPARE(steps.size(), 4);
      qsizetype at = table;
      for (int k = 0; k < 4; ++k) {
        at = text.indexOf(steps[k].toString(), at);
        QVERIFY2(at > table, qPrintable(steps[k].toString()));
        at += steps[k].toString().size();
        for (const auto& col : columns) {
          const QJsonValue ns = col.toObject()["ns"].toArray()[k];
          const QString cell = ns.isNull()
                                   ? QStringLiteral("no row")
                                   : QString::fromStdString(spanDurationText(static_cast<int64_t>(ns.toDouble())));
          // (after the previous cell: two columns may hold the same figure, a wrapped step's row and cost)
          const qsizetype next = text.indexOf(cell, at);
          QVERIFY2(next >= at, qPrintable(QString("%1, %2: %3 not after the step's name in the app's table")
                                              .arg(steps[k].toString(), col.toObject()["key"].toString(), cell)));
          at = next + cell.size();
        }
      }
    }
  }
};

QTEST_MAIN(RunUiTest)
#include "test_run_ui.moc"
