// The Runs dock: every run of the session and every trace opened (RunsModel)
// with Show, Compare, Save and Use settings. It emits what the user asked
// for; the window does it.
#pragma once

#include <QWidget>

class QPushButton;
class QTableView;

namespace attnscope::ui {

class RunsModel;

class RunsDock : public QWidget {
  Q_OBJECT

 public:
  explicit RunsDock(QWidget* parent = nullptr);

  RunsModel* model() const { return model_; }
  QTableView* view() const { return view_; }
  int currentRow() const;
  // The selected rows, in list order.
  QList<int> selectedRows() const;
  // Selects `row` without reporting it as the user's choice.
  void selectQuietly(int row);

 signals:
  void showRequested(int row);
  void compareRequested();  // the selection holds the runs
  void saveRequested();
  void useSettingsRequested(int row);
  void selectionChanged();

 private:
  RunsModel* model_;
  QTableView* view_;
};

}  // namespace attnscope::ui
