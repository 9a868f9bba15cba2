// experiment_panel.cpp — form <-> spec JSON with validation at the field.
#include "app/gui/experiment_panel.h"
#include "core/store/analysis_record.h"

#include <thread>

#include <QAction>
#include <cmath>

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
#include <filesystem>
#include <functional>
#include <set>

#include "app/gui/spec_editor.h"
#include "core/base/error.h"
#include "core/compute/runtime.h"
#include "core/experiment/capability_check.h"  // LibTorch-free: what an architecture can take
#include "core/experiment/spec.h"
#include "core/model/model_config.h"  // LibTorch-free: the architecture from config.json
#include "core/model/model_registry.h"
#include "core/model/cached_models.h"  // the Hugging Face cache, LibTorch-free
#include "core/base/hub_cache.h"
#include "views/theme.h"

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

namespace {

// A spin box with its range, value and tooltip; `s` is set to it.
QSpinBox* make_spin(QWidget* owner, QSpinBox*& s, int lo, int hi, int val, const QString& tip) {
  s = new QSpinBox(owner);
  s->setRange(lo, hi);
  s->setValue(val);
  s->setToolTip(tip);
  return s;
}

// A path field with a "..." button: a directory chooser (models) or a menu of corpus kinds (data).
QHBoxLayout* path_row(QWidget* owner, QLineEdit*& edit, const QString& text, const QString& tip, bool dir) {
  edit = new QLineEdit(text, owner);
  edit->setToolTip(tip);
  auto* pick = new QToolButton(owner);
  pick->setText("...");
  QLineEdit* e = edit;
  if (dir) {  // models: the committed ones, the Hugging Face cache's (read when the menu opens), a folder
    pick->setObjectName("model_pick");
    auto* menu = new QMenu(pick);
    QObject::connect(menu, &QMenu::aboutToShow, owner, [owner, e, menu] {
      menu->clear();
      menu->addSection(QObject::tr("Committed"));
      for (const auto& committed : committed_models()) {
        const QString name = QString::fromStdString(committed);
        menu->addAction(name, owner, [e, name] { e->setText(name); });
      }
      const HubCache cache = hub_cache();
      menu->addSection(QObject::tr("Hugging Face cache"));
      const auto cached = list_cached_models();
      for (const auto& m : cached) {
        auto* a = menu->addAction(QString::fromStdString(describe_cached_model(m)), owner,
                                  [e, id = QString::fromStdString(m.id)] { e->setText(id); });
        a->setData(QString::fromStdString(m.id));
        a->setToolTip(QString::fromStdString(m.dir));
      }
      if (cached.empty()) {
        auto* none = menu->addAction(QObject::tr("no Mamba-family model in %1").arg(QString::fromStdString(cache.dir)));
        none->setEnabled(false);
        none->setToolTip(QObject::tr("download one with: huggingface-cli download state-spaces/mamba2-130m "
                                     "(statescope never downloads); %1 chose this folder").arg(QString::fromStdString(cache.source)));
      }
      menu->addSeparator();
      menu->addAction(QObject::tr("Checkpoint directory..."), owner, [owner, e] {
        const QString p = QFileDialog::getExistingDirectory(owner, QObject::tr("Choose a checkpoint directory"));
        if (!p.isEmpty()) e->setText(p);
      });
    });
    menu->setToolTipsVisible(true);
    pick->setMenu(menu);
    pick->setPopupMode(QToolButton::InstantPopup);
  } else {  // data: a text file or a folder of them
    auto* menu = new QMenu(pick);
    menu->addAction(QObject::tr("Text file..."), owner, [owner, e] {
      const QString p = QFileDialog::getOpenFileName(owner, QObject::tr("Choose a text file"), {},
                                                     QObject::tr("Text (*.txt);;All (*)"));
      if (!p.isEmpty()) e->setText(p);
    });
    menu->addAction(QObject::tr("JSON Lines, Parquet or token file..."), owner, [owner, e] {
      const QString p = QFileDialog::getOpenFileName(
          owner, QObject::tr("Choose a corpus file"), {},
          QObject::tr("JSON Lines (*.jsonl *.jsonl.gz *.jsonl.xz *.jsonl.zst);;Parquet (*.parquet);;Token ids (*.u16 *.u32);;All (*)"));
      if (!p.isEmpty()) e->setText(p);
    });
    menu->addAction(QObject::tr("Folder of .txt / .jsonl / .parquet files..."), owner, [owner, e] {
      const QString p = QFileDialog::getExistingDirectory(owner, QObject::tr("Choose a folder of .txt / .jsonl / .parquet files"));
      if (!p.isEmpty()) e->setText(p);
    });
    auto* hub = menu->addMenu(QObject::tr("Hugging Face dataset (local cache)"));
    hub->setObjectName("dataset_pick");
    QObject::connect(hub, &QMenu::aboutToShow, owner, [owner, e, hub] {
      hub->clear();
      for (const auto& [id, dir] : list_hub_repos(HubRepoType::Dataset))
        hub->addAction(QString::fromStdString(id), owner, [e, id = QString::fromStdString(id)] { e->setText(id); })
            ->setData(QString::fromStdString(id));
      if (hub->actions().isEmpty())
        hub->addAction(QObject::tr("none in %1").arg(QString::fromStdString(hub_cache().dir)))->setEnabled(false);
    });
    menu->addAction(QObject::tr("Embedded corpus (Austen)"), owner, [e] { e->setText("embedded"); });
    pick->setMenu(menu);
    pick->setPopupMode(QToolButton::InstantPopup);
  }
  auto* h = new QHBoxLayout;
  h->addWidget(edit);
  h->addWidget(pick);
  return h;
}

constexpr int kShownT = 32;  // the embedded model's T, shown until a spec says (a spec's T = 0: the model's record)

}  // namespace

