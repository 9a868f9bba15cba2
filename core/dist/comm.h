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
  virtual void broadcast(torch::Tensor& t, int root) = 0;
  // Every rank's `t` (same shape on all), concatenated along dim 0 in rank order.
  virtual torch::Tensor all_gather(const torch::Tensor& t) = 0;
  virtual void barrier() = 0;
  // Seconds spent inside collectives so far (what the benchmarks report as communication).
  virtual double comm_seconds() const = 0;
};

// The job's group, or nullptr in a single process.
Group* group();
inline int rank() { return group() ? group()->rank() : 0; }
inline int world() { return group() ? group()->world() : 1; }
inline bool is_root() { return rank() == 0; }

// Joins the job `env` describes (env.distributed() must hold). `device` is where this rank's tensors
// live: "cpu" -> Gloo; "cuda:N" -> NCCL. Throws Error naming MASTER_ADDR:MASTER_PORT when the
// rendezvous fails within env.timeout_s, and the backend when this build lacks it.
void init(const Env& env, const std::string& device);
void shutdown();  // leaves the job (idempotent)

// Where a rank other than 0 writes what rank 0 writes to `path` (every rank runs the same code;
// only rank 0's files are kept): a fresh file in the temporary folder, removed by shutdown().
// Rank 0 (and a single process) gets `path` itself.
std::string rank_output(const std::string& path);

// The same value on every rank, or an Error naming `what` and the ranks' extremes: for checks such
// as "identical parameters after each step".
void check_same(const std::vector<double>& values, const std::string& what);

// check_same and "does any rank want to stop?" in one collective (a MAX over [flag, v, -v]): true
// when any rank passed `stop`.
bool agree_and_check(bool stop, const std::vector<double>& values, const std::string& what);

}  // namespace statescope::dist
