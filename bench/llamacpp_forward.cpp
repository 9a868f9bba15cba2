// llamacpp_forward.cpp — the llama.cpp side of bench/run_llamacpp.sh: one llama_decode of a whole
// batch x length, every position's logits, on the CPU. Built by run_llamacpp.sh with g++ against the
// libllama/libggml it builds from llama-cpp-python's vendored llama.cpp (not part of the CMake build).
//
// Usage: llamacpp_forward MODEL.gguf TOKENS.i32 BATCH LENGTH THREADS ITERS [LOGITS_OUT]
//   TOKENS.i32  int32 little-endian token ids, BATCH x LENGTH (sequence b is row b)
//   LOGITS_OUT  if given, the last decode's logits as float32 (BATCH, LENGTH, VOCAB), the order
//               bench_forward's BENCH_LOGITS_OUT writes
// Prints one JSON line {"impl": "llama.cpp", "threads": T, "vocab": V, "fwd_tok_s": ..., "system": ...}
// (system: ggml's CPU features). fwd_tok_s is BATCH*LENGTH over the best of ITERS decodes, after one
// warm-up decode. Before each decode the recurrent state is cleared (llama_memory_clear), so every
// decode is a fresh forward from position 0, as statescope's is; only llama_decode (with
// llama_synchronize) is timed.
//
// The batch holds all BATCH sequences (seq_id b, positions 0..LENGTH-1, an output at every position):
// a recurrent model keeps one state per sequence, so the context has n_seq_max = BATCH, and
// n_batch = n_ubatch = BATCH*LENGTH so that one ubatch (an equal split, LENGTH tokens per sequence)
// runs the whole forward.
#include <llama.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

void quiet_log(ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

int fail(const std::string& msg) {
  std::fprintf(stderr, "llamacpp_forward: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7 && argc != 8) {
    std::fprintf(stderr, "usage: llamacpp_forward MODEL.gguf TOKENS.i32 BATCH LENGTH THREADS ITERS [LOGITS_OUT]\n");
    return 2;
  }
  const char* model_path = argv[1];
  const char* tokens_path = argv[2];
  const int B = std::stoi(argv[3]), L = std::stoi(argv[4]), threads = std::stoi(argv[5]), iters = std::stoi(argv[6]);
  const int n_tok = B * L;

  std::vector<llama_token> ids(static_cast<size_t>(n_tok));
  {
    std::ifstream in(tokens_path, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(ids.data()), static_cast<std::streamsize>(ids.size() * sizeof(llama_token))))
      return fail(std::string(tokens_path) + ": expected " + std::to_string(n_tok) + " int32 tokens");
  }

  llama_log_set(quiet_log, nullptr);
  llama_backend_init();

  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(model_path, mp);
  if (!model) return fail(std::string("cannot load ") + model_path);
  const int V = llama_vocab_n_tokens(llama_model_get_vocab(model));
  for (llama_token t : ids)
    if (t < 0 || t >= V) return fail("token id " + std::to_string(t) + " out of the vocabulary (" + std::to_string(V) + ")");

  llama_context_params cp = llama_context_default_params();
  cp.n_seq_max = static_cast<uint32_t>(B);                 // one recurrent state per sequence
  cp.n_ctx = static_cast<uint32_t>(std::max(n_tok, 256));  // per sequence: n_ctx / n_seq_max >= L
  cp.n_batch = static_cast<uint32_t>(n_tok);               // the whole batch in one llama_decode ...
  cp.n_ubatch = static_cast<uint32_t>(n_tok);              // ... and in one ubatch
  cp.n_outputs_max = 0;                                    // = n_batch: an output at every position
  cp.n_outputs_max_per_seq = 0;
  cp.n_threads = threads;
  cp.n_threads_batch = threads;
  cp.no_perf = true;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) return fail("cannot create the context");

  llama_batch batch = llama_batch_init(n_tok, 0, 1);
  batch.n_tokens = n_tok;
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < L; ++t) {
      const int i = b * L + t;
      batch.token[i] = ids[static_cast<size_t>(i)];
      batch.pos[i] = t;
      batch.n_seq_id[i] = 1;
      batch.seq_id[i][0] = b;
      batch.logits[i] = 1;
    }
  }

  using clk = std::chrono::steady_clock;
  double best = 1e30;
  for (int it = 0; it < iters + 1; ++it) {  // the first decode is the warm-up
    llama_memory_clear(llama_get_memory(ctx), true);
    const auto t0 = clk::now();
    const int rc = llama_decode(ctx, batch);
    llama_synchronize(ctx);
    const double dt = std::chrono::duration<double>(clk::now() - t0).count();
    if (rc != 0) return fail("llama_decode returned " + std::to_string(rc));
    if (it > 0) best = std::min(best, dt);
  }

  if (argc == 8) {
    std::ofstream out(argv[7], std::ios::binary);
    for (int i = 0; i < n_tok; ++i) {
      const float* row = llama_get_logits_ith(ctx, i);
      if (!row) return fail("no logits for batch position " + std::to_string(i));
      out.write(reinterpret_cast<const char*>(row), static_cast<std::streamsize>(V * sizeof(float)));
    }
    if (!out) return fail(std::string("cannot write ") + argv[7]);
  }

  std::printf("{\"impl\": \"llama.cpp\", \"threads\": %d, \"vocab\": %d, \"fwd_tok_s\": %.3f, \"system\": \"%s\"}\n",
              threads, V, n_tok / best, llama_print_system_info());
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
