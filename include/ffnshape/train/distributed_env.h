// Where a process stands in a data-parallel job, read from its launcher's environment: torchrun
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
// TORCHELASTIC_USE_AGENT_STORE) or a Slurm job step started by srun (SLURM_PROCID,
// SLURM_STEP_NUM_TASKS, SLURM_LOCALID, the step's tasks per node, the first host of the step's node
// list; MASTER_ADDR / MASTER_PORT win when set, else the port is 20000 + job id mod 20000). A process
// started by neither, or a batch script's own shell without srun, is the single process of a world
// of one.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

namespace ffnshape {

struct DistributedEnv {
  std::string launcher = "none";  // none | torchrun | slurm
  int rank = 0, world_size = 1;
  int local_rank = 0, local_world_size = 1;
  std::string master_addr;        // the TCPStore's host (rank 0's node)
  int master_port = 0;
  bool agent_store = false;       // torchrun's agent runs the store: every rank connects as a client
  bool distributed() const { return world_size > 1; }
};

// A launcher's variables that contradict each other or are malformed; the message names the
// variable and says what to fix.
class DistributedEnvError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// From a lookup that returns nullptr for an unset variable (tests pass a map; the process passes getenv).
DistributedEnv read_distributed_env(const std::function<const char*(const char*)>& lookup);
DistributedEnv read_distributed_env();

// The first host of a Slurm node list: "gpu[07-09,12],cpu1" -> "gpu07", "nid001234" -> "nid001234".
std::string first_slurm_host(const std::string& nodelist);

}  // namespace ffnshape
