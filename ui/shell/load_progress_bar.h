// The status bar's part while a trace loads: what is being done, how far
// (bytes of the file, events read, time left), and a Cancel button (or Esc)
// that stops the load and keeps the trace already shown. It polls the
// reader's LoadProgress on a timer: the loading thread never waits on it.
#pragma once

#include <QElapsedTimer>
#include <QString>
#include <QWidget>
#include <memory>

#include "core/read/trace_reader.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;

namespace attnscope::ui {

class LoadProgressBar : public QWidget {
  Q_OBJECT

 public:
  explicit LoadProgressBar(QWidget* parent = nullptr);

  void start(const QString& path, std::shared_ptr<const LoadProgress> progress);
  void stop();
  // The line shown now ("Reading big.json: 1.2 of 10.0 GB · 3.1 M events · about 0:42 left").
  QString text() const;

 signals:
  void cancelRequested();

 private:
  void refresh();

  QLabel* label_;
  QProgressBar* bar_;
  QPushButton* cancel_;
  QTimer* timer_;
  QElapsedTimer clock_;
  QString name_;
  std::shared_ptr<const LoadProgress> progress_;
};

}  // namespace attnscope::ui
