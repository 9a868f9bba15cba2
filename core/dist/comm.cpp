// comm.cpp — c10d process groups (see comm.h).
//
// Gloo's headers are not in the torch wheel; Debian's libgloo-dev provides them. They agree with
// the gloo inside libtorch_cpu on what this file touches: sizeof(c10d::ProcessGroupGloo) is 488 and
// sizeof(ProcessGroupGloo::Options) 176 both here and in torch 2.11's own allocations (read off
// libtorch_python's `operator new` before the constructor call and libtorch_cpu's Options::create_default);
// the static_asserts below stop a build whose headers disagree (a torch upgrade: re-read them).
#include "core/dist/comm.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>
#include <torch/version.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <mutex>

#include "core/base/error.h"
#if STATESCOPE_HAVE_NCCL
#include "core/dist/nccl.h"
#endif

#if TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR == 11
static_assert(sizeof(c10d::ProcessGroupGloo) == 488, "gloo headers disagree with libtorch's ProcessGroupGloo");
static_assert(sizeof(c10d::ProcessGroupGloo::Options) == 176, "gloo headers disagree with libtorch's Options");
#endif

namespace statescope::dist {
namespace {

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

c10d::ReduceOp reduce_op(Op op) {
  switch (op) {
    case Op::Max: return c10d::ReduceOp::MAX;
    case Op::Min: return c10d::ReduceOp::MIN;
    default: return c10d::ReduceOp::SUM;
  }
}

class C10dGroup : public Group {
 public:
  C10dGroup(c10::intrusive_ptr<c10d::Store> store, c10::intrusive_ptr<c10d::Backend> pg, int rank, int world,
            std::string backend, torch::Device device = torch::kCPU)
      : store_(std::move(store)), pg_(std::move(pg)), rank_(rank), world_(world), backend_(std::move(backend)),
        device_(device) {}
  int rank() const override { return rank_; }
  int world() const override { return world_; }
  std::string backend() const override { return backend_; }

  void all_reduce(std::vector<torch::Tensor>& ts, Op op) override {
    if (ts.empty()) return;
    timed("all_reduce", [&] {
      c10d::AllreduceOptions o;
      o.reduceOp = reduce_op(op);
      if (ts.size() == 1 && ts[0].is_contiguous() && ts[0].device() == device_) {  // in place, no copies (the gradients' flat buffer)
        std::vector<torch::Tensor> one{ts[0].detach()};
        pg_->allreduce(one, o)->wait();
        return;
      }
      // One flat buffer per call (all tensors share a dtype here: callers pass gradients or stats).
      std::vector<torch::Tensor> flat_parts;
      for (auto& t : ts) flat_parts.push_back(t.detach().reshape({-1}));
      std::vector<torch::Tensor> buf{torch::cat(flat_parts).to(device_)};  // NCCL: on this rank's GPU
      pg_->allreduce(buf, o)->wait();
      int64_t at = 0;
      for (auto& t : ts) {
        const int64_t n = t.numel();
        t.detach().copy_(buf[0].narrow(0, at, n).view(t.sizes()).to(t.device()));
        at += n;
      }
    });
  }

  void barrier() override {
    timed("barrier", [&] { pg_->barrier()->wait(); });
  }

  double comm_seconds() const override { return seconds_; }

