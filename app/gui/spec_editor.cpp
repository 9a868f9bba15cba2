// spec_editor.cpp — see spec_editor.h.
#include "app/gui/spec_editor.h"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include "core/experiment/experiment.h"
#include "views/theme.h"

namespace statescope::gui {

SpecEditor::SpecEditor(const QString& spec_json, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Experiment spec (JSON)"));
  resize(640, 720);
  auto* v = new QVBoxLayout(this);
  auto* help = new QLabel(tr("Everything an experiment can do, including what the form cannot show: several runs "
                             "of one kind (a sigma sweep), named runs, policy knobs (ema, fit_length, pass_conv), "
                             "analysis settings. Fields: docs/experiment-spec.md."),
                          this);
  help->setWordWrap(true);
  v->addWidget(help);
  edit_ = new QPlainTextEdit(this);
  edit_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  edit_->setLineWrapMode(QPlainTextEdit::NoWrap);
  v->addWidget(edit_, 1);
  verdict_ = new QLabel(this);
  verdict_->setWordWrap(true);
  verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(verdict_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  apply_ = buttons->addButton(tr("Apply to the panel"), QDialogButtonBox::AcceptRole);
  v->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, [this] {
    if (check()) accept();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  debounce_ = new QTimer(this);  // check a moment after typing stops, not on every key
  debounce_->setSingleShot(true);
  debounce_->setInterval(250);
  connect(debounce_, &QTimer::timeout, this, [this] { check(); });
  connect(edit_, &QPlainTextEdit::textChanged, debounce_, qOverload<>(&QTimer::start));
  set_text(spec_json);
}

QString SpecEditor::text() const { return edit_->toPlainText(); }

void SpecEditor::set_text(const QString& json) {
  edit_->setPlainText(json);
  check();
}

bool SpecEditor::check() {
  debounce_->stop();
  QString why;
  try {
    check_spec(text().toStdString(), "spec");
  } catch (const std::exception& e) {
    why = QString::fromStdString(e.what());
  }
  verdict_->setText(why.isEmpty() ? tr("valid") : why);
  const auto& t = views::theme(true);
  verdict_->setStyleSheet(QString("color: %1;").arg((why.isEmpty() ? t.valid_verdict : t.invalid_verdict).name()));
  apply_->setEnabled(why.isEmpty());
  apply_->setToolTip(why);
  return why.isEmpty();
}

}  // namespace statescope::gui
