// comm_none.cpp — a build without Gloo's headers: one process only (see CMakeLists.txt).
#include "core/dist/comm.h"

#include "core/base/error.h"

namespace statescope::dist {

Group* group() { return nullptr; }

void init(const Env& env, const std::string&) {
  if (env.distributed())
    throw Error("WORLD_SIZE=" + std::to_string(env.world) +
                ": this build has no distributed support (install libgloo-dev and rebuild)");
}

void shutdown() {}

struct HostedStore::Impl {};
HostedStore::HostedStore(int) { throw Error("--nproc: this build has no distributed support (install libgloo-dev and rebuild)"); }
HostedStore::~HostedStore() = default;
std::string rank_output(const std::string& path) { return path; }
void reduce_over_ranks(std::vector<torch::Tensor>, Op) {}
void sum_over_ranks(const std::vector<std::vector<double>*>&) {}
bool agree_and_check(bool stop, const std::vector<double>&, const std::string&) { return stop; }

}  // namespace statescope::dist
