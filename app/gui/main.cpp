// attnscope: the desktop viewer.
//
//   attnscope [TRACE]
//   attnscope --screenshot FILE [--size WxH] [--overlay NAME] [TRACE]
//   attnscope --startup-probe [TRACE]
//   attnscope [--screenshot FILE] --job PATH [--job PATH...]
//
// Without TRACE the window shows the bundled sample capture. --screenshot
// renders the window with the trace loaded, writes a PNG and exits (0, or
// 2 when the trace cannot be loaded or the PNG cannot be written); it works
// with QT_QPA_PLATFORM=offscreen. --overlay NAME selects that step (or the
// first user annotation / op so named) in the timeline's explain overlay and
// zooms to it; an unknown name exits 2 listing the steps. --startup-probe
// prints when the window and then the trace were first painted and exits
// (startup_probe.h; settings are neither restored nor saved). --run presses
// Run once the engine has been probed and prints the run's file when it ends
// (scripts/check-fresh uses it to show a fresh machine's Run works). --job opens a distributed job
// (a folder of traces, one per rank, or several files) in the Ranks window; with --screenshot it
// shoots that window once the chosen ranks' timelines are drawn.
#include <QApplication>
#include <QBuffer>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QFileInfo>
#include <QImage>
#include <QRegularExpression>
#include <QTabWidget>
#include <QTextStream>
#include <QTimer>
#include <cstdio>
#include <string_view>

#include "core/write/atomic_file.h"
#include "load_probe.h"
#include "quit_on_signal.h"
#include "startup_probe.h"
#include "ui/panels/compare_view.h"
#include "ui/panels/timeline_diff.h"
#include "ui/ranks/rank_timelines.h"
#include "ui/ranks/ranks_view.h"
#include "ui/run/engine_runner.h"
#include "ui/run/run_panel.h"
#include "ui/run/runs_model.h"
#include "ui/run/script_form.h"
#include "ui/shell/main_window.h"
#include "ui/table/table_pane.h"
#include "ui/timeline/timeline_pane.h"
#include "ui/views/views_panels.h"

namespace {

void fail(const QString& message) { std::fprintf(stderr, "attnscope: %s\n", qPrintable(message)); }

bool parseSize(const QString& text, QSize* size) {
  static const QRegularExpression re(QStringLiteral("^(\\d{1,5})x(\\d{1,5})$"));
  const auto m = re.match(text);
  if (!m.hasMatch()) return false;
  const int w = m.captured(1).toInt();
  const int h = m.captured(2).toInt();
  if (w < 320 || h < 240 || w > 8192 || h > 8192) return false;
  *size = QSize(w, h);
  return true;
}

bool savePng(const QImage& image, const QString& path, QString* error) {
  QByteArray png;
  QBuffer buffer(&png);
  buffer.open(QIODevice::WriteOnly);
  if (!image.save(&buffer, "PNG")) {
    *error = path + QStringLiteral(": could not encode the window as PNG");
    return false;
  }
  std::string why;
  if (!attnscope::writeFileAtomic(path.toStdString(),
                                  std::string_view(png.constData(), static_cast<size_t>(png.size())), &why)) {
    *error = QString::fromStdString(why);
    return false;
  }
  return true;
}

// The command line: the same options whether a window opens or only the help is printed.
struct Options {
  QCommandLineParser parser;
  QCommandLineOption screenshot{QStringLiteral("screenshot"),
                                QStringLiteral("Render the window with the trace loaded, save it as a PNG to <FILE> "
                                               "and exit."),
                                QStringLiteral("FILE")};
  QCommandLineOption size{QStringLiteral("size"), QStringLiteral("Window size for --screenshot (default 1280x800)."),
                          QStringLiteral("WxH"), QStringLiteral("1280x800")};
  QCommandLineOption group{QStringLiteral("group-by"),
                           QStringLiteral("Initial grouping: name (default) or shape (name and input shapes), "
                                          "as attnscope-cli table --group-by."),
                           QStringLiteral("name|shape"), QStringLiteral("name")};
  QCommandLineOption filter{QStringLiteral("filter"), QStringLiteral("Initial name filter (a regular expression)."),
                            QStringLiteral("REGEX")};
  QCommandLineOption compare{QStringLiteral("compare"),
                             QStringLiteral("Compare TRACE (A) with B and show both timelines side by side; with "
                                            "--screenshot, shoot that window."),
                             QStringLiteral("B")};
  QCommandLineOption view{
      QStringLiteral("view"),
      QStringLiteral("Open on a view: steps (the default for a trace with steps), operators (for one without), "
                     "overview, kernels, memory, modules, run, plots or explanation; "
                     "with --screenshot, shoot once it is filled. With --compare B, 'compare' "
                     "shows the Compare dock instead of the two timelines."),
      QStringLiteral("VIEW")};
  QCommandLineOption overlay{QStringLiteral("overlay"),
                             QStringLiteral("Explain overlay on the timeline for step NAME (or the first user "
                                            "annotation or op so named), zoomed to it."),
                             QStringLiteral("NAME")};
  QCommandLineOption probe{QStringLiteral("startup-probe"),
                           QStringLiteral("Print when the window and the trace were first painted (monotonic ns) and "
                                          "exit.")};
  QCommandLineOption loadProbe{QStringLiteral("load-probe"),
                               QStringLiteral("Show the bundled sample, then open TRACE and print how long the "
                                              "window was ever unresponsive meanwhile; exit once it is shown.")};
  QCommandLineOption cancelAfter{QStringLiteral("cancel-after"),
                                 QStringLiteral("With --load-probe: press the load's Cancel button after <S> seconds."),
                                 QStringLiteral("S")};
  QCommandLineOption shootAt{QStringLiteral("shoot-at"),
                             QStringLiteral("With --load-probe and --screenshot FILE: save the window <S> seconds "
                                            "into the load."),
                             QStringLiteral("S")};
  QCommandLineOption run{
      QStringLiteral("run"),
      QStringLiteral("Press Start Run (Ctrl+Shift+R) once the engine has said what it can do here: the attention "
                     "workload with the Run panel's settings. Prints the run's file and the "
                     "Runs list's length when it ends; with --screenshot, shoots once the run is "
                     "shown. Exits 2 when the run cannot start or fails.")};

