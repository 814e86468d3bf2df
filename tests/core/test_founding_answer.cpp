// The founding answer (core/snapshot/founding_answer.h): per step, what torch's table shows for it
// (its own row, or none, which reads as zero) and what it really cost.
//  - On the real captures of the attention block (the bundled H200 one and every torch.profiler
//    capture in tests/data/torch/kineto): each step's cost against tests/common/founding_oracle.h (the
//    raw JSON events joined by correlation), torch's row against torch's own key_averages output.
//  - On an engine run on the CPU (the committed fixture): the host time of each step's own ops and its
//    scope's CPU total against the oracle, medians over the iterations.
//  - A generator of the shapes users have (fixed seed): attention blocks with any subset of the four
//    steps wrapped, on a GPU or the CPU, with or without the outer scope, a transpose before the
//    matmul, one to four ops in SCALE (some launching nothing, a copy); and training loops of
//    ProfilerStep#N whose backward pass launches from another thread. Truth from the construction;
//    the recall of "no row" over the unwrapped steps, its false positives over the wrapped ones, and
//    the costs and rows that match to the nanosecond are printed and gated.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <random>

#include "cli_run.h"
#include "core/read/trace_reader.h"
#include "core/snapshot/founding_answer.h"
#include "core/snapshot/trace_snapshot.h"
#include "founding_oracle.h"

using namespace attnscope;

namespace {

std::shared_ptr<const TraceSnapshot> snapshotOfFile(const QString& path) {
  LoadResult r = loadTrace(path.toStdString());
  if (!r.ok()) return nullptr;
  return buildSnapshot(std::make_shared<const EventStore>(std::move(*r.store)));
}

std::shared_ptr<const TraceSnapshot> snapshotOfText(const std::string& json) {
  LoadResult r = parseTrace(json, "generated");
  if (!r.ok()) return nullptr;
  return buildSnapshot(std::make_shared<const EventStore>(std::move(*r.store)));
}

// torch's own key_averages (tests/data/torch: torch 2.11's output next to each capture): the CUDA
// total of a name's first (CPU-side) row over its calls, in ns; -1 when torch has no such row.
qint64 torchCudaPerCall(const QString& keyavgPath, const QString& name) {
  QFile f(keyavgPath);
  if (!f.open(QIODevice::ReadOnly)) return -2;
  for (const QJsonValue& v : QJsonDocument::fromJson(f.readAll()).object().value("by_name").toArray()) {
    const QJsonObject r = v.toObject();
    if (r.value("key").toString() != name) continue;
    return std::llround(r.value("device_total_us").toDouble() * 1000.0 / r.value("count").toDouble());
  }
  return -1;
}

const AnswerStep* stepNamed(const FoundingAnswer& a, const QString& name) {
  for (const AnswerStep& s : a.steps)
    if (QString::fromStdString(s.name) == name) return &s;
  return nullptr;
}

// ---- the generator ------------------------------------------------------------------------------

struct Gen {
  std::mt19937 rng;
  std::string events;
  int64_t ext = 100, corr = 5000;
  int64_t gpuFree = 0;  // the stream runs one thing at a time
  explicit Gen(uint32_t seed) : rng(seed) {}

  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  bool coin(double p) { return std::bernoulli_distribution(p)(rng); }
  // Kernel durations span four decades (2 us to 20 ms), as real ones do.
  int64_t kernelNs() { return std::llround(std::pow(10.0, std::uniform_real_distribution<double>(3.3, 7.3)(rng))); }

