#include "ui/run/run_panel.h"
#include "ui/common/text.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QEvent>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QResizeEvent>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolButton>
#include <QVBoxLayout>

#include "core/run/timing_methods.h"

namespace attnscope::ui {
namespace {

void setItemEnabled(QComboBox* box, int index, bool on, const QString& tip) {
  auto* model = qobject_cast<QStandardItemModel*>(box->model());
  if (!model) return;
  QStandardItem* item = model->item(index);
  item->setEnabled(on);
  item->setToolTip(tip);
}

}  // namespace

RunPanel::RunPanel(QWidget* parent) : QWidget(parent), runner_(new EngineRunner(this)) {
  setObjectName(QStringLiteral("runPanel"));
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(6, 6, 6, 6);
  auto* workloadRow = new QHBoxLayout;
  workloadRow->setSpacing(4);
  workload_ = new QComboBox(this);
  workload_->setObjectName(QStringLiteral("workload"));
  workload_->addItem(tr("Attention block (the engine)"));
  workload_->addItem(tr("Your script (torch.profiler, no code change)"));
  workload_->setToolTip(
      tr("The attention block: our LibTorch engine with every timing method. Your script: your own training "
         "script, unmodified, under torch.profiler, with the same toggles (attnscope-cli record)"));
  auto* workloadLabel = new QLabel(tr("&Workload:"), this);
  workloadLabel->setBuddy(workload_);
  workloadRow->addWidget(workloadLabel);
  workloadRow->addWidget(workload_, 1);
  outer->addLayout(workloadRow);
  columns_ = new QBoxLayout(QBoxLayout::TopToBottom);
  columns_->setSpacing(10);
  outer->addLayout(columns_);
  outer->addStretch(1);
  // Three sections side by side in a wide dock, stacked in a narrow one; the first two are the
  // engine's, or the script's form in their place.
  engineA_ = new QWidget(this);
  engineB_ = new QWidget(this);
  scriptForm_ = new ScriptForm(this);
  scriptForm_->hide();
  auto* colA = new QVBoxLayout(engineA_);
  auto* colB = new QVBoxLayout(engineB_);
  auto* colC = new QVBoxLayout;
  for (auto* c : {colA, colB}) c->setContentsMargins(0, 0, 0, 0);
  for (auto* c : {colA, colB, colC}) c->setSpacing(6);
  columns_->addWidget(engineA_, 1);
  columns_->addWidget(engineB_, 1);
  columns_->addWidget(scriptForm_, 2);
  columns_->addLayout(colC, 1);
  QVBoxLayout* top = colA;

  availability_ = new QLabel(this);
  availability_->setObjectName(QStringLiteral("availability"));
  availability_->setWordWrap(true);
  availability_->setText(tr("Checking what the engine can do here…"));
  top->addWidget(availability_);

  auto* presets = new QHBoxLayout;
  presets->setSpacing(4);
  auto* presetLabel = new QLabel(tr("Preset:"), this);
  auto* preset = new QComboBox(this);
  presetLabel->setBuddy(preset);
  preset->setObjectName(QStringLiteral("preset"));
  preset->addItem(tr("Choose…"));
  preset->addItem(tr("Only SOFTMAX PASS wrapped, no sync"), static_cast<int>(RunPreset::WrapSoftmaxOnly));
  preset->addItem(tr("Nothing wrapped, sync at the end"), static_cast<int>(RunPreset::SyncAtEnd));
  preset->addItem(tr("Everything wrapped"), static_cast<int>(RunPreset::WrapEveryStep));
  preset->setItemData(1,
                      tr("SOFTMAX PASS and the whole block (MULTIHEAD_ATTENTION_FULL) in "
                         "record_function, no sync, scale by a device tensor: the shared H200 "
                         "captures' softmax_* configuration"),
                      Qt::ToolTipRole);
  preset->setItemData(2, tr("Only the whole block wrapped, torch.cuda.synchronize() after it"), Qt::ToolTipRole);
  preset->setItemData(3, tr("All four steps and the whole block wrapped, no sync"), Qt::ToolTipRole);
  preset->setToolTip(
      tr("Sets wrapping, sync and scale; shape, dtype, device, warm-up, iterations "
         "and timing methods stay as they are"));
  connect(preset, &QComboBox::activated, this, [this, preset](int i) {
    if (i > 0) applyPreset(static_cast<RunPreset>(preset->itemData(i).toInt()));
    preset->setCurrentIndex(0);
  });
  presets->addWidget(presetLabel);
  presets->addWidget(preset, 1);
  top->addLayout(presets);

  auto* wrapBox = new QGroupBox(tr("record_function around"), this);
  auto* wrapGrid = new QGridLayout(wrapBox);
  wrapGrid->setContentsMargins(6, 4, 6, 4);
  wrapGrid->setVerticalSpacing(2);
  for (int k = 0; k < kStepCount; ++k) {
    wrap_[k] = new QCheckBox(qs(kStepNames[k]), wrapBox);
    wrap_[k]->setObjectName(QStringLiteral("wrap_") + qs(kStepKeys[k]));
    wrapGrid->addWidget(wrap_[k], k / 2, k % 2);
  }
  wrapFull_ = new QCheckBox(tr("whole block"), wrapBox);
  wrapFull_->setToolTip(tr("One record_function(\"%1\") around the four steps").arg(qs(kFullScopeName)));
  wrapFull_->setObjectName(QStringLiteral("wrap_full"));
  wrapGrid->addWidget(wrapFull_, 2, 0, 1, 2);
  top->addWidget(wrapBox);
  top->addStretch(1);
  top = colB;

  auto* form = new QFormLayout;
  form->setContentsMargins(0, 0, 0, 0);
  form->setVerticalSpacing(4);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  sync_ = new QComboBox(this);
  sync_->setObjectName(QStringLiteral("sync"));
  sync_->addItem(tr("none"), static_cast<int>(SyncMode::None));
  sync_->addItem(tr("after the block"), static_cast<int>(SyncMode::End));
  sync_->addItem(tr("after each step"), static_cast<int>(SyncMode::Step));
  sync_->addItem(tr("CUDA_LAUNCH_BLOCKING=1"), static_cast<int>(SyncMode::Blocking));
  sync_->setToolTip(
      tr("after the block: torch.cuda.synchronize() after AV MATMUL; after each step: "
         "at the end of every step (inside its scope); CUDA_LAUNCH_BLOCKING: every "
         "launch waits for its kernel"));
  form->addRow(tr("S&ync:"), sync_);
  scale_ = new QComboBox(this);
  scale_->setObjectName(QStringLiteral("scale"));
  scale_->addItem(tr("device tensor (hidden sync)"), static_cast<int>(ScaleMode::DeviceTensor));
  scale_->addItem(tr("host scalar"), static_cast<int>(ScaleMode::HostScalar));
  scale_->setToolTip(
      tr("qk / torch.sqrt(torch.tensor(d, device=cuda)) hides a host-to-device copy "
         "and a cudaStreamSynchronize; a host scalar does not"));
  form->addRow(tr("Sc&ale:"), scale_);

  auto* shapeRow = new QHBoxLayout;
  shapeRow->setSpacing(2);
  const char* dims[4] = {"B", "H", "S", "D"};
  for (int i = 0; i < 4; ++i) {
    // Each dimension named beside its box (B 8, H 16, S 1024, D 64).
    auto* dimLabel = new QLabel(QLatin1String(dims[i]), this);
    shapeRow->addWidget(dimLabel);
    shape_[i] = new QSpinBox(this);
    dimLabel->setBuddy(shape_[i]);
    shape_[i]->setObjectName(QStringLiteral("shape_") + QLatin1String(dims[i]));
    shape_[i]->setRange(1, 1 << 20);
    shape_[i]->setToolTip(tr("%1 (batch, heads, sequence, head dim)").arg(QLatin1String(dims[i])));
    shape_[i]->setButtonSymbols(QAbstractSpinBox::NoButtons);
    shape_[i]->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("00000")));
    shapeRow->addWidget(shape_[i], 1);
  }
  auto* shapeLabel = new QLabel(tr("Shape:"), this);
  shapeLabel->setBuddy(shape_[0]);
  form->addRow(shapeLabel, shapeRow);
  dtype_ = new QComboBox(this);
  dtype_->setObjectName(QStringLiteral("dtype"));
  for (RunDType d : {RunDType::Float32, RunDType::Float16, RunDType::BFloat16})
    dtype_->addItem(qs(dtypeName(d)), static_cast<int>(d));
  device_ = new QComboBox(this);
  device_->setObjectName(QStringLiteral("device"));
  device_->addItem(tr("auto"), static_cast<int>(RunDevice::Auto));
  device_->addItem(tr("cuda"), static_cast<int>(RunDevice::Cuda));
  device_->addItem(tr("cpu"), static_cast<int>(RunDevice::Cpu));
  device_->setToolTip(tr("auto: the GPU when there is one, else the CPU"));
  auto* dd = new QHBoxLayout;
  dd->setSpacing(4);
  dd->addWidget(dtype_, 1);
  auto* deviceLabel = new QLabel(tr("on device"), this);
  deviceLabel->setBuddy(device_);
  dd->addWidget(deviceLabel);
  dd->addWidget(device_, 1);
  auto* dtypeLabel = new QLabel(tr("Dtype:"), this);
  dtypeLabel->setBuddy(dtype_);
  form->addRow(dtypeLabel, dd);
  warmup_ = new QSpinBox(this);
  warmup_->setObjectName(QStringLiteral("warmup"));
  warmup_->setRange(0, 100000);
  warmup_->setToolTip(tr("Untimed calls first; 0 = cold (the first call loads cuBLAS, ~100 ms)"));
  iters_ = new QSpinBox(this);
  iters_->setObjectName(QStringLiteral("iters"));
  iters_->setRange(1, 100000);
  auto* wi = new QHBoxLayout;
  wi->setSpacing(4);
  wi->addWidget(warmup_, 1);
  auto* itersLabel = new QLabel(tr("iterations"), this);
  itersLabel->setBuddy(iters_);
  wi->addWidget(itersLabel);
  wi->addWidget(iters_, 1);
  auto* warmupLabel = new QLabel(tr("Warm-up:"), this);
  warmupLabel->setBuddy(warmup_);
  form->addRow(warmupLabel, wi);
  ranks_ = new QSpinBox(this);
  ranks_->setObjectName(QStringLiteral("ranks"));
  ranks_->setRange(1, 64);
  ranks_->setToolTip(
      tr("Processes, one per rank: each runs its share of the heads, then the ranks' outputs are all-gathered at "
         "the end of AV MATMUL. Each rank writes rank-R.json in one folder (File > Open Job reads it); 1 = one "
         "process"));
  backend_ = new QComboBox(this);
  backend_->setObjectName(QStringLiteral("backend"));
  backend_->addItem(tr("gloo (CPU)"), static_cast<int>(RankBackend::Gloo));
  backend_->addItem(tr("nccl (a GPU per rank)"), static_cast<int>(RankBackend::Nccl));
  auto* rk = new QHBoxLayout;
  rk->setSpacing(4);
  rk->addWidget(ranks_, 1);
  auto* backendLabel = new QLabel(tr("over"), this);
  backendLabel->setBuddy(backend_);
  rk->addWidget(backendLabel);
  rk->addWidget(backend_, 2);
  auto* ranksLabel = new QLabel(tr("Ran&ks:"), this);  // its field is a row: the mnemonic needs a buddy
  ranksLabel->setBuddy(ranks_);
  form->addRow(ranksLabel, rk);
  top->addLayout(form);

  auto* timingBox = new QGroupBox(tr("Timing methods"), this);
  auto* tg = new QGridLayout(timingBox);
  tg->setContentsMargins(6, 4, 6, 4);
  tg->setVerticalSpacing(2);
  for (int m = 0; m < kTimingMethodCount; ++m) {
    timing_[m] = new QCheckBox(qs(timingName(static_cast<TimingMethod>(m))), timingBox);
    timing_[m]->setObjectName(QStringLiteral("timing_") + qs(timingName(static_cast<TimingMethod>(m))));
    timing_[m]->setToolTip(qs(timingInfo(static_cast<TimingMethod>(m)).help));
    tg->addWidget(timing_[m], m / 3, m % 3);
  }
  top->addWidget(timingBox);
  shapes_ = new QCheckBox(tr("Record input shapes"), this);
  shapes_->setObjectName(QStringLiteral("recordShapes"));
  shapes_->setToolTip(
      tr("Records every operator's input shapes in the trace (and in torch.profiler's pass), as record_shapes=True "
         "does. Off by default, as in torch.profiler: reading every operator's inputs adds to the time of the steps "
         "being measured."));
  top->addWidget(shapes_);
  top->addStretch(1);
  top = colC;

  estimate_ = new QLabel(this);
  estimate_->setObjectName(QStringLiteral("estimate"));
  estimate_->setWordWrap(true);
  top->addWidget(estimate_);

  preview_ = new QPlainTextEdit(this);
  preview_->setObjectName(QStringLiteral("commandPreview"));
  preview_->setReadOnly(true);
  preview_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  preview_->setToolTip(tr("The exact command Run starts"));
  preview_->setFixedHeight(preview_->fontMetrics().lineSpacing() * 4 + 10);
  top->addWidget(preview_);

  auto* buttons = new QHBoxLayout;
  run_ = new QPushButton(tr("&Run"), this);
  run_->setObjectName(QStringLiteral("run"));
  run_->setDefault(true);
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setObjectName(QStringLiteral("cancel"));
  cancel_->setEnabled(false);
  progress_ = new QProgressBar(this);
  progress_->setObjectName(QStringLiteral("progress"));
  progress_->setRange(0, 100);
  progress_->setValue(0);
  progress_->setTextVisible(true);
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  buttons->addStretch(1);
  top->addLayout(buttons);
  top->addWidget(progress_);

  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("runStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  top->addWidget(status_);
  stderr_ = new QPlainTextEdit(this);
  stderr_->setObjectName(QStringLiteral("stderr"));
  stderr_->setReadOnly(true);
  stderr_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  stderr_->setPlaceholderText(tr("The engine's error output"));
  stderr_->setMaximumHeight(stderr_->fontMetrics().lineSpacing() * 8 + 10);
  stderr_->hide();
  top->addWidget(stderr_);
  top->addStretch(1);

  auto changed = [this] {
    if (loading_) return;
    updatePreview();
    emit configChanged();
  };
  for (auto* c : wrap_) connect(c, &QCheckBox::toggled, this, changed);
  connect(wrapFull_, &QCheckBox::toggled, this, changed);
  connect(shapes_, &QCheckBox::toggled, this, changed);
  for (auto* c : timing_) {
    connect(c, &QCheckBox::toggled, this, [this, changed] {
      updateTimingBoxes();
      changed();
    });
  }
  connect(device_, &QComboBox::currentIndexChanged, this, [this, changed] {
    updateTimingBoxes();
    changed();
  });
  for (QComboBox* b : {sync_, scale_, dtype_, backend_}) connect(b, &QComboBox::currentIndexChanged, this, changed);
  for (QSpinBox* s : {shape_[0], shape_[1], shape_[2], shape_[3], warmup_, iters_, ranks_})
    connect(s, &QSpinBox::valueChanged, this, changed);

  connect(scriptForm_, &ScriptForm::changed, this, changed);
  connect(workload_, &QComboBox::currentIndexChanged, this, [this, changed](int i) {
    engineA_->setVisible(i == 0);
    engineB_->setVisible(i == 0);
    scriptForm_->setVisible(i == 1);
    changed();
  });
  connect(run_, &QPushButton::clicked, this, [this] { startRun(); });
  connect(cancel_, &QPushButton::clicked, this, &RunPanel::cancelRun);
  connect(runner_, &EngineRunner::progress, this, [this](int pct, const QString& msg) {
    progress_->setValue(pct);
    status_->setText(msg);
  });
  connect(runner_, &EngineRunner::finished, this, &RunPanel::onFinished);
  connect(runner_, &EngineRunner::availabilityChanged, this, &RunPanel::setAvailability);

  setConfig(RunConfig{});
}

