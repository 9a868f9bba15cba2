// attention.h — a recurrent head written as attention. A Mamba-2 head's output without the D term is
//   y_t = sum_{s<=t} M[t, s] x_s + a_t (C_t . h_{-1}),
//   M[t, s] = (C_t . B_s) dt_s exp(sum_{s<r<=t} dt_r A),   a_t = exp(sum_{r<=t} dt_r A),
// so M says how much position t reads position s, and a_t how much of the initial state is left at t
// (its own column). Computed exactly from the model's own dt, A, B, C of one sequence (the scan's
// inputs as the forward computes them, mamba2/model.h). LibTorch.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "core/analyses/attention/result.h"
#include "core/data/corpus.h"
#include "core/model/recurrent_lm.h"

namespace statescope {

struct EffectiveAttention {
  int64_t layer = 0, head = 0, length = 0;
  torch::Tensor M;     // [L, L] float64, zero above the diagonal
  torch::Tensor init;  // [L] float64: a_t, the weight the initial state keeps at t
  // Per distance d = t - s, the mean over t of M[t, t - d]'s magnitude ("how far back does it look"). [L]
  torch::Tensor by_distance;
};

// (kMaxAttentionLength and the binning's sizes: result.h.)
// The first position of every bin of a sequence of L tokens: 0..L-1 up to kMaxAttentionLength.
std::vector<int64_t> attention_bins(int64_t L);

// Mamba-1 has no heads: its state is per channel c, and each of its d_state dimensions n decays at
// its own rate, so M_c[t, s] = dt_{s,c} sum_n C_t[n] B_s[n] exp(A_{c,n} sum_{s<r<=t} dt_{r,c}). A
// "head" is then a channel group of the state layout (state_layout.h): M is the mean of M_c over its
// channels and `init` the mean of exp(A_{c,n} sum_{r<=t} dt_{r,c}) over its channels and n.
//   dt_c [L], A_c [N], B, C [L, N] (float64) -> M_c [L, L]; decay_c, when given, gets
//   exp(A_{c,n} sum_{r<=t} dt_{r,c}) [L, N] (what multiplies C_t[n] h_{-1}[c, n]).
torch::Tensor mamba1_channel_attention(const torch::Tensor& dt_c, const torch::Tensor& A_c, const torch::Tensor& B,
                                       const torch::Tensor& C, torch::Tensor* decay_c = nullptr);

// tokens [1, L] (L <= kMaxAttentionLength), `init` the initial state (nullptr: zeros); `head` is a
// Mamba-2 head or a Mamba-1 channel group. Throws Error for another architecture (names it), a layer
// or head out of range, or a longer sequence.
EffectiveAttention effective_attention(RecurrentLM& model, const torch::Tensor& tokens, int64_t layer, int64_t head,
                                       const ModelState* init = nullptr);
// Several heads of one layer from one forward; progress(done, heads) before each, false cancels.
std::vector<EffectiveAttention> effective_attention(RecurrentLM& model, const torch::Tensor& tokens, int64_t layer,
                                                    const std::vector<int64_t>& heads, const ModelState* init = nullptr,
                                                    const std::function<bool(int64_t, int64_t)>& progress = {});

// The first `length` tokens of `docs`, in order (the sequence the analysis and `attention` read).
std::vector<int32_t> leading_tokens(const std::vector<Document>& docs, int64_t length);

// The record form (result.h) of `tokens` from the zero state: one head, or every head of the layer
// when `head` < 0. Up to kMaxAttentionLength tokens M is exact; longer (to kMaxBinnedAttentionLength)
// it is binned (attention_bins): each cell the mean |M| over its pairs s <= t, computed a block of rows
// at a time (memory bounded by the bins, not L x L); by_distance stays exact per distance.
// Memory is checked before anything is allocated (attention_memory_bytes against what the machine
// has free; core/base/memory_budget.h) and M is computed a block of rows at a time; progress(done,
// total) counts blocks over every head, each well under a second apart, and false cancels.
AttentionResult attention_result(RecurrentLM& model, const std::vector<int32_t>& tokens, int64_t layer, int64_t head,
                                 const std::function<bool(int64_t, int64_t)>& progress = {});

// What attention_result holds at once for L tokens and `heads` heads: the result (M [heads, B, B],
// init, by_distance, in doubles), a head's bin sums when binned, and one block's temporaries.
uint64_t attention_memory_bytes(int64_t L, int64_t heads);
int64_t attention_block_rows(int64_t L);   // rows of M per block: about 2M cells
int64_t attention_bins_count(int64_t L);   // B: L up to kMaxAttentionLength, at most 1024 beyond

}  // namespace statescope