  QCommandLineOption script{QStringLiteral("script"),
                            QStringLiteral("The Run panel on \"Your script\" with this script (its arguments after it, "
                                           "quoted as in a shell); with --run, records it."),
                            QStringLiteral("SCRIPT")};

  QCommandLineOption job{QStringLiteral("job"),
                         QStringLiteral("Open PATH as a distributed job in the Ranks window: a folder of traces, one "
                                        "per rank, or a trace file (repeat --job for several). With --screenshot, "
                                        "shoot the Ranks window once its timelines are drawn."),
                         QStringLiteral("PATH")};

  Options() {
    parser.setApplicationDescription(
        QStringLiteral("attnscope: where a PyTorch step's time went, on the CPU and the GPU.\n"
                       "Opens a torch.profiler trace (Chrome-trace JSON, .json or .json.gz, as written by\n"
                       "prof.export_chrome_trace()) or, without TRACE, the bundled H200 capture. The command-line\n"
                       "tool is attnscope-cli (attnscope-cli --help)."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions({screenshot, size, group, filter, overlay, compare, view, probe, loadProbe, cancelAfter, shootAt,
                       run, script, job});
    parser.addPositionalArgument(QStringLiteral("TRACE"),
                                 QStringLiteral("Trace to open; without it, the bundled sample."),
                                 QStringLiteral("[TRACE]"));
  }
};

// Saves `w` as a PNG to `out` once queued layout work (the view's delayed item layout) has run,
// then exits: 0, or 2 when the PNG cannot be written.
void shootLater(QWidget* w, const QString& out) {
  QTimer::singleShot(0, w, [w, out] {
    QCoreApplication::processEvents();
    QCoreApplication::processEvents();
    const QImage image = w->grab().toImage();
    if (image.size() != w->size()) {
      fail(QStringLiteral("note: the window is %1x%2 (device pixels %3x%4)")
               .arg(w->width())
               .arg(w->height())
               .arg(image.width())
               .arg(image.height()));
    }
    QString error;
    if (!savePng(image, out, &error)) {
      fail(error);
      QCoreApplication::exit(2);
      return;
    }
    QCoreApplication::exit(0);
  });
}

// --run: once the first trace is shown and the engine has been probed, press Run; when the run
// ends, say where its trace is and how many entries the Runs list has, then (with FILE) shoot the
// window once the run's trace is shown and exit.
void pressRunOnceProbed(attnscope::ui::MainWindow* window, const QString& shot) {
  using attnscope::ui::EngineRunner;
  using attnscope::ui::RunPanel;
  auto press = [window] {
    if (!window->runPanel()->startRun()) {
      fail(QStringLiteral("--run: cannot run: %1").arg(window->runPanel()->runner()->availability().reason));
      QCoreApplication::exit(2);
    }
  };
  QObject::connect(
      window, &attnscope::ui::MainWindow::traceShown, window,
      [window, press] {
        EngineRunner* runner = window->runPanel()->runner();
        if (runner->availability().probed) {
          press();
        } else {
          QObject::connect(runner, &EngineRunner::availabilityChanged, window, press, Qt::SingleShotConnection);
        }
      },
      Qt::SingleShotConnection);
  QObject::connect(
      window->runPanel(), &RunPanel::runFinished, window,
      [window, shot](const attnscope::RunConfig&, const attnscope::ui::RunOutcome& o) {
        if (o.status != attnscope::ui::RunStatus::Done) {
          fail(QStringLiteral("--run: the run failed: %1\n%2").arg(o.message, o.stderrText));
          QCoreApplication::exit(2);
          return;
        }
        QTextStream(stdout) << "run: " << o.outPath << " (" << window->runs()->rowCount() << " in the Runs list, "
                            << o.elapsedMs << " ms)\n";
        if (shot.isEmpty()) return;
        QObject::connect(
            window, &attnscope::ui::MainWindow::traceShown, window, [window, shot] { shootLater(window, shot); },
            Qt::SingleShotConnection);
      },
      Qt::SingleShotConnection);
}

void setNames() {
  QCoreApplication::setApplicationName(QStringLiteral("attnscope"));
  QCoreApplication::setApplicationVersion(QStringLiteral(ATTNSCOPE_VERSION));
  QCoreApplication::setOrganizationName(QStringLiteral("attnscope"));
}

}  // namespace

int main(int argc, char* argv[]) {
  const long long mainNs = monotonicNs();
  // --help and --version need no display: answer them before a window system is asked for.
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a == "--help" || a == "--help-all" || a == "-v" || a == "--version") {
      QCoreApplication core(argc, argv);
      setNames();
      Options o;
      o.parser.process(core);  // prints and exits
      return 0;
    }
  }
  QApplication app(argc, argv);
  setNames();
  // SIGTERM and Ctrl+C end the event loop: the window closes as on File > Quit (its runs' folder goes).
  attnscope::gui::quitOnSignals(&app);
  Options o;
  QCommandLineParser& parser = o.parser;
  const QCommandLineOption& screenshotOpt = o.screenshot;
  const QCommandLineOption& sizeOpt = o.size;
  const QCommandLineOption& groupOpt = o.group;
  const QCommandLineOption& filterOpt = o.filter;
  const QCommandLineOption& overlayOpt = o.overlay;
  const QCommandLineOption& probeOpt = o.probe;
  const QCommandLineOption& compareOpt = o.compare;
  const QCommandLineOption& viewOpt = o.view;
  parser.process(app);

