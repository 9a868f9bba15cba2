// test_dist.cpp — data-parallel post-training through the CLI: 2 Gloo processes on localhost.
// Oracles: N steps with 2 ranks x batch b give the parameters and losses of 1 rank x batch 2b, for
// every initial-state policy (a rank that drew other data, dropped its gradients, or passed another
// row's state differs at once); a killed rank makes the other exit with a clear error well within the
// timeout; a bad MASTER_ADDR/MASTER_PORT fails naming it; a checkpoint resumes with another world size.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/model/checkpoint.h"
#include "core/store/experiment_store.h"
#include "core/store/h5file.h"
#include "tests/scratch.h"

using namespace statescope;
namespace fs = std::filesystem;

namespace {
struct Run {
  int code = -1;
  std::string output;
  double seconds = 0;
};

Run sh(const std::string& cmd) {
  Run r;
  const auto t0 = std::chrono::steady_clock::now();
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), p)) r.output += buf.data();
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

const std::string kCli = STATESCOPE_CLI;
std::string tmp(const std::string& name) { return test::scratch("dist_" + name); }

// A port for a hand-made job (the launcher picks its own): per process, so parallel tests differ.
int port(int k) { return 20000 + (::getpid() * 7 + k * 131) % 20000; }

std::string posttrain(const std::string& out, const std::string& policy, int batch, int steps = 3) {
  return "posttrain --model embedded --out " + out + " --T 32 --steps " + std::to_string(steps) + " --batch " +
         std::to_string(batch) + " --warmup 1 --seed 5 --policy " + policy;
}

// A verb and its options up to "-o", run as one process and as two (--nproc 2), each into its own
// file; both must succeed (it ASSERTs: call it through ASSERT_NO_FATAL_FAILURE).
struct OneAndTwo {
  std::string one, two;  // the files
  Run r1, r2;
  std::string tmpdir;     // the two-process job's TMPDIR
};
// The two-process job gets a temp folder of its own (TMPDIR, b.tmpdir), so what its ranks leave
// there is its own even while other tests' jobs run beside it.
void one_and_two(const std::string& args, const std::string& name, OneAndTwo& b) {
  b = OneAndTwo{tmp(name + "1.h5"), tmp(name + "2.h5"), {}, {}};
  b.tmpdir = tmp(name + "_tmpdir");
  fs::create_directories(b.tmpdir);
  b.r1 = sh(kCli + " " + args + " " + b.one);
  ASSERT_EQ(b.r1.code, 0) << b.r1.output;
  b.r2 = sh("TMPDIR=" + b.tmpdir + " " + kCli + " --nproc 2 " + args + " " + b.two);
  ASSERT_EQ(b.r2.code, 0) << b.r2.output;
}

double max_abs_diff(const StateDict& a, const StateDict& b) {
  double m = 0;
  for (auto& [k, v] : a) m = std::max(m, (v - b.at(k)).abs().max().item<double>());
  return m;
}
double mean_abs_diff(const StateDict& a, const StateDict& b) {
  double s = 0, n = 0;
  for (auto& [k, v] : a) s += (v - b.at(k)).abs().sum().item<double>(), n += static_cast<double>(v.numel());
  return s / n;
}
}  // namespace

