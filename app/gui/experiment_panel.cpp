// experiment_panel.cpp — form <-> spec JSON with validation at the field.
#include "app/gui/experiment_panel.h"

#include <QCheckBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QComboBox>
#include <QFileDialog>
#include <QLabel>
#include <QStandardItemModel>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <set>

#include "app/gui/spec_editor.h"
#include "core/compute/runtime.h"

namespace statescope::gui {

using nlohmann::json;

namespace {

// "0.01, 0.1,1" -> {0.01, 0.1, 1}: numbers > 0 (or integers >= 0), each once.
bool number_list(const QString& text, bool integers, std::vector<double>& out, QString& why) {
  out.clear();
  const QStringList parts = text.split(QRegularExpression("[,\\s]+"), Qt::SkipEmptyParts);
  if (parts.isEmpty()) return why = QObject::tr("give at least one value"), false;
  for (const QString& s : parts) {
    bool ok = false;
    const double v = integers ? static_cast<double>(s.toLongLong(&ok)) : s.toDouble(&ok);
    if (!ok || (integers ? v < 0 : !(v > 0)))
      return why = QObject::tr("'%1' is not %2").arg(s, integers ? QObject::tr("a whole number >= 0") : QObject::tr("a number > 0")), false;
    if (std::find(out.begin(), out.end(), v) != out.end()) return why = QObject::tr("%1 is listed twice").arg(s), false;
    out.push_back(v);
  }
  return true;
}

QString number_text(double v) { return QString::number(v, 'g', 10); }

// Policies compared as runs: a name equal to the kind, sigma 1 left out, fit_length 0 left out.
json normalized(json pols) {
  for (auto& p : pols) {
    if (!p.is_object()) continue;
    if (p.contains("name") && p["name"] == p.value("kind", json())) p.erase("name");
    if (p.value("kind", "") == "random" && !p.contains("sigma")) p["sigma"] = 1.0;
    if (p.contains("fit_length") && p["fit_length"] == 0) p.erase("fit_length");
  }
  return pols;
}

}  // namespace

ExperimentPanel::ExperimentPanel(QWidget* parent) : QWidget(parent) {
  auto* v = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  auto path_row = [&](QLineEdit*& edit, const QString& text, const QString& tip, bool dir) {
    edit = new QLineEdit(text, this);
    edit->setToolTip(tip);
    auto* pick = new QToolButton(this);
    pick->setText("...");
    if (dir) {
      connect(pick, &QToolButton::clicked, this, [this, edit] {
        const QString p = QFileDialog::getExistingDirectory(this, tr("Choose a checkpoint directory"));
        if (!p.isEmpty()) edit->setText(p);
      });
    } else {  // data: a text file or a folder of them
      auto* menu = new QMenu(pick);
      menu->addAction(tr("Text file..."), this, [this, edit] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Choose a text file"), {}, tr("Text (*.txt);;All (*)"));
        if (!p.isEmpty()) edit->setText(p);
      });
      menu->addAction(tr("JSON Lines or token file..."), this, [this, edit] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Choose a corpus file"), {},
                                                       tr("JSON Lines (*.jsonl);;Token ids (*.u16 *.u32);;All (*)"));
        if (!p.isEmpty()) edit->setText(p);
      });
      menu->addAction(tr("Folder of .txt / .jsonl files..."), this, [this, edit] {
        const QString p = QFileDialog::getExistingDirectory(this, tr("Choose a folder of .txt / .jsonl files"));
        if (!p.isEmpty()) edit->setText(p);
      });
      menu->addAction(tr("Embedded corpus (Austen)"), this, [edit] { edit->setText("embedded"); });
      pick->setMenu(menu);
      pick->setPopupMode(QToolButton::InstantPopup);
    }
    auto* h = new QHBoxLayout;
    h->addWidget(edit);
    h->addWidget(pick);
    return h;
  };
  form->addRow(tr("Model"), path_row(model, "embedded", tr("'embedded' or a checkpoint directory"), true));
  form->addRow(tr("Data"), path_row(data, "embedded", tr("'embedded' (Austen), a folder of .txt/.jsonl, a .jsonl, .u16/.u32 token or text file; "
                                                    "tokenized once with the model's tokenizer and cached"), false));
  auto spin = [&](QSpinBox*& s, int lo, int hi, int val, const QString& tip) {
    s = new QSpinBox(this);
    s->setRange(lo, hi);
    s->setValue(val);
    s->setToolTip(tip);
    return s;
  };
  form->addRow(tr("Training context T"), spin(T, 2, 1 << 20, 32, tr("tokens; the model's T")));
  form->addRow(tr("Post-training steps"), spin(steps, 0, 1000000, 200, tr("optimizer steps per policy")));
  form->addRow(tr("Batch"), spin(batch, 1, 4096, 16, tr("sequences per step")));
  lr = new QDoubleSpinBox(this);
  lr->setDecimals(6);
  lr->setRange(0, 1);
  lr->setSingleStep(1e-4);
  lr->setValue(5e-4);
  form->addRow(tr("Learning rate"), lr);
  form->addRow(tr("Seed"), spin(seed, 0, 1 << 30, 0, tr("data order, noise, initialisation")));
  device = new QComboBox(this);
  device->addItem("cpu");
  device->addItem("cuda");
  bool gpu = true;
  QString why;
  try {
    resolve_device("cuda");
  } catch (const std::exception& e) {
    gpu = false;
    why = QString::fromStdString(e.what());
  }
  if (!gpu) {  // shown, not hidden: the reason is in the tooltip
    auto* item = qobject_cast<QStandardItemModel*>(device->model())->item(1);
    item->setEnabled(false);
    item->setToolTip(why);
  }
  device->setToolTip(gpu ? tr("where models train and run") : tr("where models train and run; cuda: ") + why);
  precision = new QComboBox(this);
  precision->addItems({"fp32", "bf16"});
  precision->setToolTip(tr("bf16: mixed precision (bf16 matmuls and convolutions; SSM state, A, dt and loss in fp32)"));
  scan = new QComboBox(this);
  scan->addItem(tr("ATen scan"), "aten");
  scan->addItem(tr("fused kernels"), "fused");
  scan->setToolTip(tr("the SSM scan on a GPU: ATen's chunked scan, or statescope's CUDA kernels (forward and "
                      "backward, state norms on the fly). CPU runs always use ATen."));
  auto sync_scan = [this] {  // the kernels only exist on a GPU: say so instead of pretending
    const bool cuda = device->currentIndex() == 1;
    scan->setEnabled(cuda);
    if (!cuda) scan->setCurrentIndex(0);
  };
  connect(device, &QComboBox::currentIndexChanged, this, sync_scan);
  sync_scan();
  auto* dev_row = new QHBoxLayout;
  dev_row->addWidget(device);
  dev_row->addWidget(precision);
  dev_row->addWidget(scan);
  form->addRow(tr("Device"), dev_row);
  v->addLayout(form);

  auto* pol = new QGroupBox(tr("Initial-state policies (one run each)"), this);
  auto* pv = new QFormLayout(pol);
  baseline = new QCheckBox(tr("baseline (no post-training)"), pol);
  p_zero = new QCheckBox(tr("zero (control)"), pol);
  p_random = new QCheckBox(tr("random noise, sigma"), pol);
  sigmas = new QLineEdit("1", pol);
  sigmas->setToolTip(tr("std of the initial SSM state entries; several values separated by commas make one run "
                        "each (random_<sigma>)"));
  p_fitted = new QCheckBox(tr("fitted noise, fit at L (0 = T)"), pol);
  fit_lengths = new QLineEdit("0", pol);
  fit_lengths->setToolTip(tr("tokens: 0 = the paper's fit (final states of the T-token training windows, EMA); "
                             "L = fit to final states of zero-state windows of L tokens before step 1, kept fixed. "
                             "Several values separated by commas make one run each (fitted_<L>)"));
  p_passing = new QCheckBox(tr("state passing"), pol);
  p_tbtt = new QCheckBox(tr("TBTT"), pol);
  for (auto* c : {baseline, p_zero, p_random, p_fitted, p_passing, p_tbtt}) c->setChecked(true);
  pv->addRow(baseline);
  pv->addRow(p_zero);
  pv->addRow(p_random, sigmas);
  pv->addRow(p_fitted, fit_lengths);
  pv->addRow(p_passing);
  pv->addRow(p_tbtt);
  policy_note = new QLabel(pol);
  policy_note->setWordWrap(true);
  policy_note->setStyleSheet("color: #d9a441;");
  policy_note->setVisible(false);
  pv->addRow(policy_note);
  v->addWidget(pol);

  auto* ev = new QGroupBox(tr("Evaluation and analyses"), this);
  auto* ef = new QFormLayout(ev);
  ef->addRow(tr("Length (tokens)"), spin(eval_length, 2, 1 << 24, 2048, tr("positions scored (e.g. 64T)")));
  ef->addRow(tr("Sequences"), spin(eval_sequences, 1, 100000, 32, tr("validation sequences averaged")));
  a_effrem = new QCheckBox(tr("Effective Remembrance"), ev);
  a_states = new QCheckBox(tr("State distributions"), ev);
  a_passkey = new QCheckBox(tr("Passkey grid (zero-shot)"), ev);
  a_babi = new QCheckBox(tr("bAbI questions (zero-shot)"), ev);
  a_copying = new QCheckBox(tr("Copying (fresh model per policy)"), ev);
  for (auto* c : {a_effrem, a_states, a_passkey, a_babi, a_copying}) ef->addRow(c);
  v->addWidget(ev);
  save_models = new QLineEdit(this);
  save_models->setPlaceholderText(tr("(optional) directory to save post-trained models"));
  v->addWidget(save_models);
  run_button = new QPushButton(tr("Run"), this);
  run_button->setToolTip(tr("Run the experiment (Ctrl+R)"));
  edit_button = new QPushButton(tr("Edit as JSON..."), this);
  edit_button->setToolTip(tr("The whole spec as text, checked as you type: sweeps, named runs, policy knobs, "
                             "analysis settings (Ctrl+J)"));
  connect(edit_button, &QPushButton::clicked, this, &ExperimentPanel::edit_json);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(edit_button);
  buttons->addWidget(run_button, 1);
  v->addLayout(buttons);
  v->addStretch(1);
  connect(run_button, &QPushButton::clicked, this, &ExperimentPanel::run_requested);
  for (auto* e : {model, data, save_models}) connect(e, &QLineEdit::textChanged, this, [this] { validate(); });
  for (auto* s : {T, steps, batch, eval_length, eval_sequences})
    connect(s, qOverload<int>(&QSpinBox::valueChanged), this, [this] { validate(); });
  connect(lr, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this] { validate(); });
  for (auto* e : {sigmas, fit_lengths}) connect(e, &QLineEdit::textChanged, this, [this] { validate(); });
  for (auto* c : {baseline, p_zero, p_random, p_fitted, p_passing, p_tbtt})
    connect(c, &QCheckBox::toggled, this, [this] { validate(); });
  for (auto* c : {p_zero, p_random, p_fitted, p_passing, p_tbtt})
    connect(c, &QCheckBox::toggled, this, &ExperimentPanel::policies_edited);
  for (auto* e : {sigmas, fit_lengths}) connect(e, &QLineEdit::textChanged, this, &ExperimentPanel::policies_edited);
  validate();
}

