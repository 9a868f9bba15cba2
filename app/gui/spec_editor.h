// spec_editor.h — the experiment spec as JSON text, checked as you type (core's check_spec names
// the field at fault), for what the form cannot express: sweeps, named runs, policy knobs,
// analysis settings. Apply hands the text to the panel (ExperimentPanel::load_spec keeps it all).
#pragma once
#include <QDialog>

class QPlainTextEdit;
class QLabel;
class QPushButton;
class QTimer;

namespace statescope::gui {

class SpecEditor : public QDialog {
  Q_OBJECT
 public:
  explicit SpecEditor(const QString& spec_json, QWidget* parent = nullptr);
  QString text() const;
  void set_text(const QString& json);
  bool check();  // validates now; true when the spec is valid (the Apply button follows)

  QLabel* verdict() const { return verdict_; }
  QPushButton* apply_button() const { return apply_; }

 private:
  QPlainTextEdit* edit_;
  QLabel* verdict_;
  QPushButton* apply_;
  QTimer* debounce_;
};

}  // namespace statescope::gui