ExperimentPanel::ExperimentPanel(QWidget* parent) : QWidget(parent) {
  const ExperimentSpec d;  // every default comes from core's spec
  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(0, 0, 0, 0);
  form_ = new QWidget(this);
  auto* fv = new QVBoxLayout(form_);
  auto* form = new QFormLayout;
  build_model_rows(form, d);
  build_training_rows(form, d);
  build_device_row(form);
  fv->addLayout(form);
  fv->addWidget(build_policies(d));
  fv->addWidget(build_interventions());
  fv->addWidget(build_evaluation(d));
  save_models = new QLineEdit(form_);
  save_models->setPlaceholderText(tr("(optional) directory to save post-trained models"));
  fv->addWidget(save_models);
  v->addWidget(form_);
  button_bar_ = new QWidget(this);
  button_bar_->setObjectName("panel_buttons");
  button_bar_->setLayout(build_buttons());
  v->addWidget(button_bar_);
  v->addStretch(1);
  name_fields();
  describe_fields();
  connect_fields();
  describe_model();
  validate();
}

// What each option does and, where it takes time, what it costs. A field's tooltip says this when
// nothing is wrong with it, and its problem first when something is (validate).
void ExperimentPanel::describe_fields() {
  const QString eval_cost = tr(" Cost: one evaluation (sequences x length, twice: full context and the state-reset "
                               "reference), no training.");
  const QString train_cost = tr(" Cost: one post-training (steps x batch x T tokens, forward and backward) and one "
                                "evaluation.");
  const std::pair<QWidget*, QString> about[] = {
      {model, tr("The model to study: a model folder (config.json and weights), 'embedded' (the demo's, built to fail "
                 "past T), another named model, or a Hugging Face id in the local cache (the ... menu lists them). Its "
                 "size sets the cost of everything else.")},
      {data, tr("The corpus: 'embedded' (Austen), a folder, .jsonl, a token file, text (.gz/.xz/.zst too), Parquet or a "
                "cached dataset id. Post-training reads its training split, evaluation its validation split. Tokenized "
                "once into the token cache (seconds per MB, then free).")},
      {T, tr("The training context in tokens (the model's own, as its record says): post-training windows are T "
             "long, and loss past T is measured against the model's state reset every T/2. Cost: post-training is "
             "linear in T.")},
      {steps, tr("Optimizer steps for each policy run (the paper: about 500). Cost: linear; the largest part of a "
                 "policy run's time, steps x batch x T tokens forward and backward.")},
      {batch, tr("Sequences per post-training step. Cost: linear in it, like steps.")},
      {lr, tr("AdamW learning rate of post-training (warmup 10 steps, cosine to 0.1x). No cost of its own.")},
      {seed, tr("Data order, noise and initialisation: the same seed gives the same numbers. No cost.")},
      {eval_length, tr("Positions scored per evaluation sequence (64T shows the failure far past T). Cost: linear, "
                       "for every run, twice (the full context and the state-reset reference).")},
      {eval_sequences, tr("Validation sequences averaged: more make smaller error bars. Cost: linear, for every run.")},
      {jobs_, tr("Runs computed at once, each on its own thread; the numbers do not depend on it. Faster with more "
                 "cores, at the cost of memory (one model and its activations per job).")},
      {baseline, tr("The model as loaded, not post-trained: what every policy is compared with.") + eval_cost},
      {p_zero, tr("Post-train from zero initial states, as pretraining did: the control with the same steps (if "
                  "it fixes the model, the steps did, not the states).") + train_cost},
      {p_random, tr("Post-train from random initial states, N(0, sigma^2) per entry (the paper's random noise); one "
                    "run per sigma.") + train_cost},
      {p_fitted, tr("Post-train from states drawn from a Gaussian fitted per layer and head to the model's own final "
                    "states (the paper's fitted noise); one run per fit length, with a few calibration forwards.") +
                     train_cost},
      {p_passing, tr("State passing: each batch starts from the previous batch's final states (the paper's most "
                     "reliable fix).") + train_cost},
      {p_tbtt, tr("Truncated backpropagation through time: consecutive segments of one document, the state carried "
                  "between them.") + train_cost},
      {i_dt, tr("Training-free: every dt times the factor (the decay exp(dt A) and the input dt B x alike).") + eval_cost},
      {i_dt_past_T, tr("The dt factor only at positions past T, like position interpolation. No cost.")},
      {i_a, tr("Training-free: the decay rate A times the factor, the input untouched.") + eval_cost},
      {i_clip, tr("Training-free: after every token each head's state is scaled down to the largest norm it reached "
                  "within T on 64 zero-state training windows. Cost: those 64 windows once, then one evaluation on the "
                  "sequential scan (slower than the fused one).")},
      {i_reset, tr("Training-free: the whole state set to zero every period tokens, a sliding-window recurrence.") +
                    eval_cost},
      {reset_period, tr("Tokens between resets (e.g. 2T). No cost.")},
      {i_longmamba, tr("Training-free: LongMamba's token filtering: in the channels that remember across T only tokens "
                       "with a large dt enter the state. Cost: calibration on 64 windows of T, then one evaluation.")},
      {save_models, tr("A folder that keeps each post-trained model (loadable later as a model); empty: not kept. Cost: "
                       "disk, the model's size per run.")},
  };
  for (const auto& [w, text] : about) w->setToolTip(text);
  for (auto& [key, box] : analysis_boxes_)
    if (const AnalysisRecord* a = find_analysis_record(key)) box->setToolTip(QString::fromStdString(a->about));
  for (QWidget* w : form_->findChildren<QWidget*>())
    if (!w->toolTip().isEmpty()) w->setProperty("about", w->toolTip());
}