json ExperimentPanel::form_policies() const {
  json pols = json::array();
  std::vector<double> v;
  QString why;
  if (p_zero->isChecked()) pols.push_back({{"kind", "zero"}});
  if (p_random->isChecked() && number_list(sigmas->text(), false, v, why))
    for (double s : v) {
      json p{{"kind", "random"}, {"sigma", s}};
      if (v.size() > 1) p["name"] = "random_" + number_text(s).toStdString();
      pols.push_back(p);
    }
  if (p_fitted->isChecked() && number_list(fit_lengths->text(), true, v, why))
    for (double L : v) {
      json p{{"kind", "fitted"}};
      if (L > 0) p["fit_length"] = static_cast<int64_t>(L);
      if (v.size() > 1 && L > 0) p["name"] = "fitted_" + number_text(L).toStdString();
      pols.push_back(p);
    }
  if (p_passing->isChecked()) pols.push_back({{"kind", "passing"}});
  if (p_tbtt->isChecked()) pols.push_back({{"kind", "tbtt"}});
  return pols;
}

void ExperimentPanel::edit_json() {
  QString text = spec_json();  // empty while a field is invalid: start from what was loaded
  if (text.isEmpty()) text = base_.isEmpty() ? QString("{}") : base_;
  SpecEditor dlg(text, this);
  if (dlg.exec() == QDialog::Accepted) load_spec(dlg.text());
}

