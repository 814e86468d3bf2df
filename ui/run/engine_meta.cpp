#include "ui/run/engine_meta.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

namespace attnscope::ui {

QVector<double> TimingSeries::meanNs() const {
  QVector<double> out(kStepCount, -1.0);
  for (int k = 0; k < kStepCount; ++k) {
    double sum = 0;
    int n = 0;
    for (const auto& it : steps) {
      if (k < it.size() && it[k] >= 0) {
        sum += static_cast<double>(it[k]);
        ++n;
      }
    }
    if (n > 0) out[k] = sum / n;
  }
  return out;
}

std::optional<EngineMeta> parseEngineMeta(const std::string& json) {
  if (json.empty()) return std::nullopt;
  QJsonParseError err{};
  const QJsonDocument doc = QJsonDocument::fromJson(QByteArray(json.data(), static_cast<qsizetype>(json.size())), &err);
  if (err.error != QJsonParseError::NoError || !doc.isObject()) return std::nullopt;
  const QJsonObject root = doc.object();
  EngineMeta m;
  const QJsonObject config = root.value(QStringLiteral("config")).toObject();
  m.args = config.value(QStringLiteral("args")).toString();
  if (!m.args.isEmpty()) {
    std::vector<std::string> args;
    for (const QString& a : m.args.split(QLatin1Char(' '), Qt::SkipEmptyParts)) args.push_back(a.toStdString());
    RunConfig c;
    if (!parseRunArgs(args, &c)) m.config = c;
  }
  const QJsonValue dev = root.value(QStringLiteral("device"));
  m.device = dev.isObject() ? dev.toObject().value(QStringLiteral("name")).toString() : dev.toString();
  for (const QJsonValue sv : root.value(QStringLiteral("steps")).toArray()) {
    const QJsonObject s = sv.toObject();
    const QString name = s.value(QStringLiteral("name")).toString();
    const bool wrapped = s.value(QStringLiteral("wrapped")).toBool();
    m.stepNames << name;
    m.wrapped << wrapped;
    for (const QJsonValue iv : s.value(QStringLiteral("iterations")).toArray()) {
      const QJsonObject it = iv.toObject();
      const int i = it.value(QStringLiteral("iteration")).toInt();
      EngineStep w;
      w.name = (i == 0 ? name : QStringLiteral("%1 #%2").arg(name).arg(i + 1)).toStdString();
      w.wrapped = wrapped;
      w.hostStartNs = static_cast<int64_t>(it.value(QStringLiteral("host_start_ns")).toDouble());
      w.hostEndNs = static_cast<int64_t>(it.value(QStringLiteral("host_end_ns")).toDouble());
      m.windows.push_back(std::move(w));
    }
  }
  std::stable_sort(m.windows.begin(), m.windows.end(),
                   [](const EngineStep& a, const EngineStep& b) { return a.hostStartNs < b.hostStartNs; });
  const QJsonObject timing = root.value(QStringLiteral("timing")).toObject();
  // Keep the engine's method order (cupti, events, host, host-sync, torch).
  for (int t = 0; t < kTimingMethodCount; ++t) {
    const QString method = QString::fromLatin1(timingName(static_cast<TimingMethod>(t)).data());
    if (!timing.contains(method)) continue;
    const QJsonObject o = timing.value(method).toObject();
    TimingSeries s;
    s.method = method;
    s.measures = o.value(QStringLiteral("measures")).toString();
    s.process = o.value(QStringLiteral("process")).toString();
    for (const QJsonValue row : o.value(QStringLiteral("steps")).toArray()) {
      QVector<qint64> r;
      for (const QJsonValue x : row.toArray()) r << static_cast<qint64>(x.toDouble(-1));
      s.steps << r;
    }
    m.timing << s;
  }
  for (const QJsonValue n : root.value(QStringLiteral("notes")).toArray()) m.notes << n.toString();
  m.cupti = root.value(QStringLiteral("collection")).toObject().value(QStringLiteral("cupti")).toString();
  return m;
}

QString missingCollection(const EngineMeta& m) {
  if (m.cupti.isEmpty() || m.cupti == QLatin1String("ok")) return {};
  QString why = m.cupti;
  if (why.startsWith(QLatin1String("unavailable: "))) why = why.mid(13);
  return QObject::tr("CUPTI unavailable: %1; GPU kernels, copies and memsets were not collected.").arg(why);
}

}  // namespace attnscope::ui
