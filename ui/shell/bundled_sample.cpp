#include "ui/shell/bundled_sample.h"

#include <QFile>

// Resources of a static library are only linked in when referenced.
static void initUiResources() { Q_INIT_RESOURCE(resources); }

namespace attnscope::ui {

QString bundledSamplePath() { return QStringLiteral(":/traces/softmax_8x16x1024x64.json"); }

QByteArray bundledSampleJson() {
  static const bool once = (initUiResources(), true);
  (void)once;
  QFile f(bundledSamplePath());
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll();
}

QString bundledSampleNote() {
  return QStringLiteral(
      "Bundled sample: a real torch.profiler capture of multi-head attention 8x16x1024x64 on an "
      "NVIDIA H200 (SOFTMAX PASS wrapped in record_function). Open your own trace with "
      "File > Open.");
}

}  // namespace attnscope::ui