void ExperimentPanel::policies_edited() {  // the user takes over: the form's policies from now on
  if (loading_ || !keep_policies_) return;
  keep_policies_ = false;
  policy_note->setVisible(false);
}

QStringList ExperimentPanel::problems() const {
  QStringList p;
  auto bad = [&](QWidget* w, const QString& why) {
    if (!why.isEmpty()) p << why;
    w->setStyleSheet(why.isEmpty() ? QString() : "background-color: #a33; color: white;");
    w->setToolTip(why);
    return why.isEmpty();
  };
  const QString m = model->text().trimmed();
  bad(model, m.isEmpty() ? tr("Model: empty (use 'embedded' or a directory)")
             : (m != "embedded" && !QFileInfo(QDir(m).filePath("config.json")).exists())
                 ? tr("Model: %1 has no config.json").arg(m)
                 : QString());
  const QString d = data->text().trimmed();
  bad(data, d.isEmpty() ? tr("Data: empty") : (d != "embedded" && !QFileInfo::exists(d)) ? tr("Data: %1 does not exist").arg(d) : QString());
  bad(lr, lr->value() > 0 ? QString() : tr("Learning rate must be > 0"));
  QString why;
  std::vector<double> vals;
  bad(sigmas, !p_random->isChecked() || number_list(sigmas->text(), false, vals, why) ? QString() : tr("sigma: ") + why);
  bad(fit_lengths, !p_fitted->isChecked() || number_list(fit_lengths->text(), true, vals, why) ? QString()
                                                                                              : tr("fit length: ") + why);
  bad(eval_length, eval_length->value() > T->value() ? QString() : tr("Evaluation length must exceed T to see past it"));
  const bool any = baseline->isChecked() || p_zero->isChecked() || p_random->isChecked() || p_fitted->isChecked() ||
                   p_passing->isChecked() || p_tbtt->isChecked();
  bad(baseline, any ? QString() : tr("Choose at least one run (baseline or a policy)"));
  return p;
}

