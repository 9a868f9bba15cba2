// cpu_loops.h — the CPU fast path's inner loops as plain C++ over contiguous float buffers (no
// LibTorch; the conv and norm keep small per-call scratch): the scan's per-token steps, the causal depthwise conv + SiLU and the
// gated RMSNorm, each with its backward. The autograd wrappers that own the tensors are
// cpu_scan.cpp (the scan) and cpu_ops.cpp (conv, norm). Built -O3 with an AVX2+FMA clone picked at
// load time on x86-64. Sums run in 8 independent lanes (then a tree), so they vectorize; the order
// of additions differs from a left-to-right sum by float32 rounding only.
#pragma once
#include <cstdint>

namespace statescope::cpu {

// --- the scan: one token of one (batch, head); S is the P x N state, row p at S + p N -------------

// S = a S + (dt x) B^T; y = S C.  x [P], B/C [N], y [P].
void scan_step(float* S, const float* x, float dt, float a, const float* B, const float* C, float* y, int64_t P,
               int64_t N);

// out = a in + (dt x) B^T, the state alone (the backward's recompute).
void scan_step_state(float* out, const float* in, const float* x, float dt, float a, const float* B, int64_t P,
                     int64_t N);

// One token of the backward walk. On entry R = dLoss/dS_t without this token's output term; adds
// dy C^T, writes dx [P], this head's dB/dC rows [N], ddt_x = sum_p x_p (R B)_p and da = sum(R S_{t-1});
// leaves R = a R (the share of dLoss/dS_{t-1} through S_t).
void scan_step_back(float* R, const float* S, const float* Sprev, const float* x, float dt, float a, const float* B,
                    const float* C, const float* dy, float* dx, float* dB, float* dC, int64_t P, int64_t N,
                    float& ddt_x, float& da);

// scan_step (with y) that also measures the new state: sq = ||S_t||^2 and, when dsq is given,
// *dsq = ||S_t - S_{t-1}||^2; each row's eight lanes (N/8 terms each) summed in float32, a block of
// eight rows' sums added in float32, blocks in float64.
void scan_step_norms(float* S, const float* x, float dt, float a, const float* B, const float* C, float* y, int64_t P,
                     int64_t N, double& sq, double* dsq);

// --- causal depthwise conv over time, then SiLU -----------------------------------------------------
// Token-major rows: input row t of one sequence at in + t * in_stride (channels contiguous, C of
// them); the K-1 inputs before t = 0 come from conv0 [C, K-1] (channel-major, as the model's conv
// state; null = zeros). w [C, K], bias [C] or null.
//   pre[t, c] = bias[c] + sum_k w[c, k] * in[t - (K-1) + k, c];  out[t, c] = silu(pre[t, c]).
// out rows at out + t * out_stride (0: C). One sequence of L tokens per call. Every channel is
// independent: a block of channels is the call with in, conv0, w, bias and out offset to its first
// channel (and the strides of the whole rows), giving the same numbers.
void conv_silu(const float* in, int64_t in_stride, const float* conv0, const float* w, const float* bias, float* out,
               int64_t L, int64_t C, int64_t K, int64_t out_stride = 0);

// The conv state after one sequence: the newest K-1 inputs (times L-(K-1) .. L-1, reaching into
// conv0 when L < K-1) as fin [C, K-1], channel-major.
void conv_final_state(const float* in, int64_t in_stride, const float* conv0, float* fin, int64_t L, int64_t C,
                      int64_t K);

// Backward of conv_silu for one sequence, given dout [L, C] (rows at dout + t dout_stride; 0: C), per
// channel independent like the forward. Writes din [L, C]
// (rows at din + t din_stride; overwritten), dconv0 [C, K-1] (overwritten; may be null), and adds into
// dw [C, K] and dbias [C] (may be null). dconv_fin [C, K-1] (may be null) is the gradient of the
// final conv state (the newest K-1 inputs) and is added into din / dconv0.
void conv_silu_back(const float* in, int64_t in_stride, const float* conv0, const float* w, const float* bias,
                    const float* dout, const float* dconv_fin, float* din, int64_t din_stride, float* dconv0, float* dw,
                    float* dbias, int64_t L, int64_t C, int64_t K, int64_t dout_stride = 0);

// --- gated RMSNorm: g = y * silu(z); out = g / rms(g over each group of D/ng) * w -----------------
// Rows of D values: y at y + r D, z at z + r z_stride, out at out + r D; w [D]. rstd [rows, ng]
// receives 1/rms per group (for the backward).
void gated_norm(const float* y, const float* z, int64_t z_stride, const float* w, float* out, float* rstd,
                int64_t rows, int64_t D, int64_t ng, float eps);

// Backward: from dout rows, writes dy rows (at dy + r D) and dz rows (at dz + r dz_stride) and adds
// into dw [D].
void gated_norm_back(const float* y, const float* z, int64_t z_stride, const float* w, const float* rstd,
                     const float* dout, float* dy, float* dz, int64_t dz_stride, float* dw, int64_t rows, int64_t D,
                     int64_t ng);

}  // namespace statescope::cpu
