// File > Capture Running Job…: this host's Python processes with torch loaded, each marked ready for
// a capture (started with KINETO_USE_DAEMON) or not (with the fix); pick one, or several ranks of one
// job, choose optimizer steps or a duration, and capture it now (core/capture) with progress and
// Cancel. The capture runs off the UI thread; its traces are placed like the CLI's, and `captured`
// hands the file (or the job's folder) to the window, which opens it explained (or in the Ranks window).
#pragma once

#include <QDialog>
#include <QString>
#include <memory>

class QCheckBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QTableWidget;
class QTimer;

namespace attnscope::ui {

struct CaptureShared;
struct CaptureListing;

class CaptureDialog : public QDialog {
  Q_OBJECT

 public:
  // `outDir`: where the captures are written (the user can change it).
  explicit CaptureDialog(const QString& outDir, QWidget* parent = nullptr);
  ~CaptureDialog() override;

  void refresh();  // lists the processes again (off the UI thread)
  bool capturing() const { return running_; }

 signals:
  // `summary`: what the capture says of itself (the ranks' start step, a second attempt), one line.
  void captured(const QString& path, bool folder, const QString& summary);
  void listed();  // the process list is shown (tests wait for it)

 protected:
  void reject() override;  // Esc / Close: cancels a capture in flight first

 private:
  void startCapture();
  void cancelCapture();
  void showProgress();
  void updateButtons();
  QString selectionText() const;

  QTableWidget* table_ = nullptr;
  QLabel* fix_ = nullptr;
  QRadioButton* bySteps_ = nullptr;
  QRadioButton* byTime_ = nullptr;
  QSpinBox* steps_ = nullptr;
  QSpinBox* duration_ = nullptr;
  QSpinBox* roundup_ = nullptr;
  QCheckBox* shapes_ = nullptr;
  QCheckBox* stack_ = nullptr;
  QLineEdit* outDir_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QPushButton* refresh_ = nullptr;
  QPushButton* capture_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QTimer* timer_ = nullptr;
  std::shared_ptr<CaptureShared> shared_;
  std::unique_ptr<CaptureListing> listing_;
  bool running_ = false;
};

}  // namespace attnscope::ui
