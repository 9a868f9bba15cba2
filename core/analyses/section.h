// section.h — what the analyses' spec sections share (each record.cpp reads its own section):
// the positivity check and the task fine-tuning entry of passkey and bAbI. No LibTorch.
#pragma once
#include <cstdint>

#include "core/analyses/options.h"

namespace statescope {

class JsonFields;

// Throws the field's Error unless v > 0.
void positive(const JsonFields& f, const char* key, int64_t v);

// "finetune": {"steps", "T", "batch", "lr", "warmup", "examples", "loss_on": "answer" | "all"}, each
// given knob over `defaults` (the verb's: PasskeyOptions / BabiOptions::default_finetune).
TaskFinetune parse_finetune(const JsonFields& f, TaskFinetune defaults);

}  // namespace statescope