TEST(Dist, TwoProcessesTrainLikeOneWithTheWholeBatchForEveryPolicy) {
  for (const std::string policy : {"zero", "random", "fitted", "passing", "tbtt"}) {
    SCOPED_TRACE(policy);
    const std::string one = tmp("one_" + policy), two = tmp("two_" + policy);
    auto r1 = sh(kCli + " " + posttrain(one, policy, 4));
    ASSERT_EQ(r1.code, 0) << r1.output;
    auto r2 = sh(kCli + " --nproc 2 " + posttrain(two, policy, 4));
    ASSERT_EQ(r2.code, 0) << r2.output;
    EXPECT_FALSE(fs::exists(two + "/checkpoint"));
    const auto a = read_weights_file(one + "/model.safetensors"), b = read_weights_file(two + "/model.safetensors");
    ASSERT_EQ(a.size(), b.size());
    const auto start = read_weights_file(std::string(STATESCOPE_SOURCE_DIR) + "/data/models/embedded/model.safetensors");
    // Gradients summed over two ranks differ from one process's in the last bits; AdamW divides by
    // sqrt(v), so a parameter whose gradient is ~0 can move by a small fraction of lr (seen: 1.5e-5
    // once, against updates of 8e-4). Nearly all parameters agree to float32 rounding.
    const double moved = max_abs_diff(a, start);
    EXPECT_GT(moved, 1e-4) << "training moved nothing: the comparison would prove nothing";
    EXPECT_LT(max_abs_diff(a, b), 0.1 * moved);
    EXPECT_LT(mean_abs_diff(a, b), 1e-8);
    H5File fa(one + "/training.h5", H5File::Mode::Read), fb(two + "/training.h5", H5File::Mode::Read);
    const auto la = read_train(fa, "posttrain"), lb = read_train(fb, "posttrain");
    ASSERT_EQ(la.size(), 3u);
    ASSERT_EQ(lb.size(), 3u);
    for (size_t i = 0; i < la.size(); ++i) {
      EXPECT_NEAR(la[i].loss, lb[i].loss, 1e-5) << "step " << i + 1;
      EXPECT_NEAR(la[i].grad_norm, lb[i].grad_norm, 1e-4 * std::max(1.0, la[i].grad_norm)) << "step " << i + 1;
    }
    EXPECT_NE(fb.attr("posttrain", "device").find("2 processes (gloo)"), std::string::npos);
  }
}

TEST(Dist, AKilledRankStopsTheOtherWithAClearErrorAndTheLauncherSaysWhich) {
  const std::string out = tmp("killed");
  // A long run; rank 1 (the newest process with this command line) is killed once training runs.
  const std::string script = tmp("kill.sh");
  std::ofstream(script) << "STATESCOPE_DIST_TIMEOUT=30 " << kCli << " --nproc 2 " << posttrain(out, "passing", 4, 100000)
                        << " &\nlauncher=$!\n"
                        << "for i in $(seq 150); do [ -s " << out << ".partial/training.h5 ] && break; sleep 0.2; done\n"
                        << "sleep 1\npkill -9 -n -f 'out " << out << " '\nstart=$(date +%s%N)\n"
                        << "wait $launcher\ncode=$?\n"
                        << "echo \"launcher exit $code after $(( ($(date +%s%N) - start) / 1000000 )) ms\"\n";
  auto r = sh("bash " + script);
  EXPECT_NE(r.output.find("rank 1 of 2 was killed by signal 9"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 0: all_reduce over 2 processes failed (gloo)"), std::string::npos) << r.output;
  // Rank 0's record says what happened; it is in the work folder (OUT appears only when training ends).
  H5File record(out + ".partial/training.h5", H5File::Mode::Read);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(record.attr("posttrain", "status"), "failed");
  EXPECT_NE(record.attr("posttrain", "message").find("all_reduce over 2 processes failed"), std::string::npos);
  EXPECT_NE(r.output.find("launcher exit 1"), std::string::npos) << r.output;
  const auto at = r.output.find("after ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_LT(std::stod(r.output.substr(at + 6)), 25000.0) << "the surviving rank hung: " << r.output;
}

TEST(Dist, BadRendezvousAndEnvironmentFailClearly) {
  const std::string out = tmp("bad");
  const std::string job = "WORLD_SIZE=2 RANK=1 MASTER_ADDR=127.0.0.1 STATESCOPE_DIST_TIMEOUT=3 ";
  // Nobody listens at the port: rank 1 gives up after the timeout, naming where it looked.
  auto r = sh(job + "MASTER_PORT=" + std::to_string(port(1)) + " " + kCli + " " + posttrain(out, "zero", 4));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("rendezvous at MASTER_ADDR:MASTER_PORT = 127.0.0.1:" + std::to_string(port(1))),
            std::string::npos) << r.output;
  EXPECT_LT(r.seconds, 30.0);
  r = sh("WORLD_SIZE=2 RANK=1 MASTER_ADDR=no-such-host.invalid STATESCOPE_DIST_TIMEOUT=3 MASTER_PORT=29999 " + kCli +
         " " + posttrain(out, "zero", 4));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("no-such-host.invalid:29999"), std::string::npos) << r.output;
  r = sh(job + "MASTER_PORT=abc " + kCli + " " + posttrain(out, "zero", 4));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("MASTER_PORT='abc'"), std::string::npos) << r.output;
  r = sh("WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 " + kCli + " " + posttrain(out, "zero", 4));
  EXPECT_NE(r.output.find("RANK is not set"), std::string::npos) << r.output;
  r = sh("WORLD_SIZE=2 RANK=2 MASTER_ADDR=127.0.0.1 " + kCli + " " + posttrain(out, "zero", 4));
  EXPECT_NE(r.output.find("RANK='2'"), std::string::npos) << r.output;
  r = sh(kCli + " --nproc 2 " + posttrain(out, "zero", 5));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("batch 5 is not divisible by the 2 processes"), std::string::npos) << r.output;
  r = sh(kCli + " --nproc 2 info --model embedded");  // refused before any process starts
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("'info' does not run data-parallel"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("rank"), std::string::npos) << "processes were started: " << r.output;
  r = sh(kCli + " --nproc 0 " + posttrain(out, "zero", 4));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("--nproc 0"), std::string::npos) << r.output;
}