void ExperimentPanel::name_fields() {
  const std::pair<QObject*, const char*> fields[] = {
      {model, "model"}, {data, "data"}, {save_models, "save_models"}, {T, "T"}, {steps, "steps"}, {batch, "batch"},
      {seed, "seed"}, {eval_length, "eval_length"}, {eval_sequences, "eval_sequences"}, {lr, "lr"},
      {sigmas, "sigmas"}, {fit_lengths, "fit_lengths"}, {baseline, "baseline"}, {p_zero, "p_zero"},
      {p_random, "p_random"}, {p_fitted, "p_fitted"}, {p_passing, "p_passing"}, {p_tbtt, "p_tbtt"},
      {device, "device"}, {precision, "precision"}, {scan, "scan"}, {jobs_, "jobs"},
      {edit_button, "edit_button"}, {policy_note, "policy_note"}, {i_dt, "i_dt"}, {i_dt_past_T, "i_dt_past_T"},
      {i_a, "i_a"}, {i_clip, "i_clip"}, {i_reset, "i_reset"}, {i_longmamba, "i_longmamba"}, {dt_factor, "dt_factor"},
      {a_factor, "a_factor"}, {reset_period, "reset_period"}, {intervention_note, "intervention_note"}};
  for (auto& [w, name] : fields) w->setObjectName(name);
}

void ExperimentPanel::set_running(bool running) {
  running_ = running;
  form_->setEnabled(!running);
  output_->setEnabled(!running);
  edit_button->setEnabled(!running);
  cancel_action_->setEnabled(running);
  validate();
}

void ExperimentPanel::build_model_rows(QFormLayout* form, const ExperimentSpec& d) {
  form->addRow(tr("Model"), path_row(this, model, QString::fromStdString(d.model),
                                     tr("A committed model (%1), a checkpoint directory or a Hugging Face id "
                                        "(owner/name[@revision]) in the local cache; several, separated by commas, run "
                                        "side by side in one file")
                                         .arg(QString::fromStdString(committed_model_list())),
                                     true));
  architecture_ = new QLabel(this);
  architecture_->setObjectName("architecture");
  architecture_->setWordWrap(true);  // a hybrid's line is long: it wraps rather than widen the panel
  architecture_->setToolTip(tr("the architecture the model's config.json names, and its recurrent state per layer"));
  form->addRow(tr("Architecture"), architecture_);
  form->addRow(tr("Data"), path_row(this, data, QString::fromStdString(d.data),
                                    tr("'embedded' (Austen), a folder of .txt/.jsonl/.parquet, a .jsonl, .parquet, .u16/.u32 "
                                       "token or text file, or a cached Hugging Face dataset id; tokenized once with the "
                                       "model's tokenizer and cached"), false));
}

void ExperimentPanel::build_training_rows(QFormLayout* form, const ExperimentSpec& d) {
  form->addRow(tr("Training context T"), make_spin(this, T, 2, 1 << 20, kShownT, tr("tokens; the model's T")));
  form->addRow(tr("Post-training steps"), make_spin(this, steps, 0, 1000000, static_cast<int>(d.posttrain.steps),
                                                    tr("optimizer steps per policy")));
  form->addRow(tr("Batch"), make_spin(this, batch, 1, 4096, static_cast<int>(d.posttrain.batch), tr("sequences per step")));
  lr = new QDoubleSpinBox(this);
  lr->setDecimals(10);  // 1e-10 steps: any learning rate a spec holds is shown as it is
  lr->setRange(0, 1);
  lr->setSingleStep(1e-4);
  lr->setValue(d.posttrain.lr);
  form->addRow(tr("Learning rate"), lr);
  form->addRow(tr("Seed"), make_spin(this, seed, 0, 1 << 30, static_cast<int>(d.seed),
                                     tr("data order, noise, initialisation")));
}

void ExperimentPanel::build_device_row(QFormLayout* form) {
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
  // What bf16 will use on this CPU, said where it is chosen (a GPU run uses autocast whatever this says).
  QString isa;
  try {
    isa = QString::fromStdString(cpu_bf16_isa());
  } catch (const std::exception&) {  // a bad STATESCOPE_BF16_ISA: the run itself says so by name
  }
  precision->addItem("fp32", "fp32");
  precision->addItem(isa.isEmpty() ? tr("bf16 (runs fp32 on this CPU)") : tr("bf16 (%1)").arg(isa), "bf16");
  precision->setToolTip(
      isa.isEmpty() ? tr("bf16: mixed precision on a GPU. This CPU has neither AMX nor AVX512-BF16, where bf16 "
                         "would be slower than fp32: a CPU run asked for bf16 runs fp32 and its file says so")
                    : tr("bf16: mixed precision. On this CPU the projections and the LM head multiply in bf16 on "
                         "its %1 units, from bf16 copies of the weights; SSM state, A, dt, norms and loss stay fp32")
                          .arg(isa));
  scan = new QComboBox(this);
  scan->addItem(tr("auto scan"), "auto");
  scan->addItem(tr("ATen scan"), "aten");
  scan->addItem(tr("fused scan"), "fused");
  scan->setToolTip(tr("the SSM scan: fused = statescope's own (on the CPU plain loops, on a GPU the CUDA "
                      "kernels), ATen = ATen's chunked scan, auto = fused on the CPU and ATen on a GPU"));
  auto* dev_row = new QHBoxLayout;
  dev_row->addWidget(device);
  dev_row->addWidget(precision);
  dev_row->addWidget(scan);
  form->addRow(tr("Device"), dev_row);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // One core stays free for the window: more busy threads than cores stalled the event loop by
  // 250-360 ms (measured), so the default is cores - 1.
  form->addRow(tr("Jobs"), make_spin(this, jobs_, 1, cores, std::max(1, cores - 1),
                                     tr("runs at once, one thread each (this machine has %1 cores; the default "
                                        "leaves one to the window); every run's numbers are the same with any "
                                        "count").arg(cores)));
}

