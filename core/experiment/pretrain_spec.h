// pretrain_spec.h — a spec's "pretrain" section: instead of loading a model, each cell of the
// experiment trains a fresh byte-level model from scratch (zero initial state, the spec's T and
// seed), then runs its baseline and policies on it. The sweep can vary its sizes, budget and
// initialisation ("pretrain.d_state", "pretrain.steps", ...), so a sweep asks where a failure past T
// arises by itself (issue 29). What `statescope-cli pretrain` does with the same values (command()
// writes that command; a test checks the two make the same weights). No LibTorch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/model_config.h"
#include "core/model/pretrain_shape.h"
#include "core/train/options.h"

namespace statescope {

class JsonFields;
class RecurrentLM;

// The model's fields (PretrainShape, core/model/pretrain_shape.h) and the training schedule.
struct PretrainSpec : PretrainShape {
  // steps, batch, lr, warmup, min_lr_ratio, weight_decay, grad_clip: `statescope-cli pretrain`'s
  // defaults (500 steps, batch 16, lr 1e-3, no warmup). T and seed come from the run.
  TrainOptions train;

  // The architecture's config (byte-level: vocab 256, tied embeddings), checked: Error starting
  // with `where` when a size is out (headdim not dividing expand x d_model, ...).
  ModelConfig config(const std::string& where) const;
  // Every field in range (config() included): Error "<where>: field 'pretrain.<name>' ...". Fields of the other architecture left at their
  // defaults are not looked at; parse() refuses them when given.
  void check(const std::string& where) const;
  // The `statescope-cli pretrain` command that trains the same model into `out`.
  std::string command(int64_t T, uint64_t seed, const std::string& data, const std::string& out) const;

  // Sweep fields ("pretrain.<name>"), and setting one; false: not a sweepable field.
  static const std::vector<std::string>& sweep_fields();
  bool set(const std::string& field, double v);
};

// Which architectures own a field: pretrain_fields() (core/model/pretrain_shape.h).

// The training schedule's fields a spec's training sections share (posttrain, pretrain): steps,
// batch, lr, warmup, min_lr_ratio, weight_decay, grad_clip, each read into `t` when present.
void read_schedule(const JsonFields& f, TrainOptions& t);

// Parses the section (every key optional, unknown keys refused by name: "pretrain.d_stat").
PretrainSpec parse_pretrain(const JsonFields& f);

// The one builder of a fresh model (`statescope-cli pretrain` and a spec's pretrain section): the
// spec's config (checked; errors start with `where`), initialised from `seed` with its A range; on
// the CPU in float32 (pretrain_model.cpp, LibTorch: include core/model/recurrent_lm.h to use it).
RecurrentLM pretrain_model(const PretrainSpec& ps, uint64_t seed, const std::string& where);

}  // namespace statescope