  static std::string us(int64_t ns) {
    char b[48];
    std::snprintf(b, sizeof b, "%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
    return b;
  }
  void add(const std::string& cat, const std::string& name, int tid, int64_t ts, int64_t dur, const std::string& args,
           int pid = 1) {
    events += (events.empty() ? "" : ",\n") + std::string("{\"ph\": \"X\", \"cat\": \"") + cat + "\", \"name\": \"" +
              name + "\", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid) +
              ", \"ts\": " + us(ts) + ", \"dur\": " + us(dur) + ", \"args\": {" + args + "}}";
  }
  // An op at `t` on thread `tid` that launches one GPU activity (or none); returns its end and adds
  // the activity's duration to `*gpuNs`.
  int64_t op(const std::string& name, int tid, int64_t t, bool launches, int64_t* gpuNs, bool copy = false,
             const std::string& inner = {}) {
    const int64_t id = ext++;
    const int64_t start = t;
    t += uniform(500, 3000);
    int64_t innerId = -1, innerStart = t;
    if (!inner.empty()) innerId = ext++, t += uniform(300, 1000);
    if (launches) {
      const int64_t c = corr++;
      const int64_t call = uniform(2000, 8000);
      add("cuda_runtime", copy ? "cudaMemcpyAsync" : "cudaLaunchKernel", tid, t, call,
          "\"External id\": " + std::to_string(innerId >= 0 ? innerId : id) +
              ", \"correlation\": " + std::to_string(c));
      const int64_t dur = kernelNs();
      const int64_t gs = std::max(gpuFree, t + uniform(3000, 20000));
      gpuFree = gs + dur;
      add(copy ? "gpu_memcpy" : "kernel", copy ? "Memcpy HtoD (Pageable -> Device)" : name + "_kernel", 7, gs, dur,
          "\"device\": 0, \"stream\": 7, \"correlation\": " + std::to_string(c) +
              ", \"External id\": " + std::to_string(innerId >= 0 ? innerId : id),
          0);
      *gpuNs += dur;
      t += call;
    }
    t += uniform(300, 2000);
    if (innerId >= 0) {
      add("cpu_op", inner, tid, innerStart, t - innerStart, "\"External id\": " + std::to_string(innerId));
      t += uniform(200, 800);
    }
    t += uniform(200, 1500);
    add("cpu_op", name, tid, start, t - start, "\"External id\": " + std::to_string(id));
    return t;
  }
  std::string json() const { return "{\"traceEvents\": [\n" + events + "\n]}"; }
};

struct BlockTruth {
  std::array<bool, 4> wrapped{};
  std::array<int64_t, 4> gpu{}, ownOps{}, scope{-1, -1, -1, -1};
};

// One attention block as torch.profiler records it, any subset of its steps wrapped.
BlockTruth attentionBlock(Gen& g, bool gpu) {
  BlockTruth truth;
  const int tid = 11;
  int64_t t = 1'000'000;
  const bool outer = g.coin(0.5);
  const int64_t outerStart = t;
  t += g.uniform(1000, 5000);
  static const char* kScaleOps[] = {"aten::empty", "aten::to",  "aten::sqrt",
                                    "aten::div",   "aten::mul", "aten::lift_fresh"};
  for (int k = 0; k < 4; ++k) {
    truth.wrapped[static_cast<size_t>(k)] = g.coin(0.5);
    const bool wrap = truth.wrapped[static_cast<size_t>(k)];
    const int64_t scopeStart = t;
    if (wrap) t += g.uniform(1000, 6000);
    int64_t gpuNs = 0;
    std::vector<std::pair<int64_t, int64_t>> ops;  // outermost ops (start, end)
    auto run = [&](const std::string& name, bool launches, bool copy = false, const std::string& inner = {}) {
      const int64_t s = t;
      t = g.op(name, tid, t, launches && gpu, &gpuNs, copy, inner);
      ops.emplace_back(s, t);
      t += g.uniform(500, 4000);
    };
    if (k == 0) {
      if (g.coin(0.6)) run("aten::transpose", false);
      run("aten::matmul", true, false, "aten::bmm");
    } else if (k == 1) {
      const int n = static_cast<int>(g.uniform(1, 4));
      for (int i = 0; i < n; ++i) {
        const std::string name = kScaleOps[g.uniform(0, 5)];
        run(name, name != "aten::empty" && name != "aten::lift_fresh", name == "aten::to");
      }
    } else if (k == 2) {
      run("aten::softmax", true, false, "aten::_softmax");
    } else {
      run("aten::matmul", true, false, "aten::bmm");
    }
    if (wrap) {
      t += g.uniform(1000, 6000);
      g.add("user_annotation",
            k == 0   ? "QK MATMUL"
            : k == 1 ? "SCALE"
            : k == 2 ? "SOFTMAX PASS"
                     : "AV MATMUL",
            tid, scopeStart, t - scopeStart, "\"External id\": " + std::to_string(g.ext++));
      truth.scope[static_cast<size_t>(k)] = t - scopeStart;
      t += g.uniform(500, 3000);
    }
    truth.gpu[static_cast<size_t>(k)] = gpuNs;
    for (const auto& [s, e] : ops) truth.ownOps[static_cast<size_t>(k)] += e - s;
  }
  if (outer)
    g.add("user_annotation", "MULTIHEAD_ATTENTION_FULL", tid, outerStart, t + 2000 - outerStart,
          "\"External id\": " + std::to_string(g.ext++));
  return truth;
}

struct LoopTruth {
  std::vector<int64_t> cost, backward, forward;  // per step
};

// A training loop: ProfilerStep#N on the main thread (forward ops and the optimizer), the backward
// pass's ops on autograd's thread inside each step's window.
LoopTruth trainingLoop(Gen& g, int steps) {
  LoopTruth truth;
  int64_t t = 2'000'000;
  for (int s = 0; s < steps; ++s) {
    const int64_t stepStart = t;
    t += g.uniform(2000, 10000);
    int64_t fwd = 0, bwd = 0;
    const int forwardOps = static_cast<int>(g.uniform(2, 6));
    for (int i = 0; i < forwardOps; ++i) t = g.op("aten::linear", 1, t, true, &fwd) + g.uniform(500, 3000);
    // The backward pass on its own thread, while the main thread waits in a sync.
    int64_t b = t + g.uniform(1000, 5000);
    const int backwardOps = static_cast<int>(g.coin(0.2) ? 0 : g.uniform(1, 6));
    for (int i = 0; i < backwardOps; ++i) b = g.op("autograd::engine::evaluate_function", 2, b, true, &bwd) + 1000;
    t = std::max(t, b) + g.uniform(1000, 5000);
    t = g.op("Optimizer.step#SGD.step", 1, t, true, &fwd) + g.uniform(1000, 4000);
    g.add("user_annotation", "ProfilerStep#" + std::to_string(s + 1), 1, stepStart, t - stepStart,
          "\"External id\": " + std::to_string(g.ext++));
    truth.cost.push_back(fwd + bwd);
    truth.backward.push_back(bwd);
    truth.forward.push_back(fwd);
    t += g.uniform(1000, 5000);
  }
  return truth;
}

qint64 medianOf(const std::vector<int64_t>& v) { return oracle::median(QVector<qint64>(v.begin(), v.end())); }

}  // namespace

class FoundingAnswerTest : public QObject {
  Q_OBJECT