int ExperimentPanel::jobs() const { return jobs_->value(); }

QWidget* ExperimentPanel::build_policies(const ExperimentSpec& d) {
  auto* pol = new QGroupBox(tr("Initial-state policies (one run each)"), this);
  auto* pv = new QFormLayout(pol);
  const PolicySpec dp;
  baseline = new QCheckBox(tr("baseline (no post-training)"), pol);
  p_zero = new QCheckBox(tr("zero (control)"), pol);
  p_random = new QCheckBox(tr("random noise, sigma"), pol);
  sigmas = new QLineEdit(number_text(dp.sigma), pol);
  sigmas->setToolTip(tr("std of the initial SSM state entries; several values separated by commas make one run "
                        "each (random_<sigma>)"));
  p_fitted = new QCheckBox(tr("fitted noise, fit at L (0 = T)"), pol);
  fit_lengths = new QLineEdit(number_text(static_cast<double>(dp.fit_length)), pol);
  fit_lengths->setToolTip(tr("tokens: 0 = the paper's fit (final states of the T-token training windows, EMA); "
                             "L = fit to final states of zero-state windows of L tokens before step 1, kept fixed. "
                             "Several values separated by commas make one run each (fitted_<L>)"));
  p_passing = new QCheckBox(tr("state passing"), pol);
  p_tbtt = new QCheckBox(tr("TBTT"), pol);
  for (auto* c : {p_zero, p_random, p_fitted, p_passing, p_tbtt}) c->setChecked(true);  // the demo's runs
  baseline->setChecked(d.baseline);
  pv->addRow(baseline);
  pv->addRow(p_zero);
  pv->addRow(p_random, sigmas);
  pv->addRow(p_fitted, fit_lengths);
  pv->addRow(p_passing);
  pv->addRow(p_tbtt);
  policy_note = new QLabel(pol);
  policy_note->setWordWrap(true);
  policy_note->setStyleSheet(QString("color: %1;").arg(views::theme(true).note.name()));  // readable on both themes
  policy_note->setVisible(false);
  pv->addRow(policy_note);
  return pol;
}

QWidget* ExperimentPanel::build_interventions() {
  auto* box = new QGroupBox(tr("Training-free interventions (one run each, no training)"), this);
  box->setToolTip(tr("The model as loaded, run differently: beside the post-trained runs in every table and plot, "
                     "marked (training-free)"));
  auto* f = new QFormLayout(box);
  i_dt = new QCheckBox(tr("dt scaled by"), box);
  dt_factor = new QLineEdit("0.5", box);
  dt_factor->setToolTip(tr("every dt (the step that sets both the decay and the input) times this factor; > 0"));
  i_dt_past_T = new QCheckBox(tr("only past T (like position interpolation)"), box);
  i_dt_past_T->setChecked(true);
  i_a = new QCheckBox(tr("A scaled by"), box);
  a_factor = new QLineEdit("0.5", box);
  a_factor->setToolTip(tr("the decay rate A times this factor in every layer (Mamba Modulation's rescaling); > 0"));
  i_clip = new QCheckBox(tr("state clipped at its largest norm within T"), box);
  i_clip->setToolTip(tr("per layer and head, the largest norm over 64 zero-state training windows of T tokens"));
  i_reset = new QCheckBox(tr("state reset every"), box);
  reset_period = new QSpinBox(box);
  reset_period->setRange(1, 1 << 24);
  reset_period->setValue(2 * kShownT);
  reset_period->setSuffix(tr(" tokens"));
  i_longmamba = new QCheckBox(tr("LongMamba token filtering (Ye et al., ICLR 2025)"), box);
  i_longmamba->setToolTip(tr("in channels that remember across T, only tokens with a large dt enter the state, so that "
                             "past T the channel keeps the memory it had at T"));
  f->addRow(i_dt, dt_factor);
  f->addRow(QString(), i_dt_past_T);
  f->addRow(i_a, a_factor);
  f->addRow(i_clip);
  f->addRow(i_reset, reset_period);
  f->addRow(i_longmamba);
  intervention_note = new QLabel(box);
  intervention_note->setWordWrap(true);
  intervention_note->setStyleSheet(QString("color: %1;").arg(views::theme(true).note.name()));
  intervention_note->setVisible(false);
  f->addRow(intervention_note);
  return box;
}

json ExperimentPanel::form_interventions() const {
  json ivs = json::array();
  bool ok = false;
  if (i_dt->isChecked()) {
    const double v = dt_factor->text().toDouble(&ok);
    json j{{"kind", "dt_scale"}, {"factor", ok ? v : 0.0}};
    if (i_dt_past_T->isChecked()) j["from"] = "T";
    ivs.push_back(j);
  }
  if (i_a->isChecked()) ivs.push_back({{"kind", "a_scale"}, {"factor", a_factor->text().toDouble(&ok)}});
  if (i_clip->isChecked()) ivs.push_back({{"kind", "clip"}});
  if (i_reset->isChecked()) ivs.push_back({{"kind", "reset"}, {"period", reset_period->value()}});
  if (i_longmamba->isChecked()) ivs.push_back({{"kind", "longmamba"}});
  return ivs;
}

void ExperimentPanel::interventions_edited() {  // the user takes over: the form's interventions from now on
  if (loading_ || !keep_interventions_) return;
  keep_interventions_ = false;
  intervention_note->setVisible(false);
}

