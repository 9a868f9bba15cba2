// bench_fla_scan.cpp — where a GLA / Gated DeltaNet training step spends its time on the CPU: the
// whole step (forward + backward of the model on random bytes) against its recurrences alone (the
// chunked scan forward + backward on inputs of the same sizes, every layer), paired rounds, median.
// Decides whether a CPU fast path for the scan (plain loops, as Mamba-1's and Mamba-2's) would pay,
// and each architecture's default chunk (GLA 16, Gated DeltaNet 64: the faster here).
//
// Usage: bench_fla_scan THREADS ROUNDS   (prints one line per architecture and shape)
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "core/model/gdn/delta_scan.h"
#include "core/model/gdn/model.h"
#include "core/model/gla/gla_scan.h"
#include "core/model/gla/model.h"

using namespace statescope;

namespace {

double seconds(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The model's training step on [b, L] random bytes (64-token chunks).
std::function<void()> step(RecurrentLM m, int64_t b, int64_t L) {
  auto ids = torch::randint(0, 256, {b, L}, torch::kInt64);
  return [m, ids]() mutable {
    m->zero_grad();
    ForwardOptions o;
    o.scan = ScanImpl::Chunked;
    auto out = m->forward(ids, nullptr, o);
    torch::nn::functional::cross_entropy(out.logits.reshape({-1, out.logits.size(-1)}), ids.reshape({-1})).backward();
  };
}

struct Case {
  const char* arch;
  const char* shape;
  RecurrentLM model;
  int64_t b, L, layers, H, K, V;
};

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1, rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  std::vector<Case> cases;
  {  // the embedded siblings' shapes (data/models/embedded-gla, embedded-gdn), the training batch
    GLAConfig g;
    g.d_model = 64, g.n_layer = 2, g.num_heads = 4, g.intermediate_size = 128, g.vocab_size = 256, g.tie_embeddings = true;
    cases.push_back({"gla", "tiny", GLALM(g), 64, 32, 2, 4, g.head_k_dim(), g.head_v_dim()});
    GatedDeltaNetConfig d;
    d.d_model = 64, d.n_layer = 2, d.num_heads = 4, d.head_dim = 8, d.intermediate_size = 128, d.vocab_size = 256;
    d.tie_embeddings = true;
    cases.push_back({"gated_deltanet", "tiny", GatedDeltaNetLM(d), 64, 32, 2, 4, 8, d.head_v_dim()});
    // One layer of fla-hub's 340M shapes (hidden 1024; GLA 4 heads, K 128, V 256; GDN 4 heads of 256 / 512
    // would be 6 heads in fla's default: here 4 x 128 / 256), batch 1 x 2048 tokens.
    GLAConfig G;
    G.d_model = 1024, G.n_layer = 1, G.num_heads = 4, G.vocab_size = 256, G.tie_embeddings = true;
    cases.push_back({"gla", "340M-layer", GLALM(G), 1, 2048, 1, 4, G.head_k_dim(), G.head_v_dim()});
    GatedDeltaNetConfig D;
    D.d_model = 1024, D.n_layer = 1, D.num_heads = 4, D.head_dim = 128, D.vocab_size = 256, D.tie_embeddings = true;
    cases.push_back({"gated_deltanet", "340M-layer", GatedDeltaNetLM(D), 1, 2048, 1, 4, 128, D.head_v_dim()});
  }
  for (auto& c : cases) {
    auto s = step(c.model, c.b, c.L);
    auto o = torch::TensorOptions().dtype(torch::kFloat32);
    auto q = torch::randn({c.b, c.L, c.H, c.K}, o).requires_grad_(), k = torch::randn({c.b, c.L, c.H, c.K}, o).requires_grad_();
    auto v = torch::randn({c.b, c.L, c.H, c.V}, o).requires_grad_();
    const bool gla = std::string(c.arch) == "gla";
    auto g = (gla ? -torch::rand({c.b, c.L, c.H, c.K}, o) * 0.1 : -torch::rand({c.b, c.L, c.H}, o) * 0.1).requires_grad_();
    auto beta = torch::rand({c.b, c.L, c.H}, o).requires_grad_();
    int64_t chunk = 64;
    auto scan = [&] {
      for (int64_t l = 0; l < c.layers; ++l) {
        auto out = gla ? gla_scan_chunked(q, k, v, g, {}, chunk).o : delta_scan_chunked(q, k, v, g, beta, {}, chunk).o;
        out.sum().backward();
      }
    };
    s(), scan();  // warm up
    std::vector<double> ts, tc, t16;
    for (int r = 0; r < rounds; ++r) {
      ts.push_back(seconds(s));
      chunk = 64, tc.push_back(seconds(scan));
      chunk = 16, t16.push_back(seconds(scan));
    }
    const double a = median(ts), b = median(tc), b16 = median(t16), own = gla ? b16 : b;  // the model's default chunk
    std::printf("%-15s %-11s threads %d  step %8.2f ms  its scans %8.2f ms = %5.1f%% of the step  (scans in chunks of 64: "
                "%8.2f ms, of 16: %8.2f ms; tokens %lld)\n", c.arch, c.shape, threads, a * 1e3, own * 1e3, 100 * own / a,
                b * 1e3, b16 * 1e3, static_cast<long long>(c.b * c.L));
  }
  return 0;
}
