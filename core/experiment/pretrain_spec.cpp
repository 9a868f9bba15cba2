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

// The architecture named by `arch` reads its own fields (Arch<Config>::from_pretrain, in its folder).
ModelConfig PretrainSpec::config(const std::string& where) const {
  std::optional<ModelConfig> c;
  for_each_architecture([&](auto t) {
    using A = Arch<typename decltype(t)::type>;
    if (!c && arch == A::key) {
      auto x = A::from_pretrain(*this);
      x.validate(where);
      c = x;
    }
  });
  if (!c) throw Error(where + ": field 'arch' must be one of " + known_architectures() + ", got \"" + arch + "\"");
  return *c;
}

bool PretrainField::owned_by(const std::string& a) const { return std::find(archs.begin(), archs.end(), a) != archs.end(); }

const std::vector<PretrainField>& pretrain_fields() {
  static const std::vector<std::string> m2{"mamba2"}, m1{"mamba1"}, mamba{"mamba2", "mamba1"}, gla{"gla"},
      gdn{"gated_deltanet"}, fla{"gla", "gated_deltanet"}, a_range{"mamba2", "gated_deltanet"},
      a_log{"mamba2", "mamba1", "gated_deltanet"};
  static const std::vector<PretrainField> f{
      {"headdim", "--headdim", "Mamba-2", m2},
      {"ngroups", "--ngroups", "Mamba-2", m2},
      {"chunk_size", "--chunk-size", "Mamba-2", m2},
      {"dt_limit", "--dt-limit", "Mamba-2", m2},
      {"a_min", "--a-min", "Mamba-2 and Gated DeltaNet", a_range},
      {"a_max", "--a-max", "Mamba-2 and Gated DeltaNet", a_range},
      {"dt_rank", "--dt-rank", "Mamba-1", m1},
      {"d_state", "--d-state", "Mamba", mamba},
      {"expand", "--expand", "Mamba", mamba},
      {"dt_min", "--dt-min", "Mamba", mamba},
      {"dt_max", "--dt-max", "Mamba", mamba},
      {"freeze_A", "--freeze-A", "Mamba and Gated DeltaNet", a_log},
      {"num_heads", "--heads", "GLA and Gated DeltaNet", fla},
      {"expand_v", "--expand-v", "GLA and Gated DeltaNet", fla},
      {"mlp_size", "--mlp-size", "GLA and Gated DeltaNet", fla},
      {"expand_k", "--expand-k", "GLA", gla},
      {"short_conv", "--short-conv", "GLA", gla},
      {"clamp_min", "--clamp-min", "GLA", gla},
      {"head_dim", "--head-dim", "Gated DeltaNet", gdn},
      {"v_heads", "--v-heads", "Gated DeltaNet", gdn},
      {"no_short_conv", "--no-short-conv", "Gated DeltaNet", gdn},
  };
  return f;
}

void PretrainSpec::check(const std::string& where) const {
  auto fail = [&](const char* field, const std::string& why) {
    throw Error(where + ": field 'pretrain." + field + "' " + why);
  };
  if (!(dt_min > 0 && dt_max >= dt_min && dt_max <= 1e3))
    fail("dt_min", "and dt_max need 0 < dt_min <= dt_max <= 1000, got " + num(dt_min) + " and " + num(dt_max));
  if (!(dt_limit >= 0 && dt_limit <= 1e3)) fail("dt_limit", "needs 0 <= dt_limit <= 1000 (0: none), got " + num(dt_limit));
  if (!(a_min > 0 && a_max >= a_min && a_max <= 1e4))
    fail("a_min", "and a_max need 0 < a_min <= a_max <= 10000, got " + num(a_min) + " and " + num(a_max));
  if (dt_rank < 0) fail("dt_rank", "needs 0 (auto) or a positive rank, got " + std::to_string(dt_rank));
  if (!(clamp_min <= 0 && clamp_min >= -100)) fail("clamp_min", "needs a log-gate floor in [-100, 0] (0: none), got " + num(clamp_min));
  if (mlp_size < 0) fail("mlp_size", "needs 0 (fla's default) or a positive width, got " + std::to_string(mlp_size));
  if (v_heads < 0) fail("v_heads", "needs 0 (as num_heads) or a positive count, got " + std::to_string(v_heads));
  if (train.steps < 1) fail("steps", "must be >= 1, got " + std::to_string(train.steps));
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
    if (arch == A::key) o << A::pretrain_flags(*this);
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
  f.only({"arch", "d_model", "n_layer", "d_state", "expand", "d_conv", "headdim", "ngroups", "chunk_size", "dt_rank",
          "dt_min", "dt_max", "dt_limit", "a_min", "a_max", "freeze_A", "num_heads", "expand_k", "expand_v", "short_conv",
          "clamp_min", "mlp_size", "head_dim", "v_heads", "no_short_conv", "steps", "batch", "lr", "warmup", "min_lr_ratio",
          "weight_decay", "grad_clip"});
  PretrainSpec p;
  f.read("arch", p.arch);
  if (!is_architecture(p.arch)) f.fail("arch", "must be one of " + known_architectures() + ", got \"" + p.arch + "\"");
  // A field of another architecture is named, never ignored.
  for (const auto& field : pretrain_fields())
    if (!field.owned_by(p.arch) && f.has(field.spec))
      f.fail(field.spec, std::string("is a ") + field.whose + " setting; arch \"" + p.arch + "\" has none");
  f.read("d_model", p.d_model);
  f.read("n_layer", p.n_layer);
  f.read("d_state", p.d_state);
  f.read("expand", p.expand);
  f.read("d_conv", p.d_conv);
  f.read("headdim", p.headdim);
  f.read("ngroups", p.ngroups);
  f.read("chunk_size", p.chunk_size);
  f.read("dt_rank", p.dt_rank);
  f.read("dt_min", p.dt_min);
  f.read("dt_max", p.dt_max);
  f.read("dt_limit", p.dt_limit);
  f.read("a_min", p.a_min);
  f.read("a_max", p.a_max);
  f.read("freeze_A", p.freeze_A);
  f.read("num_heads", p.num_heads);
  f.read("expand_k", p.expand_k);
  f.read("expand_v", p.expand_v);
  f.read("short_conv", p.short_conv);
  f.read("mlp_size", p.mlp_size);
  f.read("clamp_min", p.clamp_min);
  f.read("head_dim", p.head_dim);
  f.read("v_heads", p.v_heads);
  f.read("no_short_conv", p.no_short_conv);
  p.expand_v_set = f.has("expand_v");
  read_schedule(f, p.train);
  p.train.freeze_A_log = p.freeze_A;
  p.check(f.src());
  return p;
}

}  // namespace statescope