bool RunPanel::event(QEvent* e) {
  if (e->type() == QEvent::ParentChange && parentWidget()) parentWidget()->installEventFilter(this);
  return QWidget::event(e);
}

bool RunPanel::eventFilter(QObject* watched, QEvent* e) {
  if (watched == parentWidget() && e->type() == QEvent::Resize) updateColumns();
  return QWidget::eventFilter(watched, e);
}

void RunPanel::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  if (!parentWidget()) updateColumns();
}

void RunPanel::updateColumns() {
  // The width we may use: the scroll area's viewport when in one.
  const int avail = parentWidget() ? parentWidget()->width() : width();
  const auto dir = avail >= kWideWidth ? QBoxLayout::LeftToRight : QBoxLayout::TopToBottom;
  if (columns_->direction() != dir) columns_->setDirection(dir);
}

bool RunPanel::scriptWorkload() const { return workload_->currentIndex() == 1; }
void RunPanel::setScriptWorkload(bool script) { workload_->setCurrentIndex(script ? 1 : 0); }
RecordConfig RunPanel::recordConfig() const { return scriptForm_->config(); }

RunConfig RunPanel::config() const {
  RunConfig c;
  for (int k = 0; k < kStepCount; ++k) c.wrap[static_cast<size_t>(k)] = wrap_[k]->isChecked();
  c.wrapFull = wrapFull_->isChecked();
  c.sync = static_cast<SyncMode>(sync_->currentData().toInt());
  c.scale = static_cast<ScaleMode>(scale_->currentData().toInt());
  for (int i = 0; i < 4; ++i) c.shape[static_cast<size_t>(i)] = shape_[i]->value();
  c.dtype = static_cast<RunDType>(dtype_->currentData().toInt());
  c.device = static_cast<RunDevice>(device_->currentData().toInt());
  c.warmup = warmup_->value();
  c.iters = iters_->value();
  for (int m = 0; m < kTimingMethodCount; ++m) c.timing[static_cast<size_t>(m)] = timing_[m]->isChecked();
  c.recordShapes = shapes_->isChecked();
  c.ranks = ranks_->value();
  c.backend = static_cast<RankBackend>(backend_->currentData().toInt());
  return c;
}