// Under torchrun itself (the torch the build uses brings it): its agent hosts the rendezvous store
// at MASTER_PORT and says so (TORCHELASTIC_USE_AGENT_STORE=True), so rank 0 joins as a client
// instead of failing to bind the port; the job trains like --nproc 2 and like one process.
TEST(Dist, RunsUnderTorchrun) {
  const std::string viatr = tmp("torchrun"), one = tmp("torchrun_one");
  auto r = sh(std::string("OMP_NUM_THREADS=1 ") + STATESCOPE_PYTHON + " -m torch.distributed.run --standalone "
              "--nproc-per-node 2 --no-python " + kCli + " " + posttrain(viatr, "passing", 4));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("data parallel: 2 processes (gloo)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("failed to bind"), std::string::npos) << "rank 0 tried to host the agent's store:\n"
                                                                 << r.output;
  r = sh(kCli + " " + posttrain(one, "passing", 4));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_LT(mean_abs_diff(read_weights_file(one + "/model.safetensors"), read_weights_file(viatr + "/model.safetensors")),
            1e-8);
}

// A job stopped by --stop-after and resumed with another number of processes trains like one that
// never stopped: per-row policy states (state passing, TBTT) are joined over the old ranks' files and
// split again; the rest of the checkpoint is the same on every rank. Rows joined in the wrong order,
// or a rank's rows lost, change the next steps' losses by far more than the 1e-5 allowed.
TEST(Dist, ACheckpointResumesWithAnotherNumberOfProcesses) {
  struct Case {
    std::string policy, first, then;  // "--nproc 2 " or ""
  };
  for (const Case& c : {Case{"passing", "--nproc 2 ", ""}, Case{"passing", "", "--nproc 2 "},
                        Case{"tbtt", "--nproc 2 ", ""}, Case{"fitted", "", "--nproc 2 "}}) {
    SCOPED_TRACE(c.policy + ": [" + c.first + "] then [" + c.then + "]");
    const std::string tag = c.policy + (c.first.empty() ? "_1to2" : "_2to1");
    const std::string straight = tmp("straight_" + tag), out = tmp("resumed_" + tag);
    auto r = sh(kCli + " " + posttrain(straight, c.policy, 4, 6));
    ASSERT_EQ(r.code, 0) << r.output;
    r = sh(kCli + " " + c.first + posttrain(out, c.policy, 4, 6) + " --stop-after 3");
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("stopped after step 3 (--stop-after); continue with --resume"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(out + "/model.safetensors")) << "a stopped job wrote the model";
    r = sh(kCli + " " + c.then + posttrain(out, c.policy, 4, 6) + " --resume");
    ASSERT_EQ(r.code, 0) << r.output;
    const auto a = read_weights_file(straight + "/model.safetensors"), b = read_weights_file(out + "/model.safetensors");
    EXPECT_LT(mean_abs_diff(a, b), 1e-8);
    H5File fa(straight + "/training.h5", H5File::Mode::Read), fb(out + "/training.h5", H5File::Mode::Read);
    const auto la = read_train(fa, "posttrain"), lb = read_train(fb, "posttrain");
    ASSERT_EQ(la.size(), 6u);
    ASSERT_EQ(lb.size(), 6u);
    for (size_t i = 0; i < la.size(); ++i) EXPECT_NEAR(la[i].loss, lb[i].loss, 1e-5) << "step " << i + 1;
    EXPECT_EQ(fb.attr("posttrain", "status"), "finished");
  }
}

// Evaluation split over the ranks (batch k of sequences on rank k % 2) writes what one process
// writes: every sequence's losses bit for bit, the state norms to double rounding.
TEST(Dist, EvaluationOverTwoProcessesWritesTheFileOfOne) {
  OneAndTwo both;
  ASSERT_NO_FATAL_FAILURE(one_and_two("eval --model embedded --length 256 --sequences 6 --segment 128 --batch 2 -o", "eval", both));
  const auto &r1 = both.r1, &r2 = both.r2;
  H5File a(both.one, H5File::Mode::Read), b(both.two, H5File::Mode::Read);
  for (const char* d : {"eval/ppl/nll", "eval/ppl/nll_per_sequence", "eval/ppl/windowed_nll_per_sequence",
                        "eval/ppl/excess", "eval/ppl/nll_stderr"})
    EXPECT_EQ(a.read_f64(d), b.read_f64(d)) << d;
  for (const char* d : {"eval/state_norm/norm", "eval/state_norm/norm_per_head"}) {
    const auto x = a.read_f64(d), y = b.read_f64(d);
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], y[i], 1e-12 * std::max(1.0, std::abs(x[i]))) << d << " " << i;
  }
  auto table = [](const std::string& out) {  // the table rank 0 prints (progress counts each rank's own forwards)
    const auto at = out.find("run ");
    return out.substr(at, out.find("peak resident") - at);
  };
  EXPECT_EQ(table(r1.output), table(r2.output)) << "the printed tables differ";
  // Only rank 0 wrote: no scratch file of rank 1 is left behind.
  EXPECT_EQ(sh("ls " + both.tmpdir + " | grep -c '^statescope-rank1-'").output, "0\n");
}

