#include "ffnshape/train/distributed_env.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

namespace ffnshape {
namespace {

using Lookup = std::function<const char*(const char*)>;

// Ranks, sizes and ports stay far below a million; job ids may not (busy clusters pass 10^7).
int64_t integer_variable(const Lookup& lookup, const char* name, int64_t fallback, int64_t minimum,
                         int64_t maximum = 1'000'000) {
  const char* text = lookup(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < minimum || value > maximum) {
    throw DistributedEnvError(std::string(name) + "='" + text + "' is not an integer >= " + std::to_string(minimum) +
                              "\n  fix: launch with torchrun or srun, or unset " + name + " for a single process");
  }
  return value;
}

int small_integer_variable(const Lookup& lookup, const char* name, int fallback, int minimum) {
  return static_cast<int>(integer_variable(lookup, name, fallback, minimum));
}

std::string string_variable(const Lookup& lookup, const char* name) {
  const char* text = lookup(name);
  return text ? text : "";
}

// The step's tasks per node, "4(x2),3": the first count (nodes of a data-parallel step hold as many
// tasks each, one per GPU). SLURM_NTASKS_PER_NODE is set only when the job asked for it.
int tasks_on_this_node(const Lookup& lookup) {
  if (const int n = small_integer_variable(lookup, "SLURM_NTASKS_PER_NODE", 0, 1); n > 0) return n;
  auto per_node = string_variable(lookup, "SLURM_STEP_TASKS_PER_NODE");
  if (per_node.empty()) per_node = string_variable(lookup, "SLURM_TASKS_PER_NODE");
  const int n = std::atoi(per_node.c_str());
  return n > 0 ? n : 1;
}

DistributedEnv from_torchrun(const Lookup& lookup) {
  DistributedEnv env;
  env.launcher = "torchrun";
  env.world_size = small_integer_variable(lookup, "WORLD_SIZE", 1, 1);
  env.rank = small_integer_variable(lookup, "RANK", 0, 0);
  env.local_rank = small_integer_variable(lookup, "LOCAL_RANK", 0, 0);
  env.local_world_size = small_integer_variable(lookup, "LOCAL_WORLD_SIZE", 1, 1);
  env.master_addr = string_variable(lookup, "MASTER_ADDR");
  env.master_port = small_integer_variable(lookup, "MASTER_PORT", 0, 1);
  env.agent_store = string_variable(lookup, "TORCHELASTIC_USE_AGENT_STORE") == "True";
  return env;
}

DistributedEnv from_slurm(const Lookup& lookup) {
  DistributedEnv env;
  env.launcher = "slurm";
  env.world_size = small_integer_variable(lookup, "SLURM_STEP_NUM_TASKS", 1, 1);
  env.rank = small_integer_variable(lookup, "SLURM_PROCID", 0, 0);
  env.local_rank = small_integer_variable(lookup, "SLURM_LOCALID", 0, 0);
  env.local_world_size = tasks_on_this_node(lookup);
  // MASTER_ADDR / MASTER_PORT win when the batch script exports them.
  env.master_addr = string_variable(lookup, "MASTER_ADDR");
  if (env.master_addr.empty()) {
    auto nodes = string_variable(lookup, "SLURM_STEP_NODELIST");
    if (nodes.empty()) nodes = string_variable(lookup, "SLURM_JOB_NODELIST");
    env.master_addr = first_slurm_host(nodes);
  }
  // A port per job, so that jobs sharing a first node do not collide.
  const int64_t job = integer_variable(lookup, "SLURM_JOB_ID", 0, 0, std::numeric_limits<int64_t>::max());
  env.master_port = small_integer_variable(lookup, "MASTER_PORT", static_cast<int>(20000 + job % 20000), 1);
  return env;
}

void check(const DistributedEnv& env) {
  const std::string from = env.launcher == "slurm" ? "SLURM_PROCID / SLURM_STEP_NUM_TASKS" : "RANK / WORLD_SIZE";
  if (env.rank >= env.world_size) {
    throw DistributedEnvError("rank " + std::to_string(env.rank) + " is outside a world of " +
                              std::to_string(env.world_size) + " (" + from + ")\n  fix: launch with torchrun or srun");
  }
  if (env.local_rank >= env.local_world_size) {
    throw DistributedEnvError("local rank " + std::to_string(env.local_rank) + " is outside the node's " +
                              std::to_string(env.local_world_size) + " processes\n  fix: launch with torchrun or srun");
  }
  if (!env.distributed()) return;
  if (env.master_addr.empty()) {
    throw DistributedEnvError("no rendezvous host: MASTER_ADDR is not set" +
                              std::string(env.launcher == "slurm" ? " and the Slurm node list is empty" : "") +
                              "\n  fix: export MASTER_ADDR (the host of rank 0)");
  }
  if (env.master_port == 0) {
    throw DistributedEnvError("no rendezvous port: MASTER_PORT is not set\n  fix: export MASTER_PORT (e.g. 29500)");
  }
}

}  // namespace

std::string first_slurm_host(const std::string& nodelist) {
  // Hosts are separated by commas outside brackets; a bracket holds ranges of suffixes.
  const auto open = nodelist.find('[');
  const auto comma = nodelist.find(',');
  if (open == std::string::npos || (comma != std::string::npos && comma < open)) return nodelist.substr(0, comma);
  const auto close = nodelist.find(']', open);
  if (close == std::string::npos) throw DistributedEnvError("malformed Slurm node list '" + nodelist + "'");
  const auto first = nodelist.substr(open + 1, nodelist.find_first_of(",-]", open + 1) - open - 1);
  // Text after the bracket up to the next comma belongs to the name too ("gpu[1-2]-ib").
  const auto rest = nodelist.substr(close + 1, nodelist.find(',', close + 1) - close - 1);
  return nodelist.substr(0, open) + first + rest;
}

DistributedEnv read_distributed_env(const Lookup& lookup) {
  DistributedEnv env;
  // torchrun's variables win: a torchrun inside a Slurm allocation sees both.
  if (lookup("RANK") || lookup("WORLD_SIZE")) {
    env = from_torchrun(lookup);
  } else if (lookup("SLURM_PROCID") && lookup("SLURM_STEP_NUM_TASKS")) {
    // Only srun's job steps: a batch script's own shell (SLURM_NTASKS set, no step) is one process,
    // which must not wait for ranks that were never started.
    env = from_slurm(lookup);
  }
  check(env);
  return env;
}

DistributedEnv read_distributed_env() {
  return read_distributed_env([](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace ffnshape