 private slots:
  // Every torch.profiler capture of the attention block: its steps' GPU time by correlation as the
  // oracle reads the raw events, torch's rows as torch printed them.
  void realCaptures_data() {
    QTest::addColumn<QString>("trace");
    const QString dir = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto");
    for (const QString& f : QDir(dir).entryList({"*.json"}, QDir::Files))
      if (!f.endsWith(".keyavg.json")) QTest::newRow(qPrintable(f)) << dir + "/" + f;
    QTest::newRow("bundled sample") << QStringLiteral(ATTNSCOPE_SOURCE_DIR "/resources/softmax_8x16x1024x64.json");
  }
  void realCaptures() {
    QFETCH(QString, trace);
    const auto snap = snapshotOfFile(trace);
    QVERIFY(snap && snap->answer);
    const FoundingAnswer& a = *snap->answer;
    QVERIFY(a.gpu);
    const QVector<oracle::OracleStep> truth = oracle::attentionSteps(trace);
    QCOMPARE(truth.size(), 4);
    QString keyavg = trace;
    keyavg.replace(".json", ".keyavg.json");
    if (trace.contains("/resources/"))
      keyavg = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.keyavg.json");
    for (const oracle::OracleStep& o : truth) {
      const AnswerStep* s = stepNamed(a, o.name);
      QVERIFY2(s, qPrintable(o.name));
      QCOMPARE(s->wrapped, o.wrapped);
      QCOMPARE(s->costNs(), oracle::median(o.gpu));
      // torch's own table: a row exactly for the wrapped steps, with its CUDA total.
      const qint64 torch = torchCudaPerCall(keyavg, o.name);
      QCOMPARE(torch >= 0, o.wrapped);
      QCOMPARE(s->torchRowNs, torch);
    }
    // The headline names every unwrapped step as having no row.
    const QString h = QString::fromStdString(a.headline);
    for (const oracle::OracleStep& o : truth) QVERIFY2(h.contains(o.name), qPrintable(h));
    QCOMPARE(h.contains("no row"), std::any_of(truth.begin(), truth.end(), [](const auto& o) { return !o.wrapped; }));
  }

