#include "ui/run/script_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>

#include "ui/common/text.h"

namespace attnscope::ui {

std::optional<QStringList> splitArguments(const QString& line) {
  QStringList out;
  QString word;
  bool inWord = false;
  QChar quote;
  for (qsizetype i = 0; i < line.size(); ++i) {
    const QChar c = line[i];
    if (!quote.isNull()) {
      if (c == quote) {
        quote = QChar();
      } else if (c == QLatin1Char('\\') && quote == QLatin1Char('"') && i + 1 < line.size() &&
                 (line[i + 1] == QLatin1Char('"') || line[i + 1] == QLatin1Char('\\'))) {
        word += line[++i];
      } else {
        word += c;
      }
    } else if (c == QLatin1Char('\'') || c == QLatin1Char('"')) {
      quote = c;
      inWord = true;
    } else if (c == QLatin1Char('\\') && i + 1 < line.size()) {
      word += line[++i];
      inWord = true;
    } else if (c.isSpace()) {
      if (inWord) out << word;
      word.clear();
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (!quote.isNull()) return std::nullopt;
  if (inWord) out << word;
  return out;
}

namespace {

QString joinArguments(const std::vector<std::string>& args) {
  QStringList parts;
  for (const std::string& a : args) {
    QString s = qs(a);
    if (s.isEmpty() || s.contains(QRegularExpression(QStringLiteral("[\\s'\"\\\\$`]")))) {
      s.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
      s = QLatin1Char('\'') + s + QLatin1Char('\'');
    }
    parts << s;
  }
  return parts.join(QLatin1Char(' '));
}

}  // namespace

ScriptForm::ScriptForm(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("scriptForm"));
  auto* form = new QFormLayout(this);
  form->setContentsMargins(0, 0, 0, 0);
  form->setVerticalSpacing(4);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

  // A row whose field is a layout: its label's mnemonic goes to `buddy`.
  auto rowLabel = [this](const QString& text, QWidget* buddy) {
    auto* l = new QLabel(text, this);
    l->setBuddy(buddy);
    return l;
  };
  auto withButton = [this](QLineEdit* edit, const QString& name, auto slot) {
    auto* row = new QHBoxLayout;
    row->setSpacing(4);
    row->addWidget(edit, 1);
    auto* b = new QPushButton(tr("Browse…"), this);
    b->setObjectName(name);
    connect(b, &QPushButton::clicked, this, slot);
    row->addWidget(b);
    return row;
  };
  script_ = new QLineEdit(this);
  script_->setObjectName(QStringLiteral("scriptPath"));
  script_->setPlaceholderText(tr("train.py"));
  script_->setToolTip(tr("Your training script, run unmodified (relative paths are from the working folder)"));
  form->addRow(rowLabel(tr("S&cript:"), script_),
               withButton(script_, QStringLiteral("browseScript"), &ScriptForm::browseScript));
  args_ = new QLineEdit(this);
  args_->setObjectName(QStringLiteral("scriptArgs"));
  args_->setPlaceholderText(tr("--epochs 1 --batch-size 32"));
  args_->setToolTip(tr("The script's own arguments, quoted as in a shell"));
  form->addRow(tr("Arguments:"), args_);
  python_ = new QLineEdit(this);
  python_->setObjectName(QStringLiteral("scriptPython"));
  python_->setPlaceholderText(QStringLiteral("python3"));
  python_->setToolTip(
      tr("The interpreter of the environment your script uses (it must import torch), e.g. "
         "/home/me/venv/bin/python; empty: python3 on PATH"));
  form->addRow(tr("Pytho&n:"), python_);
  cwd_ = new QLineEdit(this);
  cwd_->setObjectName(QStringLiteral("scriptCwd"));
  cwd_->setPlaceholderText(tr("the script's folder"));
  form->addRow(rowLabel(tr("Wor&king folder:"), cwd_),
               withButton(cwd_, QStringLiteral("browseCwd"), &ScriptForm::browseFolder));

  wrap_ = new QComboBox(this);
  wrap_->setObjectName(QStringLiteral("scriptWrap"));
  wrap_->addItem(tr("none"), QStringLiteral("none"));
  wrap_->addItem(tr("each model's top-level children"), QStringLiteral("children"));
  wrap_->addItem(tr("modules whose name matches…"), QStringLiteral("regex"));
  wrap_->setToolTip(
      tr("record_function around modules, named by their qualified name (encoder, encoder.layers.0.attn): the "
         "GPU time shows under those names, and it is the same whether they are wrapped or not"));
  wrapRegex_ = new QLineEdit(this);
  wrapRegex_->setObjectName(QStringLiteral("scriptWrapRegex"));
  wrapRegex_->setPlaceholderText(QStringLiteral("attn|mlp"));
  auto* wrapRow = new QHBoxLayout;
  wrapRow->setSpacing(4);
  auto* regexLabel = new QLabel(tr("matching"), this);
  regexLabel->setBuddy(wrapRegex_);
  wrapRow->addWidget(wrap_, 1);
  wrapRow->addWidget(regexLabel);
  wrapRow->addWidget(wrapRegex_, 1);
  form->addRow(rowLabel(tr("Wrap &modules:"), wrap_), wrapRow);
  sync_ = new QComboBox(this);
  sync_->setObjectName(QStringLiteral("scriptSync"));
  sync_->addItem(tr("none"), static_cast<int>(RecordSync::None));
  sync_->addItem(tr("at each step's end"), static_cast<int>(RecordSync::Step));
  sync_->addItem(tr("CUDA_LAUNCH_BLOCKING=1"), static_cast<int>(RecordSync::Blocking));
  sync_->setToolTip(
      tr("at each step's end: a device synchronize in 'attnscope::step_sync'; CUDA_LAUNCH_BLOCKING: "
         "every launch waits for its kernel"));
  form->addRow(tr("S&ync:"), sync_);
  stepFn_ = new QLineEdit(this);
  stepFn_->setObjectName(QStringLiteral("scriptStepFn"));
  stepFn_->setPlaceholderText(tr("optimizer.step (or module:function)"));
  stepFn_->setToolTip(
      tr("What a step is: empty, each optimizer.step(); or calls of a function, as "
         "__main__:train_step or mypkg.loop:step"));
  form->addRow(tr("Steps:"), stepFn_);

  auto spin = [this](const char* name, int lo, int hi, const QString& tip) {
    auto* s = new QSpinBox(this);
    s->setObjectName(QLatin1String(name));
    s->setRange(lo, hi);
    s->setToolTip(tip);
    return s;
  };
  wait_ = spin("scriptWait", 1, 100000, tr("Steps skipped first (step 0 holds the script's set-up)"));
  warmup_ = spin("scriptWarmup", 1, 100000, tr("Steps the profiler warms up on, not kept"));
  active_ = spin("scriptActive", 1, 100000, tr("Steps traced"));
  auto* sched = new QHBoxLayout;
  sched->setSpacing(4);
  for (auto [label, box] : {std::pair{tr("wait"), wait_}, {tr("warm-up"), warmup_}, {tr("active"), active_}}) {
    auto* l = new QLabel(label, this);
    l->setBuddy(box);
    sched->addWidget(l);
    sched->addWidget(box, 1);
  }
  form->addRow(rowLabel(tr("Sc&hedule:"), wait_), sched);
  baseline_ = spin("scriptBaseline", 0, 100000,
                   tr("After the trace, time this many steps without the profiler (then as many with a sync at "
                      "each step's end), so the explanation says what the profiler added; 0: off"));
  nproc_ = spin("scriptNproc", 1, 256,
                tr("Processes of one host, as torchrun --nproc-per-node starts them: one trace per rank"));
  auto* more = new QHBoxLayout;
  more->setSpacing(4);
  more->addWidget(baseline_, 1);
  more->addWidget(new QLabel(tr("steps without the profiler;"), this));
  more->addWidget(nproc_, 1);
  auto* ranksLabel = new QLabel(tr("rank(s)"), this);
  ranksLabel->setBuddy(nproc_);
  more->addWidget(ranksLabel);
  form->addRow(rowLabel(tr("&Baseline:"), baseline_), more);
  shapes_ = new QCheckBox(tr("shapes"), this);
  shapes_->setObjectName(QStringLiteral("scriptShapes"));
  memory_ = new QCheckBox(tr("memory"), this);
  memory_->setObjectName(QStringLiteral("scriptMemory"));
  stack_ = new QCheckBox(tr("stacks"), this);
  stack_->setObjectName(QStringLiteral("scriptStack"));
  auto* opts = new QHBoxLayout;
  for (auto* c : {shapes_, memory_, stack_}) opts->addWidget(c);
  opts->addStretch(1);
  form->addRow(rowLabel(tr("Record:"), shapes_), opts);

  auto changedNow = [this] {
    if (loading_) return;
    updateEnabled();
    emit changed();
  };
  for (QLineEdit* e : {script_, args_, python_, cwd_, wrapRegex_, stepFn_})
    connect(e, &QLineEdit::textChanged, this, changedNow);
  for (QComboBox* b : {wrap_, sync_}) connect(b, &QComboBox::currentIndexChanged, this, changedNow);
  for (QSpinBox* s : {wait_, warmup_, active_, baseline_, nproc_})
    connect(s, &QSpinBox::valueChanged, this, changedNow);
  for (QCheckBox* c : {shapes_, memory_, stack_}) connect(c, &QCheckBox::toggled, this, changedNow);
  setConfig(RecordConfig{});
}

void ScriptForm::browseScript() {
  const QString f = QFileDialog::getOpenFileName(this, tr("Your training script"), cwd_->text(),
                                                 tr("Python scripts (*.py);;All files (*)"));
  if (!f.isEmpty()) script_->setText(f);
}

void ScriptForm::browseFolder() {
  const QString d = QFileDialog::getExistingDirectory(this, tr("Working folder"), cwd_->text());
  if (!d.isEmpty()) cwd_->setText(d);
}

void ScriptForm::updateEnabled() { wrapRegex_->setEnabled(wrap_->currentData().toString() == QLatin1String("regex")); }

RecordConfig ScriptForm::config() const {
  RecordConfig c;
  c.script = script_->text().trimmed().toStdString();
  for (const QString& a : splitArguments(args_->text()).value_or(QStringList())) c.args.push_back(a.toStdString());
  c.python = python_->text().trimmed().toStdString();
  c.cwd = cwd_->text().trimmed().toStdString();
  if (c.cwd.empty() && !c.script.empty() && c.script.front() == '/')
    c.cwd = QFileInfo(script_->text().trimmed()).absolutePath().toStdString();
  const QString wrap = wrap_->currentData().toString();
  c.wrapModules = wrap == QLatin1String("regex") ? wrapRegex_->text().toStdString() : wrap.toStdString();
  c.sync = static_cast<RecordSync>(sync_->currentData().toInt());
  c.stepFn = stepFn_->text().trimmed().toStdString();
  c.wait = wait_->value();
  c.warmup = warmup_->value();
  c.active = active_->value();
  c.baseline = baseline_->value();
  c.nproc = nproc_->value();
  c.recordShapes = shapes_->isChecked();
  c.profileMemory = memory_->isChecked();
  c.withStack = stack_->isChecked();
  return c;
}

void ScriptForm::setConfig(const RecordConfig& c) {
  loading_ = true;
  script_->setText(qs(c.script));
  args_->setText(joinArguments(c.args));
  python_->setText(qs(c.python));
  cwd_->setText(qs(c.cwd));
  if (c.wrapModules == "none" || c.wrapModules == "children") {
    wrap_->setCurrentIndex(wrap_->findData(qs(c.wrapModules)));
  } else {
    wrap_->setCurrentIndex(wrap_->findData(QStringLiteral("regex")));
    wrapRegex_->setText(qs(c.wrapModules));
  }
  sync_->setCurrentIndex(sync_->findData(static_cast<int>(c.sync)));
  stepFn_->setText(qs(c.stepFn));
  wait_->setValue(c.wait);
  warmup_->setValue(c.warmup);
  active_->setValue(c.active);
  baseline_->setValue(c.baseline);
  nproc_->setValue(c.nproc);
  shapes_->setChecked(c.recordShapes);
  memory_->setChecked(c.profileMemory);
  stack_->setChecked(c.withStack);
  loading_ = false;
  updateEnabled();
  emit changed();
}

QString ScriptForm::problem() const {
  if (script_->text().trimmed().isEmpty()) return tr("Choose your script first.");
  if (!splitArguments(args_->text())) return tr("The arguments leave a quote open.");
  const RecordConfig c = config();
  RecordConfig parsed;
  if (auto err = parseRecordArgs(toRecordArgs(c), &parsed)) return qs(*err);
  return {};
}

}  // namespace attnscope::ui
