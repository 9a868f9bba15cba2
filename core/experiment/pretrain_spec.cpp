// pretrain_spec.cpp — the "pretrain" section (see pretrain_spec.h). No LibTorch.
#include "core/experiment/pretrain_spec.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "core/base/error.h"
#include "core/base/json_fields.h"
#include "core/model/architectures.h"

namespace statescope {

namespace {

const auto num = pretrain_number;

}  // namespace

ModelConfig PretrainSpec::config(const std::string& where) const { return shape_config(*this, where); }

void PretrainSpec::check(const std::string& where) const {
  check_shape(*this, where, "pretrain.");
  if (train.steps < 1) throw Error(where + ": field 'pretrain.steps' must be >= 1, got " + std::to_string(train.steps));
  TrainOptions t = train;
  t.T = 2;  // the run's; checked with the spec's T
  try {
    check_train_options(t);
  } catch (const Error& e) {
    throw Error(where + ": pretrain: " + e.what());
  }
  (void)config(where + ": pretrain");
}

std::string PretrainSpec::command(int64_t T, uint64_t seed, const std::string& data, const std::string& out) const {
  std::ostringstream o;
  o << "statescope-cli pretrain --out " << out << " --arch " << arch << " --T " << T << " --steps " << train.steps
    << " --batch " << train.batch << " --lr " << num(train.lr) << " --warmup " << train.warmup << " --min-lr-ratio "
    << num(train.min_lr_ratio) << " --weight-decay " << num(train.weight_decay) << " --grad-clip " << num(train.grad_clip)
    << " --d-model " << d_model << " --n-layer " << n_layer << " --d-conv " << d_conv;
  for_each_architecture([&](auto t) {
    using A = Arch<typename decltype(t)::type>;
    if (arch == A::names.key) o << A::pretrain_flags(*this);
  });
  o << " --seed " << seed;
  if (data != "embedded") o << " --data " << data;
  return o.str();
}

const std::vector<std::string>& PretrainSpec::sweep_fields() {
  static const std::vector<std::string> f{"pretrain.d_model", "pretrain.n_layer", "pretrain.d_state", "pretrain.headdim",
                                          "pretrain.expand",  "pretrain.steps",   "pretrain.batch",   "pretrain.lr",
                                          "pretrain.warmup",  "pretrain.dt_min",  "pretrain.dt_max",  "pretrain.dt_limit",
                                          "pretrain.a_min",   "pretrain.a_max"};
  return f;
}

bool PretrainSpec::set(const std::string& field, double v) {
  const auto n = static_cast<int64_t>(v);
  if (field == "pretrain.d_model") d_model = n;
  else if (field == "pretrain.n_layer") n_layer = n;
  else if (field == "pretrain.d_state") d_state = n;
  else if (field == "pretrain.headdim") headdim = n;
  else if (field == "pretrain.expand") expand = n;
  else if (field == "pretrain.steps") train.steps = n;
  else if (field == "pretrain.batch") train.batch = n;
  else if (field == "pretrain.lr") train.lr = v;
  else if (field == "pretrain.warmup") train.warmup = n;
  else if (field == "pretrain.dt_min") dt_min = v;
  else if (field == "pretrain.dt_max") dt_max = v;
  else if (field == "pretrain.dt_limit") dt_limit = v;
  else if (field == "pretrain.a_min") a_min = v;
  else if (field == "pretrain.a_max") a_max = v;
  else return false;
  return true;
}

void read_schedule(const JsonFields& f, TrainOptions& t) {
  f.read("steps", t.steps);
  f.read("batch", t.batch);
  f.read("lr", t.lr);
  f.read("warmup", t.warmup);
  f.read("min_lr_ratio", t.min_lr_ratio);
  f.read("weight_decay", t.weight_decay);
  f.read("grad_clip", t.grad_clip);
}

PretrainSpec parse_pretrain(const JsonFields& f) {
  std::vector<std::string> keys = shape_keys();
  for (const char* k : {"steps", "batch", "lr", "warmup", "min_lr_ratio", "weight_decay", "grad_clip"}) keys.push_back(k);
  f.only(keys);
  PretrainSpec p;
  read_shape(f, p);
  read_schedule(f, p.train);
  p.train.freeze_A_log = p.freeze_A;
  p.check(f.src());
  return p;
}

}  // namespace statescope