  // A training loop whose every step is record_function("## train_step ##") (the shared H200 capture):
  // torch's table holds one row for the name, 20 calls; the step finder numbers the repeats ("#2", ...),
  // and each of them is that row's call, not a step with "no row" (as the answer said before).
  void repeatedNameIsOneRow() {
    const QString trace = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/h200/transformer_train20.json.gz");
    const QString keyavg = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/h200/transformer_train20.keyavg.json");
    if (!QFile::exists(trace)) QSKIP("no ../shared/traces/h200 here");
    const auto snap = snapshotOfFile(trace);
    QVERIFY(snap && snap->answer);
    const FoundingAnswer& a = *snap->answer;
    const QString name = QStringLiteral("## train_step ##");
    const qint64 torch = torchCudaPerCall(keyavg, name);
    QVERIFY(torch > 0);
    QFile f(keyavg);
    QVERIFY(f.open(QIODevice::ReadOnly));
    int calls = 0;
    for (const QJsonValue& v : QJsonDocument::fromJson(f.readAll()).object().value("by_name").toArray())
      if (v.toObject().value("key").toString() == name) calls = v.toObject().value("count").toInt();
    QCOMPARE(static_cast<int>(a.steps.size()), calls);
    for (const AnswerStep& st : a.steps) {
      QVERIFY2(QString::fromStdString(st.name).startsWith(name), st.name.c_str());
      QVERIFY(st.wrapped);
      // torch prints microseconds as a float: its total / calls ends in half a nanosecond here.
      QVERIFY2(std::llabs(st.torchRowNs - torch) <= 1, qPrintable(QString::number(st.torchRowNs)));
      QCOMPARE(static_cast<int>(st.torchRowCalls), calls);
    }
    const QString h = QString::fromStdString(a.headline);
    QVERIFY2(!h.contains("no row") && h.contains("one row") && h.contains(QString::number(calls) + " calls"),
             qPrintable(h));
  }

