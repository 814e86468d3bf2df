// The "attnscope" metadata object our engine writes into its traces (see
// EventStore::Meta::attnscopeJson), read with QJsonDocument: the run's
// configuration, the four steps' host windows, and each timing method's
// per-step numbers. Traces from torch.profiler have none.
#pragma once

#include <QString>
#include <QStringList>
#include <QVector>
#include <optional>
#include <vector>

#include "core/explain/explanation.h"
#include "core/run/run_config.h"

namespace attnscope::ui {

struct TimingSeries {
  QString method;    // cupti, events, host, host-sync, torch
  QString measures;  // what the number means, in words
  QString process;   // parent / child
  // per iteration, per step (kStepCount), nanoseconds; -1 when not measured
  QVector<QVector<qint64>> steps;
  // the mean over iterations per step (-1 when no iteration has a value)
  QVector<double> meanNs() const;
};

struct EngineMeta {
  QString args;                     // canonical options ("--device cpu --shape ...")
  std::optional<RunConfig> config;  // args parsed back (nullopt if they do not parse)
  QString device;                   // "cpu" or the GPU name
  QStringList stepNames;            // the four steps, in order
  QVector<bool> wrapped;
  std::vector<EngineStep> windows;  // every step of every iteration, in time order
  QVector<TimingSeries> timing;
  QStringList notes;
  QString cupti;  // "ok" or why not
};

// nullopt when `json` (the raw metadata object) is empty or not an object.
std::optional<EngineMeta> parseEngineMeta(const std::string& json);

// "" when CUPTI collected the run's GPU activity; else, in one sentence,
// which collection is missing, why, and what the trace still holds.
QString missingCollection(const EngineMeta& m);

}  // namespace attnscope::ui