void RunPanel::setConfig(const RunConfig& c) {
  loading_ = true;
  for (int k = 0; k < kStepCount; ++k) wrap_[k]->setChecked(c.wrap[static_cast<size_t>(k)]);
  wrapFull_->setChecked(c.wrapFull);
  sync_->setCurrentIndex(sync_->findData(static_cast<int>(c.sync)));
  scale_->setCurrentIndex(scale_->findData(static_cast<int>(c.scale)));
  for (int i = 0; i < 4; ++i)
    shape_[i]->setValue(static_cast<int>(std::min<int64_t>(c.shape[static_cast<size_t>(i)], 1 << 20)));
  dtype_->setCurrentIndex(dtype_->findData(static_cast<int>(c.dtype)));
  device_->setCurrentIndex(device_->findData(static_cast<int>(c.device)));
  warmup_->setValue(c.warmup);
  iters_->setValue(c.iters);
  shapes_->setChecked(c.recordShapes);
  ranks_->setValue(c.ranks);
  backend_->setCurrentIndex(backend_->findData(static_cast<int>(c.backend)));
  bool any = false;
  for (int m = 0; m < kTimingMethodCount; ++m) any |= c.timing[static_cast<size_t>(m)];
  for (int m = 0; m < kTimingMethodCount; ++m) timing_[m]->setChecked(any ? c.timing[static_cast<size_t>(m)] : m == 0);
  loading_ = false;
  updateTimingBoxes();
  updatePreview();
  emit configChanged();
}