  const QStringList positional = parser.positionalArguments();
  if (positional.size() > 1) {
    fail(QStringLiteral("expected at most one TRACE, got %1").arg(positional.size()));
    return 1;
  }
  QSize size;
  if (!parseSize(parser.value(sizeOpt), &size)) {
    fail(QStringLiteral("--size must be WxH between 320x240 and 8192x8192, got '%1'").arg(parser.value(sizeOpt)));
    return 1;
  }
  const QString group = parser.value(groupOpt);
  const bool byShape = group == QLatin1String("shape") || group == QLatin1String("input-shape");
  if (group != QLatin1String("name") && !byShape) {
    fail(QStringLiteral("--group-by must be name or shape, got '%1'").arg(group));
    return 1;
  }

  const bool loadProbe = parser.isSet(o.loadProbe);
  const bool screenshot = parser.isSet(screenshotOpt) && !loadProbe;
  const bool probe = parser.isSet(probeOpt) || loadProbe;
  // A screenshot or a probe shows the default layout and leaves the user's settings alone.
  attnscope::ui::MainWindowOptions options;
  options.restoreSettings = !screenshot && !probe;
  options.saveSettings = !screenshot && !probe;
  attnscope::ui::MainWindow window(options);
  window.tablePane()->setGroupBy(byShape ? attnscope::GroupBy::InputShape : attnscope::GroupBy::Name);
  if (parser.isSet(filterOpt)) window.tablePane()->setNameFilter(parser.value(filterOpt), true);

