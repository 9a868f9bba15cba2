// intervention_spec.h — training-free interventions: changes to how a trained model is *run*, with no
// training, as plain values (the spec's "interventions" list, the CLI and the app's panel bind to
// these). No LibTorch; intervention.h holds the resolved form the forward pass applies.
//
//   dt_scale   dt_t *= factor (one, per layer, or per layer and head), at positions >= from (0: all;
//              "T": only past the training context, like position interpolation)
//   a_scale    A *= factor (one or per layer): the decay rate, not the input step (Mamba Modulation's
//              spectrum rescaling, per layer)
//   clip       after every token the state of each (layer, head) is scaled down to the largest norm
//              that head reached within T on training windows (calibrated, `windows` of them)
//   reset      the whole state (SSM and conv) set to zero every `period` tokens: a sliding-window
//              recurrence. In a hybrid, its recurrent layers' states; its attention layers keep every
//              key (the ablation "recurrent state reset every T, attention untouched")
//   attention_window  a hybrid's attention layers read only the last `period` positions (their own
//              included); its recurrent layers run as they are (the ablation "attention restricted to
//              a window of T, recurrent layers untouched")
//   longmamba  LongMamba's token filtering in global channels (Ye et al., ICLR 2025): below
//
// Positions count from the state the forward starts from (a sequence's first token is 0).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace statescope {

// The longest input LongMamba's thresholds are set for (its calibration holds that many values per channel).
inline constexpr int64_t kMaxLongMambaLength = int64_t{1} << 24;

struct InterventionSpec {
  std::string kind;                // dt_scale | a_scale | clip | reset | attention_window | longmamba
  // dt_scale / a_scale: the factors, flattened; `per` says their shape: "model" (one), "layer"
  // (n_layer), "head" (n_layer x groups, layer-major; dt_scale only).
  std::vector<double> factors{1.0};
  std::string per = "model";
  int64_t from = 0;                // dt_scale: first position scaled
  bool from_T = false;             // dt_scale: "from": "T" (resolved with the run's T)
  int64_t period = 0;              // reset, attention_window
  int64_t windows = 64;            // clip, longmamba: calibration windows of T training tokens
  double margin = 1.0;             // clip: the bound is margin x the largest norm within T
  // longmamba, as its public code does it (GATECH-EIC/LongMamba: load_align_target.py calibrates,
  // mamba_ssm/modules/mamba2.py filters): on calibration windows of T training tokens each channel's
  // dt values have their top `clamp_top` fraction capped at the smallest of them; a channel (Mamba-2:
  // head; Mamba-1: d_inner channel) is global when exp(A sum dt), mean over the windows, exceeds
  // global_threshold (the code's Mamba-2 default 5e-2); in a global channel a token whose dt is not
  // above the channel's threshold g gets dt = 0 (it neither enters nor decays the state), g chosen so
  // that the kept dt of `length` tokens sums to what T tokens sum to (the calibration's dt values
  // sorted, stretched to `length`, the first whose running sum exceeds that). Local channels run as
  // they are. The code picks g per input length at run time; here it is set once for `length`, so
  // every prediction stays causal.
  double global_threshold = 5e-2;
  double clamp_top = 0.05;         // longmamba: fraction of each channel's largest dt capped (0: none)
  int64_t length = 0;              // longmamba: the input length the thresholds are set for (0: the evaluation's)

  // "dt x0.5 past T", "A x0.8 (per layer)", "clip at 1x max norm within T", "reset every 64", "longmamba".
  std::string label() const;
  // True for the kinds that change dt or A (they change the scan's inputs).
  bool changes_inputs() const { return kind == "dt_scale" || kind == "a_scale" || kind == "longmamba"; }
};

// Throws Error naming the knob ("dt_scale: factor must be > 0 and finite, got 0") unless every knob
// the kind uses is in range and the kind is known. Sizes against a model are checked on resolution.
void check_intervention(const InterventionSpec& s);

}  // namespace statescope
