// experiment_panel.h — the form that becomes an experiment spec (docs/experiment-spec.md): model,
// data, T, post-training knobs, initial-state policies with their knobs, evaluation length and the
// analyses. Defaults reproduce data/experiments/demo.json. Invalid values are refused at the field
// (red, with the reason as tooltip and in `problems()`).
#pragma once
#include <memory>
#include <QWidget>
#include <string>
#include <utility>
#include <map>
#include <vector>
#include <nlohmann/json_fwd.hpp>

class QLineEdit;
class QSpinBox;
class QDoubleSpinBox;
class QCheckBox;
class QLabel;
class QPushButton;
class QComboBox;
class QAction;
class QFormLayout;
class QLayout;

namespace statescope {
struct ExperimentSpec;
struct PretrainSpec;
}

namespace statescope::gui {

class ExperimentPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ExperimentPanel(QWidget* parent = nullptr);
  // The spec as JSON text; empty when a field is invalid (see problems()).
  QString spec_json() const;
  QStringList problems() const;
  // Fills the form from a spec, read by core's parse_spec (core/experiment/spec.h: the defaults and
  // checks of a run). What the form cannot show (warmup, analysis settings, several runs of one
  // kind, named runs, policy knobs) is kept and written back by spec_json(); the loaded policies
  // stand until a policy control is changed, and a note under them says so. An invalid spec leaves
  // the form as it was and returns core's error (naming the field); "" when loaded.
  QString load_spec(const QString& json);
  void edit_json();  // the spec in a JSON editor (SpecEditor); Apply loads it here

  // Run (Ctrl+R) and Cancel (Esc), shared with the window's Run menu: Run is enabled when the form
  // is valid and nothing runs, Cancel while something runs. Run emits run_requested, Cancel
  // cancel_requested.
  QAction* run_action() const { return run_action_; }
  // Edit as JSON, Run and Cancel: below the form, or wherever the window pins it (the main window keeps
  // it under the scrolling form, always on screen).
  QWidget* button_bar() const { return button_bar_; }
  QLabel* problems_label() const { return problems_; }  // why Run is refused ("" and hidden: it is not)
  QAction* cancel_action() const { return cancel_action_; }
  // While an experiment runs the form is read-only (it describes what is running).
  void set_running(bool running);
  bool running() const { return running_; }
  // Runs at once (not part of the spec: the same spec gives the same numbers with any count).
  int jobs() const;
  // The experiment file Run writes, pinned with the buttons: the path typed or chosen ("" : a new file
  // in `default_folder`, which the field's placeholder names).
  QString output_path() const;
  void set_default_output_folder(const QString& folder);
  // An analysis (core/analyses/list.h key) asked for in the form: why the model's architecture cannot
  // take it ("" : it can, or the form has no box for it), and ticking its box (true when ticked).
  QString analysis_refusal(const std::string& key) const;
  bool tick_analysis(const std::string& key);

 signals:
  void run_requested();
  void cancel_requested();

 private:
  // Every field has its member's name as objectName (tests and screenshots find them by it).
  QLineEdit *model, *data, *save_models, *output_ = nullptr;
  QSpinBox *T, *steps, *batch, *seed, *eval_length, *eval_sequences;
  QSpinBox* jobs_;  // runs at once, 1..cores (default: the number of cores)
  QDoubleSpinBox* lr;
  // One run per value ("0.01, 0.1, 1" is a sweep; runs are then named random_0.01, ...).
  QLineEdit* sigmas;       // random noise: sigma values
  QLineEdit* fit_lengths;  // fitted noise: 0 = the paper's fit; L = fixed fit at L tokens
  QCheckBox *baseline, *p_zero, *p_random, *p_fitted, *p_passing, *p_tbtt;
  // Training-free interventions (core/model/intervention_spec.h), one run each: the model as loaded,
  // run differently. dt and A factors; dt only past T; the reset period.
  QCheckBox *i_dt, *i_dt_past_T, *i_a, *i_clip, *i_reset, *i_longmamba;
  QLineEdit *dt_factor, *a_factor;
  QSpinBox* reset_period;
  QLabel* intervention_note;  // shown while the loaded spec's interventions stand instead of the form's
  std::vector<std::pair<std::string, QCheckBox*>> analysis_boxes_;
  QWidget* button_bar_ = nullptr;
  QLabel* problems_ = nullptr;  // a box per analysis (list.h), by key
  QComboBox *device, *precision;  // cpu / cuda (disabled without a GPU); fp32 / bf16
  QComboBox* scan;                 // aten / fused (the CUDA scan kernels; enabled only on cuda)
  QPushButton* edit_button;
  QLabel* policy_note;  // shown while the loaded spec's runs stand instead of the form's
  QLabel* architecture_;  // what the model field names: "Mamba-1 · 2 layers · state (d_inner, d_state) 128 x 16"
  QString architecture_problem_;  // why the model's config.json cannot be read (empty: it can)
  // Each intervention and analysis box the model's architecture may refuse, with why ("" : it can).
  std::map<QCheckBox*, QString> refused_;
  void describe_model();
  QAction *run_action_, *cancel_action_;
  QWidget* form_;       // every field (disabled while running)
  bool running_ = false;

  // The form, one builder per group (defaults from core's ExperimentSpec).
  void build_model_rows(QFormLayout* form, const ExperimentSpec& d);
  void build_training_rows(QFormLayout* form, const ExperimentSpec& d);
  void build_device_row(QFormLayout* form);
  QWidget* build_policies(const ExperimentSpec& d);
  QWidget* build_interventions();
  QWidget* build_evaluation(const ExperimentSpec& d);
  QLayout* build_buttons();
  void name_fields();
  void describe_fields();  // every option's tooltip: what it does, what it costs (property "about")
  void connect_fields();
  void validate();
  nlohmann::json form_policies() const;  // the policies the form shows, in the form's order
  void policies_edited();
  nlohmann::json form_interventions() const;  // the interventions the form shows
  void interventions_edited();
  bool keep_interventions_ = false;  // the loaded spec's interventions are not what the form shows
  QString base_;                 // the loaded spec (JSON text); empty: form defaults only
  QString default_output_folder_;  // where Run writes when the output field is empty
  // A loaded spec's pretrain section (its models are trained by the spec: no Model to load; the field
  // says so and the architecture comes from the section); empty otherwise.
  std::shared_ptr<const PretrainSpec> pretrain_;
  bool keep_policies_ = false;   // the loaded spec's policies are not what the form shows
  bool loading_ = false;
};

}  // namespace statescope::gui
