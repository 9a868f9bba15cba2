// blocks/hybrid_mamba2.h — the Mamba-2 layers of a hybrid whose config names them as Nemotron-H and
// Granite 4.0-H do (heads x head dim wide, n_groups groups of d_state, the conv kernel, the chunk,
// both biases, the norm's eps, the dt limits): their Mamba2Config and one layer's parameter count.
// Config level, no LibTorch.
#pragma once
#include <cstdint>

#include "core/model/blocks/kinds.h"
#include "core/model/mamba2/config.h"

namespace statescope {

// C has d_model, vocab_size, d_state, mamba_heads, mamba_head_dim, n_groups, conv_kernel, chunk_size,
// conv_bias, proj_bias, norm_eps, dt_limit_lo, dt_limit_hi and count(LayerKind).
template <class C>
Mamba2Config hybrid_mamba2_layers(const C& c) {
  Mamba2Config m;
  m.n_layer = c.count(LayerKind::Mamba2), m.vocab_size = c.vocab_size;
  m.d_model = c.d_model, m.d_state = c.d_state, m.headdim = c.mamba_head_dim, m.ngroups = c.n_groups;
  m.d_conv = c.conv_kernel, m.chunk_size = c.chunk_size, m.d_inner_override = c.mamba_heads * c.mamba_head_dim;
  m.conv_bias = c.conv_bias, m.proj_bias = c.proj_bias, m.norm_eps = c.norm_eps, m.norm_per_group = true;
  m.dt_limit_lo = c.dt_limit_lo, m.dt_limit_hi = c.dt_limit_hi;
  return m;
}

// One Mamba-2 mixer's parameters (in_proj, conv1d, dt_bias, A_log, D, the gated norm, out_proj; the
// block's own norm not counted).
inline int64_t mamba2_mixer_parameters(const Mamba2Config& m) {
  const int64_t H = m.d_model;
  return m.in_proj_rows() * H + (m.proj_bias ? m.in_proj_rows() + H : 0) + m.conv_dim() * m.d_conv + (m.conv_bias ? m.conv_dim() : 0) +
         3 * m.nheads() + m.d_inner() + m.d_inner() * H;
}

}  // namespace statescope