RunConfig RunPanel::presetConfig(RunPreset p, const RunConfig& base) {
  RunConfig c = base;
  c.scale = ScaleMode::DeviceTensor;
  switch (p) {
    case RunPreset::WrapSoftmaxOnly:
      // The shared captures' "softmax" configuration (capture/kineto_traces.py):
      // MULTIHEAD_ATTENTION_FULL around the block, SOFTMAX PASS wrapped, no sync.
      c.wrap = {false, false, true, false};
      c.wrapFull = true;
      c.sync = SyncMode::None;
      break;
    case RunPreset::SyncAtEnd:
      c.wrap = {false, false, false, false};
      c.wrapFull = true;
      c.sync = SyncMode::End;
      break;
    case RunPreset::WrapEveryStep:
      c.wrap = {true, true, true, true};
      c.wrapFull = true;
      c.sync = SyncMode::None;
      break;
  }
  return c;
}

void RunPanel::applyPreset(RunPreset p) { setConfig(presetConfig(p, config())); }

QString RunPanel::nextOutputPath() const {
  QString dir = outDir_;
  if (dir.isEmpty() && makeDir_) dir = makeDir_();
  if (dir.isEmpty()) dir = QDir::tempPath();
  return QDir(dir).filePath(QStringLiteral("run-%1-%2.json")
                                .arg(runCounter_ + 1)
                                .arg(QDateTime::currentDateTime().toString(QStringLiteral("HHmmss"))));
}