// A whole experiment spec (post-training, evaluation, an analysis) as one job of two processes.
TEST(Dist, ARunOfTwoProcessesMatchesOneProcess) {
  const std::string spec = tmp("spec.json");
  std::ofstream(spec) << R"({"model": "embedded", "T": 32, "posttrain": {"steps": 3, "batch": 4},
    "policies": [{"kind": "passing"}, {"kind": "fitted"}], "eval": {"length": 256, "sequences": 4, "segment": 128, "batch": 2},
    "analyses": {"effrem": {"T": [32], "points": 3, "sequences": 2},
                 "unexplored": {"train_steps": 4, "train_batch": 8, "samples": 200}}})";
  OneAndTwo both;
  ASSERT_NO_FATAL_FAILURE(one_and_two("run " + spec + " --jobs 1 -o", "run", both));
  H5File a(both.one, H5File::Mode::Read), b(both.two, H5File::Mode::Read);
  EXPECT_EQ(a.read_f64("baseline/ppl/nll"), b.read_f64("baseline/ppl/nll"));
  EXPECT_EQ(a.read_f64("baseline/effrem/value"), b.read_f64("baseline/effrem/value"));
  for (const char* d : {"passing/ppl/nll", "fitted/ppl/nll", "passing/train/loss", "fitted/effrem/value"}) {
    const auto x = a.read_f64(d), y = b.read_f64(d);
    ASSERT_EQ(x.size(), y.size()) << d;
    for (size_t i = 0; i < x.size(); ++i)
      if (!std::isnan(x[i])) ASSERT_NEAR(x[i], y[i], 1e-4) << d << " " << i;
  }
  EXPECT_EQ(b.attr("passing", "status"), "finished");
  // The detector: the baseline's (replayed states only) exactly; passing's envelope also holds the
  // states its post-training met, gathered from both ranks' rows (as many as one process keeps).
  EXPECT_EQ(a.read_f64("baseline/unexplored/outside"), b.read_f64("baseline/unexplored/outside"));
  EXPECT_EQ(a.attr("passing/unexplored", "recorded_samples"), b.attr("passing/unexplored", "recorded_samples"));
  // The envelope's thresholds move with every state in it (a rank's rows lost, or zeros in their
  // place, move them by percents); the two trainings differ by ~1e-9.
  const auto x = a.read_f64("passing/unexplored/threshold"), y = b.read_f64("passing/unexplored/threshold");
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], 1e-5 * std::abs(x[i])) << "(layer, head) " << i;
  const auto o1 = a.read_f64("passing/unexplored/outside_mean"), o2 = b.read_f64("passing/unexplored/outside_mean");
  ASSERT_EQ(o1.size(), o2.size());
  for (size_t i = 0; i < o1.size(); ++i) EXPECT_NEAR(o1[i], o2[i], 0.02) << "position index " << i;
}

