// test_threads.cpp — the plain-loop kernels on more than one intra-op thread.
//
// at::parallel_for is inline in LibTorch's headers: a file compiled without OpenMP runs the whole
// range on the calling thread, as every kernel of ours did until the build passed -fopenmp. The first
// test is the oracle for that (it fails on such a build); the others run the Mamba-2 mixer node and
// Mamba-1's selective scan, forward and backward, on one thread and on two, and ask for the same
// numbers bit for bit: the work is split into independent (batch, head), (batch, channel) or
// fixed-size row blocks whose partial sums are added in a fixed order, so the thread count must not
// change a single bit.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/Parallel.h>
#include <algorithm>
#include <atomic>
#include <set>
#include <mutex>

#include "core/model/mamba1/selective_scan.h"
#include "core/model/mamba2/cpu_mixer.h"

using namespace statescope;

namespace {

// Sets the intra-op thread count for a scope.
struct Threads {
  int before = at::get_num_threads();
  explicit Threads(int n) { at::set_num_threads(n); }
  ~Threads() { at::set_num_threads(before); }
};

// Forward + backward of `f` (which builds its outputs from `inputs`, leaves with requires_grad):
// every output and every input's gradient, in order. Upstream gradients are fixed random tensors.
template <class F>
std::vector<torch::Tensor> outputs_and_grads(std::vector<torch::Tensor> inputs, F f) {
  for (auto& t : inputs) t = t.clone().requires_grad_(true);
  std::vector<torch::Tensor> outs = f(inputs);
  torch::manual_seed(11);
  torch::Tensor loss = torch::zeros({}, torch::kFloat64);
  std::vector<torch::Tensor> r;
  for (auto& o : outs) {
    r.push_back(o.detach().clone());
    if (o.requires_grad()) loss = loss + (o.to(torch::kFloat64) * torch::randn(o.sizes(), torch::kFloat64)).sum();
  }
  loss.backward();
  for (auto& t : inputs) r.push_back(t.grad().defined() ? t.grad().clone() : torch::Tensor());
  return r;
}

void expect_identical(const std::vector<torch::Tensor>& one, const std::vector<torch::Tensor>& two) {
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) {
    ASSERT_EQ(one[i].defined(), two[i].defined()) << "tensor " << i;
    if (one[i].defined())
      EXPECT_TRUE(torch::equal(one[i], two[i]))
          << "tensor " << i << " differs between 1 and 2 threads: max |diff| "
          << (one[i].to(torch::kFloat64) - two[i].to(torch::kFloat64)).abs().max().item<double>();
  }
}

template <class F>
void expect_same_on_one_and_two_threads(const std::vector<torch::Tensor>& in, F f) {
  std::vector<torch::Tensor> one, two;
  {
    Threads t(1);
    one = outputs_and_grads(in, f);
  }
  {
    Threads t(2);
    two = outputs_and_grads(in, f);
  }
  expect_identical(one, two);
}

TEST(Threads, ParallelForSplitsOverTheIntraOpThreads) {
  Threads two(2);
  ASSERT_EQ(at::get_num_threads(), 2);
  std::mutex mu;
  std::set<int> seen;
  at::parallel_for(0, 64, 1, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> g(mu);
    seen.insert(at::get_thread_num());
  });
  EXPECT_EQ(seen.size(), 2u) << "at::parallel_for ran on one thread: this file was compiled without OpenMP "
                                "(-fopenmp), so every plain-loop kernel runs single-threaded";
}

TEST(Threads, Mamba2MixerNodeGivesTheOneThreadNumbersOnTwo) {
  CpuMixerDims d;
  d.H = 6, d.P = 8, d.G = 2, d.N = 7, d.norm_groups = 2, d.clamp_dt = true, d.dt_lo = 0.002, d.dt_hi = 0.05;
  const int64_t b = 3, L = 301, Di = d.H * d.P, Cd = Di + 2 * d.G * d.N, R = Di + Cd + d.H, K = 4;
  torch::manual_seed(3);
  // zxbcdt, conv_w, conv_b, dt_bias, A_log, D, norm_w, conv0, h0 (b L = 903 rows: four row blocks)
  std::vector<torch::Tensor> in{torch::randn({b, L, R}),         torch::randn({Cd, 1, K}) * 0.5,
                                torch::randn({Cd}) * 0.1,          torch::randn({d.H}) - 4.0,
                                torch::randn({d.H}),               torch::randn({d.H}),
                                torch::randn({Di}) + 1.0,          torch::randn({b, Cd, K - 1}),
                                torch::randn({b, d.H, d.P, d.N}) * 0.5};
  auto f = [&](const std::vector<torch::Tensor>& t) {
    auto o = cpu_mixer_core(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], d, true);
    return std::vector<torch::Tensor>{o.out, o.ssm, o.conv, o.state_norm, o.delta_norm};
  };
  expect_same_on_one_and_two_threads(in, f);
}

TEST(Threads, Mamba1SelectiveScanGivesTheOneThreadNumbersOnTwo) {
  const int64_t b = 2, L = 53, Di = 40, N = 5, groups = 4;
  torch::manual_seed(4);
  // x, dt, A, B, C, D, h0
  std::vector<torch::Tensor> in{torch::randn({b, L, Di}),        torch::rand({b, L, Di}) * 0.1,
                                -torch::rand({Di, N}) - 0.1,     torch::randn({b, L, N}),
                                torch::randn({b, L, N}),         torch::randn({Di}),
                                torch::randn({b, Di, N})};
  auto f = [&](const std::vector<torch::Tensor>& t) {
    auto o = selective_scan_cpu(t[0], t[1], t[2], t[3], t[4], t[5], t[6], groups, true);
    return std::vector<torch::Tensor>{o.y, o.final_state, o.state_norm, o.delta_norm};
  };
  expect_same_on_one_and_two_threads(in, f);
}

}  // namespace