QWidget* ExperimentPanel::build_evaluation(const ExperimentSpec& d) {
  auto* ev = new QGroupBox(tr("Evaluation and analyses"), this);
  auto* ef = new QFormLayout(ev);
  ef->addRow(tr("Length (tokens)"), make_spin(this, eval_length, 2, 1 << 24, static_cast<int>(d.eval_length(kShownT)),
                                              tr("positions scored (e.g. 64T)")));
  ef->addRow(tr("Sequences"), make_spin(this, eval_sequences, 1, 100000, static_cast<int>(d.eval.sequences),
                                        tr("validation sequences averaged")));
  // A box per analysis a spec can ask for (core/analyses/list.h, in its order), named "a_<key>";
  // ticked = its section with the defaults.
  for (const auto& a : analysis_records()) {
    if (!a.options) continue;
    auto* c = new QCheckBox(QString::fromStdString(a.label), ev);
    c->setObjectName(QString::fromStdString("a_" + a.key));
    connect(c, &QCheckBox::toggled, this, [this] { validate(); });
    analysis_boxes_.emplace_back(a.key, c);
    ef->addRow(c);
  }
  return ev;
}

QLayout* ExperimentPanel::build_buttons() {
  run_action_ = new QAction(tr("&Run experiment"), this);
  run_action_->setShortcut(QKeySequence(tr("Ctrl+R")));
  connect(run_action_, &QAction::triggered, this, &ExperimentPanel::run_requested);
  cancel_action_ = new QAction(tr("&Cancel"), this);
  cancel_action_->setShortcut(QKeySequence(Qt::Key_Escape));
  cancel_action_->setToolTip(tr("Cancel the run (Esc); what has finished stays in the file"));
  cancel_action_->setEnabled(false);
  connect(cancel_action_, &QAction::triggered, this, &ExperimentPanel::cancel_requested);
  auto button = [this](QAction* a, const QString& text) {  // a button that is the action
    auto* b = new QToolButton(this);
    b->setDefaultAction(a);
    b->setText(text);
    b->setToolButtonStyle(Qt::ToolButtonTextOnly);
    b->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    return b;
  };
  edit_button = new QPushButton(tr("Edit as JSON..."), this);
  edit_button->setToolTip(tr("The whole spec as text, checked as you type: sweeps, named runs, policy knobs, "
                             "analysis settings (Ctrl+J)"));
  connect(edit_button, &QPushButton::clicked, this, &ExperimentPanel::edit_json);
  auto* buttons = new QHBoxLayout;
  buttons->setContentsMargins(0, 0, 0, 0);
  buttons->addWidget(edit_button);
  buttons->addWidget(button(run_action_, tr("Run")), 1);
  buttons->addWidget(button(cancel_action_, tr("Cancel")));
  // Why Run (and Ctrl+R) does nothing, said in the open beside the button, not only in a field's
  // tooltip: each refused field's sentence (the field itself turns red).
  problems_ = new QLabel(this);
  problems_->setObjectName("problems");
  problems_->setWordWrap(true);
  problems_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  problems_->setStyleSheet(QString("color: %1;").arg(views::theme(true).invalid_background.lighter(170).name()));
  problems_->setVisible(false);
  // Where Run writes, in the open beside the button: typed or chosen; empty, a new file of its own.
  output_ = new QLineEdit(this);
  output_->setObjectName("output");
  output_->setClearButtonEnabled(true);
  output_->setToolTip(tr("The experiment file (.h5) Run writes. Empty: a new file named by the date in the default "
                         "folder. An existing file is replaced only when you confirm, and only once the new experiment "
                         "ends"));
  auto* choose = new QToolButton(this);
  choose->setObjectName("output_pick");
  choose->setText("...");
  choose->setToolTip(tr("Choose the experiment file"));
  connect(choose, &QToolButton::clicked, this, [this] {
    const QString start = output_->text().isEmpty() ? default_output_folder_ : output_->text();
    const QString p = QFileDialog::getSaveFileName(this, tr("Experiment file"), start, tr("Experiment files (*.h5)"), nullptr,
                                                   QFileDialog::DontConfirmOverwrite);  // Run asks, when it replaces
    if (!p.isEmpty()) output_->setText(p.endsWith(".h5") ? p : p + ".h5");
  });
  auto* out_row = new QHBoxLayout;
  out_row->setContentsMargins(0, 0, 0, 0);
  out_row->addWidget(new QLabel(tr("Output"), this));
  out_row->addWidget(output_, 1);
  out_row->addWidget(choose);
  set_default_output_folder({});
  auto* column = new QVBoxLayout;
  column->setContentsMargins(0, 0, 0, 0);
  column->addWidget(problems_);
  column->addLayout(out_row);
  column->addLayout(buttons);
  return column;
}

QString ExperimentPanel::output_path() const { return output_->text().trimmed(); }

void ExperimentPanel::set_default_output_folder(const QString& folder) {
  default_output_folder_ = folder;
  QString shown = folder;
  const QString home = QDir::homePath();
  if (!home.isEmpty() && shown.startsWith(home)) shown = "~" + shown.mid(home.size());
  output_->setPlaceholderText(folder.isEmpty() ? tr("a new file (choose with ...)")
                                               : tr("new file in %1").arg(shown));
}