QStringList RunPanel::commandArguments(const QString& outPath) const {
  if (scriptWorkload()) return EngineRunner::recordArguments(recordConfig(), outPath);
  return EngineRunner::runArguments(config(), outPath);
}

void RunPanel::updatePreview() {
  if (scriptWorkload()) {
    const RecordConfig r = recordConfig();
    preview_->setPlainText(EngineRunner::commandLine(
        runner_->program(),
        commandArguments(r.nproc > 1 ? QStringLiteral("<run folder>") : QStringLiteral("<run file>.json"))));
    const QString problem = scriptForm_->problem();
    const int first = r.wait + r.warmup;
    estimate_->setText(problem.isEmpty()
                           ? tr("Traces ProfilerStep#%1..#%2 of your script%3, then ends it.")
                                 .arg(first)
                                 .arg(first + r.active - 1)
                                 .arg(r.baseline > 0
                                          ? tr(" and times %1 more steps without the profiler").arg(2 * r.baseline)
                                          : QString())
                           : problem);
    updateEnabled();
    return;
  }
  const RunConfig c = config();
  preview_->setPlainText(
      EngineRunner::commandLine(runner_->program(), commandArguments(QStringLiteral("<run file>.json"))));
  const double mib = static_cast<double>(estimateWorkloadBytes(c)) / (1024.0 * 1024.0);
  estimate_->setText(tr("Needs about %1 MiB on the device; %2 timed call(s) per method.")
                         .arg(QLocale().toString(mib, 'f', mib < 10 ? 2 : 0))
                         .arg(c.iters));
  updateEnabled();
}