 private:
  template <class F>
  void timed(const char* what, F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      f();
    } catch (const std::exception& e) {
      throw Error(std::string(what) + " over " + std::to_string(world_) + " processes failed (" + backend_ +
                  "): " + first_line(e.what()) + " (another process of the job stopped, or the network between "
                  "them failed)");
    }
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Backend> pg_;
  int rank_, world_;
  std::string backend_;
  torch::Device device_;
  double seconds_ = 0;
};

std::unique_ptr<Group>& the_group() {
  static std::unique_ptr<Group> g;
  return g;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

Group* group() { return the_group().get(); }

void init(const Env& env, const std::string& device) {
  if (!env.distributed()) return;
  if (the_group()) throw Error("dist::init: this process already joined a job");
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  const bool cuda = device.rfind("cuda", 0) == 0;
#if !STATESCOPE_HAVE_NCCL
  if (cuda)
    throw Error("device " + device + ": this build has no NCCL backend (a CUDA build with nccl.h has); run the job "
                "on the CPU (--device cpu, Gloo)");
#endif
  const auto timeout = std::chrono::milliseconds(int64_t{env.timeout_s} * 1000);
  c10::intrusive_ptr<c10d::Store> store;
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(env.master_port);
    so.isServer = env.rank == 0 && !env.agent_store;  // else the launcher hosts it
    so.numWorkers = env.world;
    so.waitWorkers = true;
    so.timeout = timeout;
    // Our keys under a prefix of their own: a launcher's store (torchrun's) holds the agent's too.
    store = c10::make_intrusive<c10d::PrefixStore>("statescope", c10::make_intrusive<c10d::TCPStore>(env.master_addr, so));
  } catch (const std::exception& e) {
    throw Error("rendezvous at MASTER_ADDR:MASTER_PORT = " + where +
                " failed within " + std::to_string(env.timeout_s) + " s: " + first_line(e.what()));
  }
#if STATESCOPE_HAVE_NCCL
  if (cuda) {  // one GPU per rank: the device given (cuda:LOCAL_RANK from the CLI)
    try {
      auto pg = make_nccl_backend(store, env.rank, env.world, timeout);
      the_group() = std::make_unique<C10dGroup>(store, pg, env.rank, env.world, "nccl", torch::Device(device));
      return;
    } catch (const std::exception& e) {
      throw Error("NCCL process group via " + where + " on " + device + ": " +
                  first_line(e.what()));
    }
  }
#endif
  try {
    auto o = c10d::ProcessGroupGloo::Options::create(timeout);
    const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
    if (ifname && *ifname) o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    else if (is_loopback(env.master_addr)) o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    else o->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world, o);
    the_group() = std::make_unique<C10dGroup>(store, pg, env.rank, env.world, "gloo");
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("Gloo process group via " + where + ": " + first_line(e.what()));
  }
}

struct HostedStore::Impl {
  c10::intrusive_ptr<c10d::TCPStore> store;
};

HostedStore::HostedStore(int timeout_s) : impl_(std::make_unique<Impl>()) {
  try {
    c10d::TCPStoreOptions so;
    so.port = 0;  // the kernel's choice
    so.isServer = true;
    so.waitWorkers = false;
    so.timeout = std::chrono::milliseconds(int64_t{timeout_s} * 1000);
    impl_->store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", so);
    port_ = impl_->store->getPort();
  } catch (const std::exception& e) {
    throw Error(std::string("--nproc: cannot host the rendezvous store on 127.0.0.1: ") + first_line(e.what()));
  }
}

HostedStore::~HostedStore() = default;

std::vector<std::string>& scratch_files() {
  static std::vector<std::string> files;
  return files;
}

std::string rank_output(const std::string& path) {
  if (!group() || group()->rank() == 0) return path;
  const std::string name = std::filesystem::path(path).filename().string();
  const std::string p = (std::filesystem::temp_directory_path() /
                         ("statescope-rank" + std::to_string(group()->rank()) + "-" + std::to_string(::getpid()) + "-" +
                          std::to_string(scratch_files().size()) + "-" + name)).string();
  scratch_files().push_back(p);
  return p;
}

void shutdown() {
  the_group().reset();
  std::error_code ec;
  for (const auto& f : scratch_files()) {
    std::filesystem::remove(f, ec);
    std::filesystem::remove(f + ".lock", ec);
  }
  scratch_files().clear();
}

}  // namespace statescope::dist

namespace statescope::dist {

void reduce_over_ranks(std::vector<torch::Tensor> tensors, Op op) {
  if (Group* g = group()) g->all_reduce(tensors, op);
}

void sum_over_ranks(const std::vector<std::vector<double>*>& values) {
  std::vector<torch::Tensor> t;  // views of the vectors: the reduction writes into them
  for (auto* v : values) t.push_back(torch::from_blob(v->data(), {static_cast<int64_t>(v->size())}, torch::kFloat64));
  reduce_over_ranks(t);
}

bool agree_and_check(bool stop, const std::vector<double>& values, const std::string& what) {
  Group* g = group();
  if (!g) return stop;
  const size_t n = values.size();
  auto t = torch::empty({static_cast<int64_t>(2 * n + 1)}, torch::kFloat64);
  t[0] = stop ? 1.0 : 0.0;
  for (size_t i = 0; i < n; ++i) t[1 + i] = values[i], t[1 + n + i] = -values[i];
  std::vector<torch::Tensor> v{t};
  g->all_reduce(v, Op::Max);
  for (size_t i = 0; i < n; ++i) {
    const double hi = v[0][1 + i].item<double>(), lo = -v[0][1 + n + i].item<double>();
    if (hi != lo)
      throw Error(what + ": the ranks disagree at entry " + std::to_string(i) + " (from " + std::to_string(lo) +
                  " to " + std::to_string(hi) + ")");
  }
  return v[0][0].item<double>() > 0;
}

}  // namespace statescope::dist