// Every edit re-validates; a policy edit hands the runs over to the form.
void ExperimentPanel::connect_fields() {
  for (auto* e : {data, save_models}) connect(e, &QLineEdit::textChanged, this, [this] { validate(); });
  connect(model, &QLineEdit::textChanged, this, [this] {
    describe_model();
    validate();
  });
  for (auto* s : {T, steps, batch, eval_length, eval_sequences})
    connect(s, qOverload<int>(&QSpinBox::valueChanged), this, [this] { validate(); });
  connect(lr, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this] { validate(); });
  for (auto* e : {sigmas, fit_lengths}) connect(e, &QLineEdit::textChanged, this, [this] { validate(); });
  for (auto* c : {baseline, p_zero, p_random, p_fitted, p_passing, p_tbtt})
    connect(c, &QCheckBox::toggled, this, [this] { validate(); });
  for (auto* c : {p_zero, p_random, p_fitted, p_passing, p_tbtt})
    connect(c, &QCheckBox::toggled, this, &ExperimentPanel::policies_edited);
  for (auto* e : {sigmas, fit_lengths}) connect(e, &QLineEdit::textChanged, this, &ExperimentPanel::policies_edited);
  for (auto* c : {i_dt, i_dt_past_T, i_a, i_clip, i_reset, i_longmamba}) {
    connect(c, &QCheckBox::toggled, this, [this] { validate(); });
    connect(c, &QCheckBox::toggled, this, &ExperimentPanel::interventions_edited);
  }
  for (auto* e : {dt_factor, a_factor}) {
    connect(e, &QLineEdit::textChanged, this, [this] { validate(); });
    connect(e, &QLineEdit::textChanged, this, &ExperimentPanel::interventions_edited);
  }
  connect(reset_period, qOverload<int>(&QSpinBox::valueChanged), this, &ExperimentPanel::interventions_edited);
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
    const auto& t = views::theme(true);
    w->setStyleSheet(why.isEmpty() ? QString()
                                   : QString("background-color: %1; color: %2;").arg(t.invalid_background.name(), t.invalid_text.name()));
    const QString about = w->property("about").toString();  // describe_fields
    w->setToolTip(why.isEmpty() ? about : about.isEmpty() ? why : why + "\n\n" + about);
    return why.isEmpty();
  };
  const QString m = model->text().trimmed();
  if (pretrain_) bad(model, architecture_problem_);  // no model to load: the spec trains it
  else
    bad(model, m.isEmpty() ? tr("Model: empty (use a committed model: %1; a directory or a cached Hugging Face id)")
                                 .arg(QString::fromStdString(committed_model_list()))
                           : architecture_problem_);
  const QString d = data->text().trimmed();
  QString data_problem;
  if (d.isEmpty()) data_problem = tr("Data: empty");
  else if (d != "embedded" && !QFileInfo::exists(d)) {
    if (!is_hub_id(d.toStdString())) data_problem = tr("Data: %1 does not exist").arg(d);
    else
      try {  // a dataset id: its snapshot in the Hugging Face cache
        resolve_hub_snapshot(d.toStdString(), HubRepoType::Dataset);
      } catch (const std::exception& e) {
        data_problem = tr("Data: ") + QString::fromStdString(e.what());
      }
  }
  bad(data, data_problem);
  bad(lr, lr->value() > 0 ? QString() : tr("Learning rate must be > 0"));
  for (const auto& [box, why] : refused_) {  // what the model's architecture cannot take (describe_model)
    box->setEnabled(why.isEmpty() || box->isChecked());  // a ticked one stays, to be unticked
    if (why.isEmpty() || box->isChecked()) bad(box, why.isEmpty() ? QString() : box->text() + ": " + why);
    else box->setToolTip(why + "\n\n" + box->property("about").toString()), box->setStyleSheet({});
  }
  QString why;
  std::vector<double> vals;
  bad(sigmas, !p_random->isChecked() || number_list(sigmas->text(), false, vals, why) ? QString() : tr("sigma: ") + why);
  bad(fit_lengths, !p_fitted->isChecked() || number_list(fit_lengths->text(), true, vals, why) ? QString()
                                                                                              : tr("fit length: ") + why);
  auto factor_problem = [&](QCheckBox* on, QLineEdit* e, const QString& what) {
    bool ok = false;
    const double v = e->text().toDouble(&ok);
    return !on->isChecked() || (ok && v > 0 && v <= 1e6) ? QString()
                                                          : tr("%1 factor must be a number in (0, 1e6], got '%2'").arg(what, e->text());
  };
  bad(dt_factor, factor_problem(i_dt, dt_factor, "dt"));
  bad(a_factor, factor_problem(i_a, a_factor, "A"));
  bad(eval_length, eval_length->value() > T->value() ? QString() : tr("Evaluation length must exceed T to see past it"));
  bool any = baseline->isChecked() || p_zero->isChecked() || p_random->isChecked() || p_fitted->isChecked() ||
             p_passing->isChecked() || p_tbtt->isChecked();
  for (auto* c : {i_dt, i_a, i_clip, i_reset, i_longmamba}) any = any || c->isChecked();
  bad(baseline, any ? QString() : tr("Choose at least one run (baseline, a policy or an intervention)"));
  return p;
}

namespace {

// The model field: one model, or several separated by commas (a spec's "models", side by side).
QStringList model_names(const QString& field) {
  QStringList out;
  for (const QString& m : field.split(',')) out << m.trimmed();
  return out;
}

}  // namespace

