// env.h — where this process sits in a data-parallel job, from the environment torchrun, Slurm
// (srun, with the variables set per task) or statescope-cli --nproc set: WORLD_SIZE, RANK,
// LOCAL_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_USE_AGENT_STORE. No LibTorch.
#pragma once
#include <string>

namespace statescope::dist {

struct Env {
  int world = 1, rank = 0, local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  int timeout_s = 300;  // rendezvous and every collective ($STATESCOPE_DIST_TIMEOUT)
  // TORCHELASTIC_USE_AGENT_STORE=True: the launcher (torchrun's agent, statescope-cli --nproc)
  // hosts the rendezvous store at MASTER_ADDR:MASTER_PORT, so rank 0 joins it as a client too.
  bool agent_store = false;
  bool distributed() const { return world > 1; }
};

// Reads the variables. WORLD_SIZE unset (or 1): one process. Otherwise RANK and MASTER_ADDR are
// required and every value is checked; throws Error naming the variable and its value.
Env env_from_environment();

}  // namespace statescope::dist
