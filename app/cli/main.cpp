// main.cpp — statescope-cli: the headless front end. Verbs live in cmd_*.cpp.
// Exit codes: 0 success, 1 failure (with one line on stderr naming the cause), 2 bad usage,
// 130 cancelled by SIGINT/SIGTERM (interrupt.h).
#include <cmath>
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <cstdlib>
#include <map>
#include <set>

#include "core/base/memory_tuning.h"
#include "app/cli/commands.h"
#include "app/cli/interrupt.h"
#include "app/cli/launch.h"
#include "core/dist/comm.h"
#include "core/dist/env.h"
#include "core/base/error.h"
#include "core/base/version.h"
#include "core/compute/runtime.h"

namespace statescope::cli {
namespace {
void on_interrupt(int sig) {
  if (g_interrupts.fetch_add(1) >= 1) {  // the second one: stop now
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  static const char msg[] = "\nstatescope-cli: cancelling: every job stops at its next step and finished work stays "
                            "in the file (again to stop at once)\n";
  [[maybe_unused]] auto n = write(2, msg, sizeof msg - 1);
}
}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sa.sa_flags = SA_RESTART;  // reads and writes in flight go on (an HDF5 write must not fail with EINTR)
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}
}  // namespace statescope::cli

int main(int argc, char** argv) {
  statescope::tune_malloc_for_tensors();
  CLI::App app{"statescope-cli: length generalization lab for recurrent LMs: Mamba-2, Mamba-1, GLA, Gated DeltaNet (headless)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("statescope-cli (statescope) ") + statescope::kVersion,
                       "print the version and exit");
  int threads = 0;
  app.add_option("--threads", threads, "intra-op CPU threads (default: $STATESCOPE_THREADS or 1)")
      ->check(CLI::Range(0, 1024));
  std::string device = "cpu", precision = "fp32";
  app.add_option("--device", device, "cpu, cuda, cuda:N or auto (models, training and analyses run there)")
      ->capture_default_str();
  app.add_option("--precision", precision,
                 "fp32, or bf16: mixed precision (bf16 matmuls on the CPU's AMX or AVX512-BF16 units, fp32 with a "
                 "note where it has neither; SSM state, A, dt, norms, loss in fp32)")
      ->capture_default_str();
  int nproc = 1;
  app.add_option("--nproc", nproc,
                 "data-parallel processes on this machine (Gloo over loopback; the batch is split over them). "
                 "Under torchrun or srun, WORLD_SIZE/RANK/MASTER_ADDR/MASTER_PORT from the environment instead")
      ->capture_default_str();
  std::string scan = "auto";
  app.add_option("--scan", scan,
                 "the SSM scan: fused = statescope's own (on the CPU plain loops, on a GPU the CUDA kernels, not yet "
                 "verified on hardware), aten = ATen's chunked scan, auto = fused on the CPU, aten on a GPU")
      ->capture_default_str();
  std::string command = "statescope-cli";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  // The verbs, in the order --help lists them: name, one line of help, the function that adds its
  // flags and returns what runs it (given the command line, recorded in what it writes).
  namespace c = statescope::cli;
  using Make = c::Runner (*)(CLI::App&, const std::string&);
  const struct {
    const char* name;
    const char* help;
    Make make;
  } verbs[] = {
      {"forward", "run a model on token ids from an HDF5 file; write logits, final states, state norms",
       [](CLI::App& a, const std::string&) { return c::add_forward(a); }},
      {"info", "print a model directory's configuration and parameter count",
       [](CLI::App& a, const std::string&) { return c::add_info(a); }},
      {"models", "list the models --model can name: the committed ones and those in the Hugging Face cache",
       [](CLI::App& a, const std::string&) { return c::add_models(a); }},
      {"pretrain", "train a new byte-level model (Mamba-2, Mamba-1, GLA, Gated DeltaNet, or a Nemotron-H or Qwen3.5 hybrid) from scratch (zero initial state)", c::add_pretrain},
      {"posttrain", "continue training a model with an initial-state policy", c::add_posttrain},
      {"eval", "per-position loss, excess over the state-reset reference, and state norms far past T", c::add_eval},
      {"run", "run a whole experiment spec (post-train with each policy, evaluate all)", c::add_run},
      {"effrem", "Effective Remembrance EffRem_T(t) curves and heatmap", c::add_effrem},
      {"states", "SSM state distributions below and far beyond T, fitted Gaussian, state change per token",
       c::add_states},
      {"unexplored", "the unexplored-states detector: states outside the envelope of the training states, per position",
       c::add_unexplored},
      {"passkey", "passkey retrieval: optional fine-tuning, then the length x depth accuracy grid", c::add_passkey},
      {"copying", "synthetic copying: train fresh models with and without state passing, accuracy up to 4L",
       c::add_copying},
      {"babi", "bAbI-style 'where is X?' questions in long prose: optional fine-tuning, accuracy by length",
       c::add_babi},
      {"data", "tokenize a corpus into the token cache and show its split (documents, tokens, memory)", c::add_data},
      {"attention", "a sequence's effective attention per head (Mamba-2: M[t, s] from dt, A, B, C; a hybrid's attention layer: its softmax) to HDF5",
       c::add_attention},
      {"report", "an experiment file as one self-contained HTML page (spec, environment, runs, plots)", c::add_report},
      {"inspect", "summarise experiment files (several: one table compares their runs)", c::add_inspect},
  };
  std::map<CLI::App*, c::Runner> runners;
  for (const auto& v : verbs) {
    auto* sub = app.add_subcommand(v.name, v.help);
    runners[sub] = v.make(*sub, command);
  }
  // Every numeric flag has a range, checked before any work starts: a number must be finite and of
  // magnitude at most 1e15 (a typo like 1e308 or inf is refused by the flag's name, never handed to
  // LibTorch); flags with a tighter range say so in their own check, and core/ checks its options too.
  const CLI::Validator finite(
      [](std::string& v) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        if (end == v.c_str()) return "";  // not a number at all: CLI11's own conversion names it
        if (!std::isfinite(x) || std::abs(x) > 1e15)
          return "'" + v + "' is out of range (a finite number of magnitude at most 1e15)";
        return "";
      },
      "", "finite");
  std::vector<CLI::App*> apps{&app};
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) apps.push_back(sub);
  for (CLI::App* a : apps)
    for (CLI::Option* opt : a->get_options()) {
      const std::string type = opt->get_type_name();
      if (type.find("FLOAT") != std::string::npos || type.find("INT") != std::string::npos) opt->check(finite);
    }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  const char* world_env = std::getenv("WORLD_SIZE");
  const bool in_job = world_env && *world_env && std::string(world_env) != "1";
  // The verbs that run as data-parallel jobs; the others are refused before any process starts.
  static const std::set<std::string> parallel{"posttrain", "pretrain", "run",    "eval",   "effrem",
                                              "passkey",   "babi",     "copying", "states", "unexplored"};
  const std::string verb = app.get_subcommands().front()->get_name();
  try {
    if ((nproc != 1 || in_job) && !parallel.count(verb))
      throw statescope::Error("'" + verb + "' does not run data-parallel (posttrain, pretrain, run, eval, effrem, "
                              "passkey, babi, copying, states and unexplored do); run it as one process");
    if (nproc != 1 && !in_job) return statescope::cli::launch_local(nproc, argc, argv);
    // A rank of this launcher (or a job that says the same): WORLD_SIZE rules. Another count is a mistake.
    if (nproc != 1 && std::to_string(nproc) != world_env)
      throw statescope::Error("--nproc " + std::to_string(nproc) + " inside a job of WORLD_SIZE=" + world_env +
                              " processes: give one or the other");
  } catch (const std::exception& e) {
    std::cerr << "statescope-cli: error: " << e.what() << "\n";
    return 1;
  }
  std::string rank_prefix;
  struct LeaveJob {  // leaves the job before statics are torn down, on every path out
    ~LeaveJob() { statescope::dist::shutdown(); }
  } leave_job;
  try {
    const auto env = statescope::dist::env_from_environment();
    if (env.distributed()) {
      rank_prefix = "rank " + std::to_string(env.rank) + ": ";
      if (device == "cuda") device = "cuda:" + std::to_string(env.local_rank);  // one GPU per rank (NCCL)
      statescope::dist::init(env, device);
      if (env.rank != 0 && !std::freopen("/dev/null", "w", stdout))  // rank 0 prints the job's tables
        throw statescope::Error("rank " + std::to_string(env.rank) + ": cannot silence standard output");
    }
    statescope::configure_threads(threads);
    statescope::set_compute(device, precision);
    statescope::set_scan_kernels(scan);
    if (statescope::default_compute().bf16_fallback())
      std::cerr << "statescope-cli: note: bf16 asked, but this CPU has neither AMX nor AVX512-BF16 (bf16 would be "
                   "emulated, slower than fp32): running fp32\n";
    statescope::cli::install_interrupt_handlers();
    for (auto* sub : app.get_subcommands()) {
      const int rc = runners.at(sub)();
      // What a verb printed must have arrived: a full disk or a closed pipe on standard output is an
      // error, not exit 0 with the table lost.
      std::cout.flush();
      if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout))
        throw statescope::Error(std::string("cannot write standard output (") + std::strerror(errno ? errno : EIO) + ")");
      return statescope::cli::interrupted() ? 130 : rc;
    }
  } catch (const std::exception& e) {
    std::string msg = e.what();
    std::cerr << "statescope-cli: error: " << rank_prefix << msg.substr(0, msg.find('\n')) << "\n";
    return statescope::cli::interrupted() ? 130 : 1;
  }
  return 1;
}