// The model field's architecture, read from each model's config.json (no weights are loaded).
void ExperimentPanel::describe_model() {
  architecture_problem_.clear();
  QStringList described;
  std::vector<ModelConfig> configs;
  if (pretrain_) {  // the model the spec trains: its architecture from the section
    try {
      const ModelConfig c = pretrain_->config("pretrain");
      described << QString::fromStdString(architecture_line(c)) + tr(" (trained by the spec)");
      configs.push_back(c);
    } catch (const std::exception& e) {
      described << tr("unknown");
      architecture_problem_ = tr("pretrain: ") + QString::fromStdString(e.what());
    }
  }
  for (const QString& name : pretrain_ ? QStringList() : model_names(model->text().trimmed())) {
    const std::string m = name.toStdString();
    try {
      if (m.empty()) throw Error("an empty model name (use a committed model: " + committed_model_list() + "; or a directory)");
      const std::string dir = resolve_model(m);
      const ModelConfig c = load_model_config((std::filesystem::path(dir) / "config.json").string());
      described << QString::fromStdString(architecture_line(c));
      configs.push_back(c);
    } catch (const std::exception& e) {  // not a model name, no such folder, or a config.json it cannot read
      described << tr("unknown");
      if (architecture_problem_.isEmpty()) architecture_problem_ = tr("Model: ") + QString::fromStdString(e.what());
    }
  }
  // Models of one architecture (the seeds of one recipe) say it once, with their count.
  QStringList lines;
  for (const QString& d : described) {
    const auto n = described.count(d);
    const QString line = n > 1 ? tr("%1 models: %2").arg(n).arg(d) : d;
    if (!lines.contains(line)) lines << line;
  }
  architecture_->setText(model->text().trimmed().isEmpty() && !pretrain_ ? QString() : lines.join("\n"));
  // The panel follows the model: an intervention or analysis its architecture cannot take (core's
  // rule, capability_check.h) is disabled with the reason, or, when ticked, named as a problem.
  std::vector<std::pair<QCheckBox*, std::function<std::string(const ModelConfig&)>>> asks{
      {i_dt, [](const ModelConfig& c) { return refuses_intervention(c, "dt_scale"); }},
      {i_a, [](const ModelConfig& c) { return refuses_intervention(c, "a_scale"); }},
      {i_longmamba, [](const ModelConfig& c) { return refuses_intervention(c, "longmamba"); }}};
  for (auto& [key, box] : analysis_boxes_)
    asks.emplace_back(box, [k = key](const ModelConfig& c) { return refuses_analysis(c, k); });
  refused_.clear();
  for (auto& [box, ask] : asks) {
    QString why;
    for (const ModelConfig& c : configs)
      if (why.isEmpty()) why = QString::fromStdString(ask(c));
    refused_[box] = why;
  }
}

QString ExperimentPanel::analysis_refusal(const std::string& key) const {
  for (const auto& [k, box] : analysis_boxes_)
    if (k == key) {
      const auto it = refused_.find(box);
      return it == refused_.end() ? QString() : it->second;
    }
  return {};
}

bool ExperimentPanel::tick_analysis(const std::string& key) {
  for (auto& [k, box] : analysis_boxes_)
    if (k == key && box->isEnabled() && analysis_refusal(key).isEmpty()) {
      box->setChecked(true);
      return true;
    }
  return false;
}

void ExperimentPanel::validate() {
  const auto p = problems();
  run_action_->setEnabled(p.isEmpty() && !running_);
  if (problems_) {
    problems_->setText(p.join("\n"));
    problems_->setVisible(!p.isEmpty());
  }
  run_action_->setToolTip(running_ ? tr("An experiment is running")
                          : p.isEmpty() ? tr("Run the experiment (Ctrl+R)") : p.join("\n"));
}

