// launch.h — `statescope-cli --nproc N ...` on one machine: the same command line as N processes
// (ranks 0..N-1) with the torchrun variables set (WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR=127.0.0.1, MASTER_PORT = the rendezvous store this launcher hosts, as torchrun's agent
// does, with TORCHELASTIC_USE_AGENT_STORE=True). The launcher waits for all of them; when one
// fails it says which and how, and the others, whose next collective fails, are stopped if they
// have not ended within the job's timeout. SIGINT/SIGTERM reach every rank (each cancels at the
// same step; see trainer.cpp). Under torchrun or srun the variables are already set and nothing is
// launched.
#pragma once

namespace statescope::cli {

// Exit code: 0 when every rank succeeded, else the first failing rank's code (130 when cancelled,
// 1 when a rank was killed by a signal other than SIGINT/SIGTERM).
int launch_local(int nproc, int argc, char** argv);

}  // namespace statescope::cli
