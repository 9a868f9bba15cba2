// comm.h — the process group of a data-parallel job: PyTorch's own distributed engine (c10d) with
// a TCPStore rendezvous at MASTER_ADDR:MASTER_PORT and the Gloo backend for CPU tensors (NCCL for
// CUDA tensors where the build has it). Nothing here is a home-made transport: every collective is
// a c10d call. LibTorch in this header (tensors in, tensors out).
//
// A process joins at most one job (init); group() is null in a single process, so callers write
// `if (auto* g = dist::group()) ...` and behave exactly as before without one.
#pragma once
#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/dist/env.h"

namespace statescope::dist {

enum class Op { Sum, Max, Min };

class Group {
 public:
  virtual ~Group() = default;
  virtual int rank() const = 0;
  virtual int world() const = 0;
  virtual std::string backend() const = 0;  // "gloo" | "nccl"
  // In place over every rank. Several tensors travel as one flat buffer per dtype (one collective).
  virtual void all_reduce(std::vector<torch::Tensor>& tensors, Op op = Op::Sum) = 0;
  virtual void barrier() = 0;
  // Seconds spent inside collectives so far (what the benchmarks report as communication).
  virtual double comm_seconds() const = 0;
};

// The job's group, or nullptr in a single process.
Group* group();
inline int rank() { return group() ? group()->rank() : 0; }
inline int world() { return group() ? group()->world() : 1; }
inline bool is_root() { return rank() == 0; }
// Items of a split computation (evaluation batches, analysis items) go to the ranks in turn: item k
// to rank k mod N. One process owns them all.
inline bool mine(int64_t item) { return item % world() == rank(); }

// Tensors reduced over the ranks in place, as one collective (Sum: the results of a split
// computation, where every entry was computed by its one rank and is 0 on the others, or is an
// integer count, so the sum is exact in any order). A no-op in one process.
void reduce_over_ranks(std::vector<torch::Tensor> tensors, Op op = Op::Sum);
// The same for results held in vectors, summed.
void sum_over_ranks(const std::vector<std::vector<double>*>& values);

// Joins the job `env` describes (env.distributed() must hold). `device` is where this rank's tensors
// live: "cpu" -> Gloo; "cuda:N" -> NCCL. Throws Error naming MASTER_ADDR:MASTER_PORT when the
// rendezvous fails within env.timeout_s, and the backend when this build lacks it.
void init(const Env& env, const std::string& device);
void shutdown();  // leaves the job (idempotent)

// The rendezvous store of a job this process launches (statescope-cli --nproc), hosted here as
// torchrun's agent hosts it: a TCPStore server on 127.0.0.1 at a port the kernel picks (nothing
// can take it between choosing and binding), alive until destroyed. The ranks, started with
// TORCHELASTIC_USE_AGENT_STORE=True, all join it as clients, none waiting for another to listen.
class HostedStore {
 public:
  explicit HostedStore(int timeout_s);
  ~HostedStore();
  int port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// Where a rank other than 0 writes what rank 0 writes to `path` (every rank runs the same code;
// only rank 0's files are kept): a fresh file in the temporary folder, removed by shutdown().
// Rank 0 (and a single process) gets `path` itself.
std::string rank_output(const std::string& path);

// "Does any rank want to stop?" and "are `values` the same on every rank?" in one collective (a MAX
// over [flag, v, -v]): true when any rank passed `stop`; an Error naming `what` and the ranks'
// extremes when the values differ (the per-step check that every rank holds the same parameters).
bool agree_and_check(bool stop, const std::vector<double>& values, const std::string& what);

}  // namespace statescope::dist