void RunPanel::setAvailability(const EngineAvailability& a) {
  avail_ = a;
  QString text;
  QString style;
  if (!a.probed) {
    text = tr("Checking what the engine can do here…");
  } else if (!a.engineBuilt) {
    text = tr("Runs unavailable: %1").arg(a.reason);
    style =
        QStringLiteral("QLabel { color: palette(window-text); border-left: 3px solid #c62828; padding-left: 6px; }");
  } else if (!a.gpu) {
    QString reason = a.reason;
    if (!reason.isEmpty()) reason[0] = reason[0].toUpper();
    text = tr("Engine ready. %1.").arg(reason);
    style = QStringLiteral("QLabel { border-left: 3px solid #b26a00; padding-left: 6px; }");
  } else {
    text = tr("Engine ready: GPU and CPU runs.");
    style = QStringLiteral("QLabel { border-left: 3px solid #2e7d32; padding-left: 6px; }");
  }
  availability_->setText(text);
  availability_->setToolTip(a.program);
  availability_->setStyleSheet(style);
  const bool cudaOk = !a.probed || a.gpu;
  setItemEnabled(device_, device_->findData(static_cast<int>(RunDevice::Cuda)), cudaOk, cudaOk ? QString() : a.reason);
  if (!cudaOk && device_->currentData().toInt() == static_cast<int>(RunDevice::Cuda))
    device_->setCurrentIndex(device_->findData(static_cast<int>(RunDevice::Auto)));
  updateTimingBoxes();
  // The boxes above change with their signals blocked: the command shown must follow them.
  updatePreview();
}

bool RunPanel::runsOnCpu() const {
  const auto d = static_cast<RunDevice>(device_->currentData().toInt());
  return d == RunDevice::Cpu || (d == RunDevice::Auto && avail_.probed && !avail_.gpu);
}

void RunPanel::updateTimingBoxes() {
  const bool cpu = runsOnCpu();
  for (int m = 0; m < kTimingMethodCount; ++m) {
    if (cpu && timingNeedsGpu(static_cast<TimingMethod>(m)) && timing_[m]->isChecked()) {
      const QSignalBlocker quiet(timing_[m]);
      timing_[m]->setChecked(false);
    }
  }
  int on = 0;
  for (auto* t : timing_) on += t->isChecked();
  if (on == 0) {
    const QSignalBlocker quiet(timing_[static_cast<int>(TimingMethod::Host)]);
    timing_[static_cast<int>(TimingMethod::Host)]->setChecked(true);
    on = 1;
  }
  const bool running = runner_->isRunning();
  for (int m = 0; m < kTimingMethodCount; ++m) {
    const bool gpuOnly = cpu && timingNeedsGpu(static_cast<TimingMethod>(m));
    timing_[m]->setEnabled(!running && !gpuOnly && !(on == 1 && timing_[m]->isChecked()));
    timing_[m]->setToolTip(
        gpuOnly
            ? tr("Needs a GPU, and this run is on the CPU. %1").arg(qs(timingInfo(static_cast<TimingMethod>(m)).help))
            : qs(timingInfo(static_cast<TimingMethod>(m)).help));
  }
}