  // The bundled capture by hand, as the issue reads it: 540, 398, 259 and 419 us; no row for QK
  // MATMUL, SCALE and AV MATMUL.
  void bundledByHand() {
    const auto snap = snapshotOfFile(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/resources/softmax_8x16x1024x64.json"));
    QVERIFY(snap && snap->answer);
    const FoundingAnswer& a = *snap->answer;
    QCOMPARE(a.steps.size(), size_t{4});
    const int64_t cost[4] = {540'410, 397'628, 259'261, 418'749};
    for (size_t k = 0; k < 4; ++k) {
      QCOMPARE(a.steps[k].costNs(), cost[k]);
      QCOMPARE(a.steps[k].torchRowNs, k == 2 ? int64_t{259'261} : int64_t{-1});
    }
    QCOMPARE(a.unwrapped(), size_t{3});
  }

  // An engine run on the CPU (2 iterations, every step wrapped): each step's cost is the host time of
  // its own ops, torch's row its scope's CPU total, medians over the iterations, as the oracle reads
  // the raw events.
  void cpuEngineRun() {
    const QString trace = QStringLiteral(ATTNSCOPE_TEST_DATA "/cpu/wrap_all_2iters.json");
    const auto snap = snapshotOfFile(trace);
    QVERIFY(snap && snap->answer);
    const FoundingAnswer& a = *snap->answer;
    QVERIFY(a.cpuRun && !a.gpu && a.engineRun);
    QCOMPARE(a.iterations, 2);
    const QVector<oracle::OracleStep> truth = oracle::attentionSteps(trace);
    for (const oracle::OracleStep& o : truth) {
      const AnswerStep* s = stepNamed(a, o.name);
      QVERIFY2(s, qPrintable(o.name));
      QCOMPARE(o.ownOps.size(), 2);
      QVERIFY(s->wrapped && o.wrapped);
      QCOMPARE(s->costNs(), oracle::median(o.ownOps));
      QCOMPARE(s->torchRowNs, oracle::median(o.scope));
    }
    // What the run shows, not "CPU only".
    const QString h = QString::fromStdString(a.headline);
    QVERIFY2(h.contains("Every step is wrapped") && !h.contains("CPU only"), qPrintable(h));
  }

  // `explain --format json` on fresh engine runs on the CPU: the answer's torch_step_row column is
  // empty exactly for the unwrapped steps, and holds the wrapped step's CPU total (the median of its
  // scope's calls); the cost column is the host time of each step's own ops; the headline says which
  // steps have a row. Every figure against the oracle over the run's raw events.
  void explainJsonOnCpuRuns_data() {
    QTest::addColumn<QString>("wrap");
    QTest::addColumn<QStringList>("wrapped");
    QTest::newRow("softmax") << "softmax" << QStringList{"SOFTMAX PASS"};
    QTest::newRow("none") << "none" << QStringList{};
    QTest::newRow("qk,av") << "qk,av" << QStringList{"QK MATMUL", "AV MATMUL"};
  }
  void explainJsonOnCpuRuns() {
    QFETCH(QString, wrap);
    QFETCH(QStringList, wrapped);
    QTemporaryDir dir;
    const QString out = dir.filePath("run.json");
    const Run run =
        cli({"run", "--device", "cpu", "--wrap", wrap, "--shape", "1,4,32,32", "--iters", "7", "--out", out}, 120000);
    if (run.err.contains("built without the engine")) QSKIP("attnscope-cli was built without the engine");
    QVERIFY2(run.code == 0, qPrintable(run.err));
    const Run ex = cli({"explain", out, "--format", "json"});
    QVERIFY2(ex.code == 0, qPrintable(ex.err));
    const QJsonObject root = QJsonDocument::fromJson(ex.out.toUtf8()).object();
    const QJsonObject answer = root.value("answer").toObject();
    QVERIFY(answer.value("cpu_run").toBool());
    QJsonArray torchRow, cost;
    for (const QJsonValue& c : answer.value("columns").toArray()) {
      if (c["key"].toString() == "torch_step_row") torchRow = c["ns"].toArray();
      if (c["key"].toString() == "own_ops_host") cost = c["ns"].toArray();
    }
    QCOMPARE(torchRow.size(), 4);
    QCOMPARE(cost.size(), 4);
    const QVector<oracle::OracleStep> truth = oracle::attentionSteps(out);
    QCOMPARE(truth.size(), 4);
    const QJsonArray names = answer.value("steps").toArray();
    for (int k = 0; k < 4; ++k) {
      const oracle::OracleStep& o = truth[k];
      QCOMPARE(names[k].toString(), o.name);
      QCOMPARE(o.ownOps.size(), 7);
      QCOMPARE(o.wrapped, wrapped.contains(o.name));
      // Empty exactly for the unwrapped steps.
      QCOMPARE(torchRow[k].isNull(), !wrapped.contains(o.name));
      if (!torchRow[k].isNull()) QCOMPARE(static_cast<qint64>(torchRow[k].toDouble()), oracle::median(o.scope));
      QCOMPARE(static_cast<qint64>(cost[k].toDouble()), oracle::median(o.ownOps));
    }
    // The run's headline, first in the text: the wrapped and unwrapped steps, not "CPU only".
    const Run text = cli({"explain", out});
    const QString first = text.out.section('\n', 1, 1);
    QVERIFY2(!first.contains("CPU only"), qPrintable(first));
    QVERIFY2(first.contains(wrapped.isEmpty() ? "No step is wrapped" : "wrapped in record_function"),
             qPrintable(first));
    // (the text cuts a line at 400 characters, with "...")
    const QString headline = root.value("founding_answer").toObject().value("headline").toString();
    QVERIFY2(first.endsWith("...") ? headline.startsWith(first.chopped(3)) : headline == first, qPrintable(first));
  }

  // Generated attention blocks and training loops (seed 41): "no row" exactly for the unwrapped
  // steps, and every cost and row to the nanosecond.
  void generated() {
    Gen g(41);
    int unwrapped = 0, flagged = 0, wrapped = 0, falseRows = 0, steps = 0, costOk = 0, rowsOk = 0, rowsWanted = 0;
    QStringList misses;
    const int blocks = 400;
    for (int c = 0; c < blocks; ++c) {
      g.events.clear();
      g.gpuFree = 0;
      const bool gpu = c % 4 != 3;  // a quarter on the CPU
      const BlockTruth truth = attentionBlock(g, gpu);
      const auto snap = snapshotOfText(g.json());
      if (!snap || !snap->answer || snap->answer->steps.size() != 4) {
        misses << QString("block %1: not read as the attention block").arg(c);
        continue;
      }
      const FoundingAnswer& a = *snap->answer;
      for (size_t k = 0; k < 4; ++k) {
        const AnswerStep& s = a.steps[k];
        ++steps;
        const bool noRow = s.torchRowNs < 0;
        if (!truth.wrapped[k]) {
          ++unwrapped;
          flagged += noRow;
        } else {
          ++wrapped;
          falseRows += noRow;
          ++rowsWanted;
          // torch's row: the scope's CUDA total (its ops' work) on a GPU, its CPU total on the CPU.
          rowsOk += s.torchRowNs == (gpu ? truth.gpu[k] : truth.scope[k]);
        }
        const int64_t want = gpu ? truth.gpu[k] : truth.ownOps[k];
        if (s.costNs() == want)
          ++costOk;
        else if (misses.size() < 8)
          misses << QString("block %1 %2 (%3, %4): cost %5 ns, truth %6 ns")
                        .arg(c)
                        .arg(QString::fromStdString(s.name))
                        .arg(truth.wrapped[k] ? "wrapped" : "bare")
                        .arg(gpu ? "GPU" : "CPU")
                        .arg(s.costNs())
                        .arg(want);
      }
    }
    // Training loops: each ProfilerStep's cost includes the backward thread's work, which torch's
    // folded row misses; the headline says so exactly where that explains the gap.
    int loops = 0, loopCostOk = 0, loopSteps = 0, otherOk = 0, rowOk = 0, claimOk = 0;
    for (int c = 0; c < 100; ++c) {
      g.events.clear();
      g.gpuFree = 0;
      const int n = static_cast<int>(g.uniform(3, 8));
      const LoopTruth truth = trainingLoop(g, n);
      const auto snap = snapshotOfText(g.json());
      if (!snap || !snap->answer || snap->answer->steps.size() != static_cast<size_t>(n)) {
        misses << QString("loop %1: %2 steps read").arg(c).arg(snap && snap->answer ? snap->answer->steps.size() : 0);
        continue;
      }
      ++loops;
      const FoundingAnswer& a = *snap->answer;
      int64_t forwardTotal = 0;
      for (int64_t f : truth.forward) forwardTotal += f;
      bool stepsOk = true;
      for (int k = 0; k < n; ++k) {
        const AnswerStep& s = a.steps[static_cast<size_t>(k)];
        ++loopSteps;
        loopCostOk += s.costNs() == truth.cost[static_cast<size_t>(k)];
        otherOk += s.otherThreadsNs == truth.backward[static_cast<size_t>(k)];
        stepsOk = stepsOk && s.torchRowNs == forwardTotal / n;
      }
      rowOk += stepsOk;
      // The claim: work from other threads named exactly where it is the gap (within a tenth).
      const qint64 cost = medianOf(truth.cost), other = medianOf(truth.backward), gap = cost - forwardTotal / n;
      const bool shouldSay = gap * 20 > cost && other > 0 && std::llabs(gap - other) * 10 <= gap;
      claimOk += QString::fromStdString(a.headline).contains("other threads") == shouldSay;
    }
    const double recall = unwrapped ? 100.0 * flagged / unwrapped : 100.0;
    const double fp = wrapped ? 100.0 * falseRows / wrapped : 0.0;
    qInfo(
        "founding answer, %d attention blocks (%d steps): no-row recall %.1f%% (%d of %d unwrapped), false "
        "positives %.1f%% (%d of %d wrapped), costs exact %d of %d, torch rows exact %d of %d",
        blocks, steps, recall, flagged, unwrapped, fp, falseRows, wrapped, costOk, steps, rowsOk, rowsWanted);
    qInfo(
        "training loops %d of 100 read (%d steps): costs exact %d, other-thread work exact %d, ProfilerStep* "
        "rows exact in %d loops, the headline's other-threads claim right in %d",
        loops, loopSteps, loopCostOk, otherOk, rowOk, claimOk);
    for (const QString& m : misses) qInfo("miss: %s", qPrintable(m));
    QCOMPARE(recall, 100.0);
    QCOMPARE(fp, 0.0);
    QCOMPARE(costOk, steps);
    QCOMPARE(rowsOk, rowsWanted);
    QCOMPARE(loops, 100);
    QCOMPARE(loopCostOk, loopSteps);
    QCOMPARE(otherOk, loopSteps);
    QCOMPARE(rowOk, loops);
    QCOMPARE(claimOk, loops);
  }
};

QTEST_GUILESS_MAIN(FoundingAnswerTest)
#include "test_founding_answer.moc"