// EffRem's (T, t) items split over the ranks: the heatmap, its errors and the forward-token count
// are those of one process, bit for bit.
TEST(Dist, EffRemItemsOverTwoProcessesGiveTheHeatmapOfOne) {
  OneAndTwo both;
  ASSERT_NO_FATAL_FAILURE(one_and_two("effrem --model embedded --T 32,64,128 --points 5 --sequences 3 -o", "effrem", both));
  H5File a(both.one, H5File::Mode::Read), b(both.two, H5File::Mode::Read);
  for (const char* d : {"effrem/effrem/value", "effrem/effrem/stderr"}) {
    const auto x = a.read_f64(d), y = b.read_f64(d);
    ASSERT_EQ(x.size(), y.size()) << d;
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(std::isnan(x[i]), std::isnan(y[i])) << d << " " << i;
      if (!std::isnan(x[i])) EXPECT_EQ(x[i], y[i]) << d << " " << i;
    }
  }
  EXPECT_EQ(a.attr("effrem/effrem", "forward_tokens"), b.attr("effrem/effrem", "forward_tokens"));
}

// Passkey cells and bAbI lengths split over the ranks (every rank draws every prompt, so the random
// stream is one process's; each cell is answered by one rank): the grids of one process, exactly.
TEST(Dist, PasskeyAndBabiItemsOverTwoProcessesGiveTheGridsOfOne) {
  struct Case {
    std::string verb, args, dataset;
  };
  // The retrieval model finds keys within its T (every cell 1), and the embedded model's bAbI choices
  // are right at the second length: a rank whose items were lost would leave zeros that differ.
  for (const Case& c :
       {Case{"passkey", " --model retrieval --lengths 128,256 --depths 0,0.5,1 --samples 2", "passkey/passkey/accuracy"},
        Case{"babi", " --model embedded --lengths 256,512,768 --samples 3", "babi/babi/choice_accuracy"}}) {
    SCOPED_TRACE(c.verb);
    OneAndTwo both;
    ASSERT_NO_FATAL_FAILURE(one_and_two(c.verb + c.args + " -o", c.verb, both));
    H5File a(both.one, H5File::Mode::Read), b(both.two, H5File::Mode::Read);
    const auto grid = a.read_f64(c.dataset);
    bool rank1_scored = false;  // an item of rank 1 (odd index) that is not zero: the oracle bites
    for (size_t i = 1; i < grid.size(); i += 2) rank1_scored |= grid[i] > 0;
    EXPECT_TRUE(rank1_scored) << "every item rank 1 answers is 0: the comparison would prove nothing";
    EXPECT_EQ(grid, b.read_f64(c.dataset));
    const std::string other = c.verb == "passkey" ? "passkey/passkey/digit_accuracy" : "babi/babi/accuracy";
    EXPECT_EQ(a.read_f64(other), b.read_f64(other));
  }
}

