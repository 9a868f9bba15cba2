// section.cpp — the shared pieces of the analyses' spec sections (section.h). No LibTorch.
#include "core/analyses/section.h"

#include <cmath>
#include <string>

#include "core/base/json_fields.h"

namespace statescope {

void positive(const JsonFields& f, const char* key, int64_t v) {
  if (v <= 0) f.fail(key, "must be > 0, got " + std::to_string(v));
}

TaskFinetune parse_finetune(const JsonFields& f, TaskFinetune o) {
  f.only({"steps", "T", "batch", "lr", "warmup", "examples", "loss_on"});
  f.read("steps", o.train.steps);
  f.read("T", o.train.T);
  f.read("batch", o.train.batch);
  f.read("lr", o.train.lr);
  f.read("warmup", o.train.warmup);
  f.read("examples", o.examples);
  const std::string on = f.get("loss_on", std::string(o.train.loss_mask ? "answer" : "all"));
  if (on != "answer" && on != "all") f.fail("loss_on", "must be \"answer\" or \"all\", got \"" + on + "\"");
  o.train.loss_mask = on == "answer";
  positive(f, "steps", o.train.steps);
  positive(f, "batch", o.train.batch);
  positive(f, "examples", o.examples);
  if (o.train.T < 2) f.fail("T", "must be >= 2, got " + std::to_string(o.train.T));
  if (!(o.train.lr > 0) || !std::isfinite(o.train.lr)) f.fail("lr", "must be a finite number > 0");
  if (o.train.warmup < 0) f.fail("warmup", "must be >= 0, got " + std::to_string(o.train.warmup));
  return o;
}

}  // namespace statescope