void ExperimentPanel::validate() {
  const auto p = problems();
  run_button->setEnabled(p.isEmpty());
  run_button->setToolTip(p.isEmpty() ? tr("Run the experiment (Ctrl+R)") : p.join("\n"));
}

QString ExperimentPanel::spec_json() const {
  if (!problems().isEmpty()) return {};
  const json base = base_.isEmpty() ? json::object() : json::parse(base_.toStdString(), nullptr, false);
  json j = base.is_object() ? base : json::object();  // what the form cannot show stays as loaded
  j["model"] = model->text().trimmed().toStdString();
  j["data"] = data->text().trimmed().toStdString();
  j["T"] = T->value();
  j["seed"] = seed->value();
  j["baseline"] = baseline->isChecked();
  json pt = j.value("posttrain", json::object());
  pt["steps"] = steps->value();
  pt["batch"] = batch->value();
  pt["lr"] = lr->value();
  if (!pt.contains("warmup")) pt["warmup"] = 10;
  if (!pt.contains("min_lr_ratio")) pt["min_lr_ratio"] = 0.1;
  j["posttrain"] = pt;
  j["policies"] = keep_policies_ ? base.value("policies", json::array()) : form_policies();
  json ev = j.value("eval", json::object());
  ev["length"] = eval_length->value();
  ev["sequences"] = eval_sequences->value();
  if (!ev.contains("segment")) ev["segment"] = 512;
  if (!ev.contains("batch")) ev["batch"] = 8;
  j["eval"] = ev;
  // Analyses: a loaded one keeps its settings; one ticked here gets the defaults.
  const json had = j.value("analyses", json::object());
  json a = json::object();
  const int t = T->value();
  auto pick = [&](QCheckBox* c, const char* k, const json& dflt) {
    if (c->isChecked()) a[k] = had.contains(k) ? had[k] : dflt;
  };
  pick(a_effrem, "effrem", {{"T", {t, 4 * t, 16 * t}}, {"points", 16}, {"sequences", 16}});
  pick(a_states, "states", {{"sequences", 16}});
  pick(a_passkey, "passkey", json::object());
  pick(a_babi, "babi", json::object());
  pick(a_copying, "copying", json::object());
  if (!a.empty()) j["analyses"] = a;
  else j.erase("analyses");
  j["device"] = device->currentText().toStdString();
  j["precision"] = precision->currentText().toStdString();
  j["scan"] = scan->currentData().toString().toStdString();
  if (!save_models->text().trimmed().isEmpty()) j["save_models"] = save_models->text().trimmed().toStdString();
  else j.erase("save_models");
  // The comment describes the loaded experiment; once the form changes any of it, it would mislead.
  if (j.contains("comment")) {
    json a2 = j, b2 = base;
    for (auto* x : {&a2, &b2})
      for (const char* k : {"device", "precision", "scan"}) x->erase(k);
    if (a2 != b2) j.erase("comment");
  }
  return QString::fromStdString(j.dump(2));
}

