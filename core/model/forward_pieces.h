// forward_pieces.h — a forward cut at an intervention's reset period (ForwardOptions::intervention's
// reset_period k): the tokens cut at the multiples of k (counted from opt.position), each piece after a
// cut starting from `reset(previous piece's final state)` (a pure model: the zero state; a hybrid: the
// attention caches alone, recurrent layers at zero), the pieces' outputs joined along positions.
// Shared by every model behind RecurrentLM.
#pragma once
#include <functional>

#include "core/model/recurrent_lm.h"

namespace statescope {

// span(tokens piece, init, options) runs one uncut piece. Without a reset period it is called once.
ForwardOutput forward_in_pieces(
    const torch::Tensor& tokens, const ModelState* init, const ForwardOptions& opt,
    const std::function<ForwardOutput(const torch::Tensor&, const ModelState*, const ForwardOptions&)>& span,
    const std::function<ModelState(const ModelState&)>& reset);

}  // namespace statescope