QString ExperimentPanel::spec_json() const {
  if (!problems().isEmpty()) return {};
  const json base = base_.isEmpty() ? json::object() : json::parse(base_.toStdString(), nullptr, false);
  json j = base.is_object() ? base : json::object();  // what the form cannot show stays as loaded
  if (pretrain_) {  // the spec trains its models (its pretrain section stays as loaded)
    j.erase("model");
    j.erase("models");
  } else if (const QStringList ms = model_names(model->text().trimmed()); ms.size() > 1) {
    j["models"] = json::array();
    for (const QString& m : ms) j["models"].push_back(m.toStdString());
    j.erase("model");
  } else {
    j["model"] = model->text().trimmed().toStdString();
    j.erase("models");
  }
  j["data"] = data->text().trimmed().toStdString();
  j["T"] = T->value();
  j["seed"] = seed->value();
  j["baseline"] = baseline->isChecked();
  json pt = j.value("posttrain", json::object());
  pt["steps"] = steps->value();
  pt["batch"] = batch->value();
  pt["lr"] = lr->value();
  j["posttrain"] = pt;
  j["policies"] = keep_policies_ ? base.value("policies", json::array()) : form_policies();
  j["interventions"] = keep_interventions_ ? base.value("interventions", json::array()) : form_interventions();
  if (j["interventions"].empty()) j.erase("interventions");
  json ev = j.value("eval", json::object());
  ev["length"] = eval_length->value();
  ev["sequences"] = eval_sequences->value();
  j["eval"] = ev;
  // Analyses: a loaded one keeps its settings; one ticked here gets core's defaults (spec.h; EffRem's
  // context lengths T..64T follow each run's T there).
  const json had = j.value("analyses", json::object());
  json a = json::object();
  auto pick = [&](QCheckBox* c, const char* k, const json& dflt) {
    if (c->isChecked()) a[k] = had.contains(k) ? had[k] : dflt;
  };
  for (auto& [key, box] : analysis_boxes_) pick(box, key.c_str(), json::object());
  if (!a.empty()) j["analyses"] = a;
  else j.erase("analyses");
  j["device"] = device->currentText().toStdString();
  j["precision"] = precision->currentData().toString().toStdString();
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

QString ExperimentPanel::load_spec(const QString& text) {
  ExperimentSpec spec;
  try {
    spec = parse_spec(text.toStdString(), "spec");  // core's reading: the same defaults and checks as a run
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());  // the form stays as it was
  }
  // The form shows a spec only if every value fits its field as it is: a value outside a field's
  // range (or finer than it shows) is refused by name, never clamped or rounded into another run.
  auto fits = [](const char* field, double v, double lo, double hi, int decimals = 0) -> QString {
    const double scale = std::pow(10.0, decimals);
    const bool exact = std::abs(std::round(v * scale) / scale - v) <= 1e-12 * std::max(1.0, std::abs(v));
    if (v >= lo && v <= hi && exact) return {};
    return tr("field '%1' is %2, which the experiment panel cannot show (it takes %3 to %4%5); edit the spec, or run it "
              "with statescope-cli run")
        .arg(field).arg(v, 0, 'g', 10).arg(lo, 0, 'g', 10).arg(hi, 0, 'g', 10)
        .arg(decimals ? tr(", in steps of %1").arg(1.0 / scale, 0, 'g', 3) : tr(", whole numbers"));
  };
  for (const QString& why :
       {spec.T > 0 ? fits("T", static_cast<double>(spec.T), T->minimum(), T->maximum()) : QString(),
        fits("seed", static_cast<double>(spec.seed), seed->minimum(), seed->maximum()),
        fits("posttrain.steps", static_cast<double>(spec.posttrain.steps), steps->minimum(), steps->maximum()),
        fits("posttrain.batch", static_cast<double>(spec.posttrain.batch), batch->minimum(), batch->maximum()),
        fits("posttrain.lr", spec.posttrain.lr, lr->minimum(), lr->maximum(), lr->decimals()),
        spec.eval.length > 0 ? fits("eval.length", static_cast<double>(spec.eval.length), eval_length->minimum(),
                                    eval_length->maximum())
                             : QString(),
        fits("eval.sequences", static_cast<double>(spec.eval.sequences), eval_sequences->minimum(),
             eval_sequences->maximum())})
    if (!why.isEmpty()) return why;  // the form stays as it was
  const json j = json::parse(text.toStdString());
  loading_ = true;
  base_ = text;
  QStringList models;
  for (const auto& m : spec.models) models << QString::fromStdString(m);
  // A spec with a pretrain section trains its models: the Model field says so and takes nothing.
  pretrain_ = spec.pretrain ? std::make_shared<const PretrainSpec>(*spec.pretrain) : nullptr;
  model->setEnabled(!pretrain_);
  model->setPlaceholderText(pretrain_ ? tr("none: trained from scratch by the spec's pretrain section (Edit as JSON)") : QString());
  model->setText(pretrain_ ? QString() : spec.models.empty() ? QString::fromStdString(spec.model) : models.join(", "));
  describe_model();  // (also when the text did not change: the pretrain section did)
  data->setText(QString::fromStdString(spec.data));
  if (spec.T > 0) T->setValue(static_cast<int>(spec.T));
  if (!spec.device.empty()) device->setCurrentIndex(QString::fromStdString(spec.device).startsWith("cuda") ? 1 : 0);
  precision->setCurrentIndex(std::max(0, precision->findData(QString::fromStdString(spec.precision))));
  scan->setCurrentIndex(spec.scan == "fused" ? 2 : spec.scan == "aten" ? 1 : 0);
  seed->setValue(static_cast<int>(spec.seed));
  baseline->setChecked(spec.baseline);
  steps->setValue(static_cast<int>(spec.posttrain.steps));
  batch->setValue(static_cast<int>(spec.posttrain.batch));
  lr->setValue(spec.posttrain.lr);
  for (auto* c : {p_zero, p_random, p_fitted, p_passing, p_tbtt}) c->setChecked(false);
  QStringList sig, fit, runs;
  for (const auto& [name, p] : spec.policies) {
    runs << QString::fromStdString(name);
    if (p.kind == "zero") p_zero->setChecked(true);
    if (p.kind == "random") p_random->setChecked(true), sig << number_text(p.sigma);
    if (p.kind == "fitted") p_fitted->setChecked(true), fit << number_text(static_cast<double>(p.fit_length));
    if (p.kind == "passing") p_passing->setChecked(true);
    if (p.kind == "tbtt") p_tbtt->setChecked(true);
  }
  const PolicySpec dp;
  sigmas->setText(sig.isEmpty() ? number_text(dp.sigma) : sig.join(", "));
  fit_lengths->setText(fit.isEmpty() ? number_text(static_cast<double>(dp.fit_length)) : fit.join(", "));
  // What the form shows is exactly the loaded runs (names, knobs, order), or the loaded ones stand.
  keep_policies_ = normalized(j.value("policies", json::array())) != normalized(form_policies());
  policy_note->setText(tr("Runs as loaded: %1. Changing a policy here replaces them with the form's.").arg(runs.join(", ")));
  policy_note->setVisible(keep_policies_);
  for (auto* c : {i_dt, i_a, i_clip, i_reset, i_longmamba}) c->setChecked(false);
  QStringList ivs;
  for (const auto& [name, iv] : spec.interventions) {
    ivs << QString::fromStdString(name);
    const QString f = iv.factors.size() == 1 ? number_text(iv.factors[0]) : QString();
    if (iv.kind == "dt_scale") i_dt->setChecked(true), dt_factor->setText(f), i_dt_past_T->setChecked(iv.from_T);
    if (iv.kind == "a_scale") i_a->setChecked(true), a_factor->setText(f);
    if (iv.kind == "clip") i_clip->setChecked(true);
    if (iv.kind == "reset") i_reset->setChecked(true), reset_period->setValue(static_cast<int>(std::min<int64_t>(iv.period, 1 << 24)));
    if (iv.kind == "longmamba") i_longmamba->setChecked(true);
  }
  keep_interventions_ = normalized(j.value("interventions", json::array())) != normalized(form_interventions());
  intervention_note->setText(tr("Interventions as loaded: %1. Changing one here replaces them with the form's.").arg(ivs.join(", ")));
  intervention_note->setVisible(keep_interventions_);
  eval_length->setValue(static_cast<int>(spec.eval_length(T->value())));
  eval_sequences->setValue(static_cast<int>(spec.eval.sequences));
  for (auto& [key, box] : analysis_boxes_) box->setChecked(spec.analyses.has(key));
  loading_ = false;
  validate();
  return {};
}

}  // namespace statescope::gui