void ExperimentPanel::load_spec(const QString& text) {
  json j = json::parse(text.toStdString(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return;
  loading_ = true;
  base_ = text;
  model->setText(QString::fromStdString(j.value("model", std::string("embedded"))));
  data->setText(QString::fromStdString(j.value("data", std::string("embedded"))));
  if (j.contains("T")) T->setValue(j["T"].get<int>());
  if (j.contains("device") && j["device"].is_string()) {  // "cuda:0" shows as cuda
    const auto d = QString::fromStdString(j["device"].get<std::string>());
    device->setCurrentIndex(d.startsWith("cuda") ? 1 : 0);
  }
  precision->setCurrentIndex(j.value("precision", std::string("fp32")) == "bf16" ? 1 : 0);
  if (scan->isEnabled()) scan->setCurrentIndex(j.value("scan", std::string("aten")) == "fused" ? 1 : 0);
  seed->setValue(j.value("seed", 0));
  baseline->setChecked(j.value("baseline", true));
  const json pt = j.value("posttrain", json::object());
  steps->setValue(pt.value("steps", 200));
  batch->setValue(pt.value("batch", 16));
  lr->setValue(pt.value("lr", 5e-4));
  for (auto* c : {p_zero, p_random, p_fitted, p_passing, p_tbtt}) c->setChecked(false);
  QStringList sig, fit, runs;
  const json loaded = j.value("policies", json::array());
  for (auto& p : loaded) {
    const std::string k = p.value("kind", "");
    runs << QString::fromStdString(p.value("name", k));
    if (k == "zero") p_zero->setChecked(true);
    if (k == "random" && p.value("sigma", json(1.0)).is_number()) p_random->setChecked(true), sig << number_text(p.value("sigma", 1.0));
    if (k == "fitted" && p.value("fit_length", json(0)).is_number())
      p_fitted->setChecked(true), fit << number_text(p.value("fit_length", 0.0));
    if (k == "passing") p_passing->setChecked(true);
    if (k == "tbtt") p_tbtt->setChecked(true);
  }
  sigmas->setText(sig.isEmpty() ? "1" : sig.join(", "));
  fit_lengths->setText(fit.isEmpty() ? "0" : fit.join(", "));
  // What the form shows is exactly the loaded runs (names, knobs, order), or the loaded ones stand.
  keep_policies_ = normalized(loaded) != normalized(form_policies());
  policy_note->setText(tr("Runs as loaded: %1. Changing a policy here replaces them with the form's.").arg(runs.join(", ")));
  policy_note->setVisible(keep_policies_);
  const json ev = j.value("eval", json::object());
  eval_length->setValue(ev.value("length", 64 * T->value()));
  eval_sequences->setValue(ev.value("sequences", 32));
  const json a = j.value("analyses", json::object());
  a_effrem->setChecked(a.contains("effrem"));
  a_states->setChecked(a.contains("states"));
  a_passkey->setChecked(a.contains("passkey"));
  a_babi->setChecked(a.contains("babi"));
  a_copying->setChecked(a.contains("copying"));
  loading_ = false;
  validate();
}

}  // namespace statescope::gui