  if (loadProbe) {
    if (positional.isEmpty()) {
      fail(QStringLiteral("--load-probe needs TRACE"));
      return 1;
    }
    new LoadProbe(&window, positional.front(), parser.value(o.cancelAfter).toDouble(),
                  parser.value(o.shootAt).toDouble(), parser.value(screenshotOpt));
    window.resize(size);
    window.show();
    QTimer::singleShot(0, &window, [&window] { window.openBundledSample(); });
    return app.exec();
  }
  if (probe) new StartupProbe(&window, mainNs);
  if (parser.isSet(overlayOpt)) {
    const QString name = parser.value(overlayOpt);
    QObject::connect(&window, &attnscope::ui::MainWindow::traceShown, &app, [&window, name] {
      if (window.timelinePane()->explainByName(name)) return;
      fail(QStringLiteral("--overlay: no step, user annotation or op named '%1' (steps: %2)")
               .arg(name, window.timelinePane()->stepNames().join(QStringLiteral(", "))));
      QCoreApplication::exit(2);
    });
  }
  const QString compareWith = parser.value(compareOpt);
  const QStringList jobPaths = parser.values(o.job);
  // The tabs under the timeline, in order (without --view, the window picks: Steps for a trace with steps).
  const QStringList views{QStringLiteral("steps"),   QStringLiteral("operators"), QStringLiteral("overview"),
                          QStringLiteral("kernels"), QStringLiteral("memory"),    QStringLiteral("modules")};
  // --view compare (with --compare B): the main window with the Compare dock, not the two timelines.
  const bool compareDock = parser.value(viewOpt) == QLatin1String("compare");
  // --view run: the Run panel in front, as it is once the engine has said what it can do here.
  const bool pressRun = parser.isSet(o.run);
  const bool runDock = parser.value(viewOpt) == QLatin1String("run") || pressRun || parser.isSet(o.script);
  if (parser.isSet(o.script)) {
    const std::optional<QStringList> words = attnscope::ui::splitArguments(parser.value(o.script));
    if (!words || words->isEmpty()) {
      fail(QStringLiteral("--script takes a script and its arguments, got '%1'").arg(parser.value(o.script)));
      return 1;
    }
    attnscope::RecordConfig rc = window.runPanel()->recordConfig();
    rc.script = QFileInfo(words->front()).absoluteFilePath().toStdString();
    rc.args.clear();
    for (qsizetype i = 1; i < words->size(); ++i) rc.args.push_back(words->at(i).toStdString());
    window.runPanel()->scriptForm()->setConfig(rc);
    window.runPanel()->setScriptWorkload(true);
  }
  // --view plots: the Plots panel in front (an engine run's steps by timing method).
  const bool plotsDock = parser.value(viewOpt) == QLatin1String("plots");
  // --view explanation: the Explanation dock given most of the window's height (as a user drags it up
  // to read the diagnosis, its evidence and fixes).
  const bool explanationDock = parser.value(viewOpt) == QLatin1String("explanation");
  if (explanationDock)
    QObject::connect(
        &window, &attnscope::ui::MainWindow::traceShown, &app,
        [&window] {
          QDockWidget* d = window.dock(QStringLiteral("explainDock"));
          d->show();
          d->raise();
          window.resizeDocks({d}, {window.height() * 2 / 3}, Qt::Vertical);
        },
        Qt::SingleShotConnection);
  const int viewIndex = parser.isSet(viewOpt) && !compareDock && !runDock && !plotsDock && !explanationDock
                            ? static_cast<int>(views.indexOf(parser.value(viewOpt)))
                            : -2;
  if (viewIndex == -1 || (compareDock && compareWith.isEmpty())) {
    fail(QStringLiteral("--view takes one of %1, run, plots, explanation or compare, got '%2'")
             .arg(views.join(QStringLiteral(", ")), parser.value(viewOpt)));
    return 1;
  }
  attnscope::ui::ViewPanel* viewPanel = nullptr;
  if (viewIndex >= 0) {
    viewPanel = qobject_cast<attnscope::ui::ViewPanel*>(window.viewTabs()->widget(viewIndex));
    QObject::connect(
        &window, &attnscope::ui::MainWindow::traceShown, &app,
        [&window, viewIndex] { window.viewTabs()->setCurrentIndex(viewIndex); }, Qt::SingleShotConnection);
  }
  if (runDock || plotsDock) {
    // Connected before the screenshot's handler, so the dock is in front when it shoots.
    const QString dockName = runDock ? QStringLiteral("runDock") : QStringLiteral("plotsDock");
    QObject::connect(
        &window, &attnscope::ui::MainWindow::traceShown, &app,
        [&window, dockName] {
          window.dock(dockName)->show();
          window.dock(dockName)->raise();
        },
        Qt::SingleShotConnection);
  }
  if (!compareWith.isEmpty()) {
    if (positional.isEmpty()) {
      fail(QStringLiteral("--compare B needs TRACE (A) too"));
      return 1;
    }
    QObject::connect(
        &window, &attnscope::ui::MainWindow::traceShown, &app,
        [&window, a = positional.front(), compareWith, compareDock] {
          window.compareFiles(a, compareWith, !compareDock);
        },
        Qt::SingleShotConnection);
  }
  if (screenshot) {
    const QString out = parser.value(screenshotOpt);
    // Render without putting a window on a real desktop.
    window.setAttribute(Qt::WA_DontShowOnScreen);
    window.resize(size);
    auto shoot = [out](QWidget* w) { shootLater(w, out); };
    if (!jobPaths.isEmpty()) {
      // Shot from the job's own handler below, once the Ranks window's timelines are drawn.
    } else if (compareDock) {
      QObject::connect(window.compareView(), &attnscope::ui::CompareView::compared, &app,
                       [&window, shoot] { shoot(&window); });
    } else if (pressRun) {
      // Shot by the run's own handler below, once its trace is shown.
    } else if (runDock) {
      QObject::connect(
          &window, &attnscope::ui::MainWindow::traceShown, &app,
          [&window, shoot] {
            auto* runner = window.runPanel()->runner();
            if (runner->availability().probed) {
              shoot(&window);
            } else {
              QObject::connect(
                  runner, &attnscope::ui::EngineRunner::availabilityChanged, &window,
                  [&window, shoot] { shoot(&window); }, Qt::SingleShotConnection);
            }
          },
          Qt::SingleShotConnection);
    } else if (plotsDock) {
      QObject::connect(&window, &attnscope::ui::MainWindow::traceShown, &app, [&window, shoot] { shoot(&window); });
    } else if (viewPanel) {
      // Shoot once the view is filled.
      QObject::connect(viewPanel, &attnscope::ui::ViewPanel::ready, &app, [&window, shoot] { shoot(&window); });
    } else if (compareWith.isEmpty()) {
      // Shoot once the trace is on screen (the explanation's cards included).
      QObject::connect(&window, &attnscope::ui::MainWindow::traceShown, &app, [&window, shoot] { shoot(&window); });
    } else {
      // Shoot the two timelines once both traces are in them.
      QObject::connect(window.compareView(), &attnscope::ui::CompareView::timelinesReady, &app,
                       [size, shoot](attnscope::ui::TimelineDiff* diff) {
                         diff->setAttribute(Qt::WA_DontShowOnScreen);
                         diff->resize(size);
                         shoot(diff);
                       });
    }
    QObject::connect(&window, &attnscope::ui::MainWindow::loadFailed, &app, [](const QString& message) {
      fail(message);
      QCoreApplication::exit(2);
    });
  }
  if (pressRun) pressRunOnceProbed(&window, screenshot ? parser.value(screenshotOpt) : QString());
  window.show();
  if (!jobPaths.isEmpty()) {
    const QString shot = screenshot ? parser.value(screenshotOpt) : QString();
    QTimer::singleShot(0, &window, [&window, jobPaths, shot, size] {
      window.openJob(jobPaths);
      attnscope::ui::RanksView* ranks = window.ranksView();
      if (shot.isEmpty() || !ranks) return;
      ranks->resize(size);
      QObject::connect(ranks, &attnscope::ui::RanksView::jobFailed, ranks, [](const QString& message) {
        fail(message);
        QCoreApplication::exit(2);
      });
      QObject::connect(
          ranks->timelines(), &attnscope::ui::RankTimelines::shownRanksSettled, ranks,
          [ranks, shot] { shootLater(ranks, shot); }, Qt::SingleShotConnection);
    });
  }
  // Start loading once the event loop runs, so that even an immediate
  // failure reaches the handlers above through exec().
  const QString trace = positional.isEmpty() ? QString() : positional.front();
  QTimer::singleShot(0, &window, [&window, trace, job = !jobPaths.isEmpty()] {
    if (trace.isEmpty() && job) return;  // the job alone
    if (trace.isEmpty()) {
      window.openBundledSample();
    } else {
      window.openTrace(trace);
    }
  });
  return app.exec();
}