// Copying: a fresh model trained data-parallel, then its evaluation lengths split over the ranks.
// The two trainings differ in the last bits (gradients summed in another order), so a greedy
// decode may in principle flip one token: at most one token per length may differ; a rank whose
// lengths were lost would leave zeros where one process scores 0.17-0.5.
TEST(Dist, CopyingOverTwoProcessesScoresLikeOne) {
  OneAndTwo both;
  ASSERT_NO_FATAL_FAILURE(one_and_two("copying --policies passing --steps 60 --batch 8 --L 4 --alphabet 4 --samples 6 "
                                      "--eval-lengths 2,3,4,5 -o",
                                      "copy", both));
  H5File a(both.one, H5File::Mode::Read), b(both.two, H5File::Mode::Read);
  const int lengths[] = {2, 3, 4, 5};
  for (const char* d : {"copying_passing/copying/token_accuracy", "copying_passing/copying/token_accuracy_passed"}) {
    const auto x = a.read_f64(d), y = b.read_f64(d);
    ASSERT_EQ(x.size(), 4u) << d;
    ASSERT_EQ(y.size(), 4u) << d;
    EXPECT_GT(x[1] + x[3], 0) << d << ": rank 1's lengths score 0, the comparison would prove nothing";
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(x[i], y[i], 1.0 / (6 * lengths[i]) + 1e-12) << d << " length " << lengths[i];
  }
}

// State statistics: groups of 4 sequences split over the ranks (6 sequences: rank 1 holds the last
// two), reduced in a fixed order (per-sequence sums, integer histogram counts): one process's
// histograms, moments and state change per token, bit for bit. A rank whose sequences were lost
// would shift every mean and leave a third of the histogram mass out.
TEST(Dist, StateStatisticsOverTwoProcessesAreThoseOfOne) {
  OneAndTwo both;
  ASSERT_NO_FATAL_FAILURE(one_and_two("states --model embedded --T 32 --length 256 --sequences 6 --bins 21 -o", "states", both));
  H5File a(both.one, H5File::Mode::Read), b(both.two, H5File::Mode::Read);
  for (const char* d : {"histogram", "mean", "std", "fitted_mean", "fitted_std", "delta_norm", "bin_edges"}) {
    const std::string ds = std::string("states/state_stats/") + d;
    const auto x = a.read_f64(ds), y = b.read_f64(ds);
    ASSERT_FALSE(x.empty()) << ds;
    EXPECT_EQ(x, y) << ds;
  }
}

// The unexplored-states detector: evaluation batches of 16 sequences split over the ranks (20
// sequences: rank 1 scores the last 4; each rank fits one layer's envelope): one process's outside
// fractions, exactly. Rank 1's sequences must have states outside (the oracle bites).
TEST(Dist, UnexploredStatesOverTwoProcessesAreThoseOfOne) {
  OneAndTwo both;
  ASSERT_NO_FATAL_FAILURE(one_and_two("unexplored --model embedded --T 32 --length 512 --sequences 20 --train-steps 8 "
                                      "--train-batch 8 -o",
                                      "unexpl", both));
  H5File a(both.one, H5File::Mode::Read), b(both.two, H5File::Mode::Read);
  const auto seq = a.read_f64("unexplored/unexplored/outside_seq");  // [sequences, positions]
  ASSERT_EQ(seq.size() % 20, 0u);
  double rank1 = 0;
  for (size_t i = 16 * seq.size() / 20; i < seq.size(); ++i) rank1 += seq[i];
  EXPECT_GT(rank1, 0) << "rank 1's sequences have no state outside: the comparison would prove nothing";
  for (const char* d : {"outside", "outside_mean", "outside_seq", "threshold", "heldout_outside"}) {
    const std::string ds = std::string("unexplored/unexplored/") + d;
    EXPECT_EQ(a.read_f64(ds), b.read_f64(ds)) << ds;
  }
}