void RunPanel::updateEnabled() {
  const bool running = runner_->isRunning();
  if (scriptWorkload()) {
    // A script needs attnscope-cli and a Python with torch (which record checks), not the engine.
    const QString problem = scriptForm_->problem();
    const bool usable = (!avail_.probed || avail_.cliFound) && problem.isEmpty();
    run_->setEnabled(!running && usable);
    run_->setToolTip(usable ? tr("Record your script with these settings (F5)")
                            : (problem.isEmpty() ? avail_.reason : problem));
    cancel_->setEnabled(running);
    return;
  }
  const bool usable = !avail_.probed || avail_.engineBuilt;
  run_->setEnabled(!running && usable);
  run_->setToolTip(usable ? tr("Run the engine with these settings (F5)") : avail_.reason);
  cancel_->setEnabled(running);
}

bool RunPanel::startRun() {
  if (runner_->isRunning()) return false;
  if (scriptWorkload()) {
    const QString problem = scriptForm_->problem();
    if (!problem.isEmpty()) {
      status_->setText(tr("Cannot record: %1").arg(problem));
      return false;
    }
    const RecordConfig r = recordConfig();
    QString out = nextOutputPath();
    if (r.nproc > 1) out.chop(5);  // a folder of rank-R.json
    ++runCounter_;
    stderr_->clear();
    stderr_->hide();
    progress_->setValue(0);
    if (!runner_->startRecord(r, out)) return false;
    setEditorsEnabled(false);
    updateEnabled();
    emit recordStarted(qs(recordSummary(r)), out);
    return true;
  }
  if (avail_.probed && !avail_.engineBuilt) {
    status_->setText(tr("Cannot run: %1").arg(avail_.reason));
    return false;
  }
  running_ = config();
  QString out = nextOutputPath();
  if (running_.ranks > 1) out.chop(5);  // a folder of rank-R.json
  ++runCounter_;
  stderr_->clear();
  stderr_->hide();
  progress_->setValue(0);
  if (!runner_->start(running_, out)) return false;
  setEditorsEnabled(false);
  updateEnabled();
  emit runStarted(running_, out);
  return true;
}

void RunPanel::noteMissingCollection(const QString& text) {
  if (text.isEmpty() || status_->text().contains(text)) return;
  status_->setText(status_->text() + QLatin1Char('\n') + text);
  status_->setStyleSheet(QStringLiteral("QLabel { border-left: 3px solid #b26a00; padding-left: 6px; }"));
}

void RunPanel::cancelRun() {
  if (!runner_->isRunning()) return;
  status_->setText(tr("Cancelling…"));
  runner_->cancel();
}

void RunPanel::setEditorsEnabled(bool on) {
  for (auto* c : findChildren<QWidget*>())
    if (c != cancel_ && c != progress_ && c != status_ && c != stderr_ && c != preview_ && c != availability_ &&
        (qobject_cast<QCheckBox*>(c) || qobject_cast<QComboBox*>(c) || qobject_cast<QSpinBox*>(c) ||
         qobject_cast<QLineEdit*>(c) || (qobject_cast<QPushButton*>(c) && c != run_)))
      c->setEnabled(on);
}

void RunPanel::onFinished(const RunOutcome& o) {
  setEditorsEnabled(true);
  scriptForm_->updateEnabled();
  setAvailability(avail_);  // re-disable what is unavailable (the timing boxes too)
  progress_->setValue(o.status == RunStatus::Done ? 100 : 0);
  status_->setText(
      o.message +
      (o.status == RunStatus::Done
           ? QString()
           : tr(" (exit code %1, after %2 s)").arg(o.exitCode).arg(QString::number(o.elapsedMs / 1000.0, 'f', 1))));
  status_->setStyleSheet(o.status == RunStatus::Done
                             ? QString()
                             : QStringLiteral("QLabel { border-left: 3px solid #c62828; padding-left: 6px; }"));
  if (o.status != RunStatus::Done && !o.stderrText.trimmed().isEmpty()) {
    stderr_->setPlainText(o.stderrText.trimmed());
    stderr_->show();
  }
  updateEnabled();
  emit runFinished(running_, o);
}

}  // namespace attnscope::ui
