// Reading a process's place in a data-parallel job from torchrun's and Slurm's variables, as those
// launchers set them (torchrun's elastic agent; srun's job-step environment).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ffnshape/train/distributed_env.h"

using namespace ffnshape;

namespace {

DistributedEnv read(const std::map<std::string, std::string>& vars) {
  return read_distributed_env([&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

std::string error_of(const std::map<std::string, std::string>& vars) {
  try {
    read(vars);
  } catch (const DistributedEnvError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(DistributedEnv, NoLauncherIsAWorldOfOne) {
  const auto env = read({{"HOME", "/root"}, {"SLURM_JOB_ID", "77"}, {"SLURM_NTASKS", "8"}, {"SLURM_PROCID", "0"}});
  EXPECT_EQ(env.launcher, "none");  // a batch script's own shell: no job step, so no ranks to wait for
  EXPECT_EQ(env.world_size, 1);
  EXPECT_FALSE(env.distributed());
}

TEST(DistributedEnv, TorchrunVariables) {
  const auto env = read({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"},
                         {"MASTER_ADDR", "node07"}, {"MASTER_PORT", "29500"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                         {"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}});  // torchrun inside an allocation
  EXPECT_EQ(env.launcher, "torchrun");
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_world_size, 4);
  EXPECT_EQ(env.master_addr, "node07");
  EXPECT_EQ(env.master_port, 29500);
  EXPECT_TRUE(env.agent_store);
  EXPECT_TRUE(env.distributed());
  EXPECT_FALSE(read({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"},
                     {"TORCHELASTIC_USE_AGENT_STORE", "False"}})
                   .agent_store);
}

TEST(DistributedEnv, SlurmJobStep) {
  const auto env = read({{"SLURM_PROCID", "6"}, {"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_LOCALID", "2"},
                         {"SLURM_STEP_TASKS_PER_NODE", "4(x2)"}, {"SLURM_STEP_NODELIST", "gpu[07-08]"},
                         {"SLURM_JOB_NODELIST", "gpu[01-08]"}, {"SLURM_JOB_ID", "123456"}});
  EXPECT_EQ(env.launcher, "slurm");
  EXPECT_EQ(env.rank, 6);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 2);
  EXPECT_EQ(env.local_world_size, 4);
  EXPECT_EQ(env.master_addr, "gpu07");
  EXPECT_EQ(env.master_port, 20000 + 123456 % 20000);
  const auto exported = read({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_NTASKS_PER_NODE", "2"},
                              {"SLURM_JOB_NODELIST", "a1"}, {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29400"}});
  EXPECT_EQ(exported.master_addr, "10.0.0.1");
  EXPECT_EQ(exported.master_port, 29400);
  EXPECT_EQ(exported.local_world_size, 2);
  // Job ids of busy clusters pass ten million.
  const auto big = read({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_JOB_NODELIST", "a1"},
                         {"SLURM_JOB_ID", "48123457"}});
  EXPECT_EQ(big.master_port, 20000 + 48123457 % 20000);
}

TEST(DistributedEnv, FirstHostOfASlurmNodeList) {
  EXPECT_EQ(first_slurm_host("nid001234"), "nid001234");
  EXPECT_EQ(first_slurm_host("cpu1,cpu2"), "cpu1");
  EXPECT_EQ(first_slurm_host("gpu[07-09,12],cpu1"), "gpu07");
  EXPECT_EQ(first_slurm_host("gpu[3,5-7]"), "gpu3");
  EXPECT_EQ(first_slurm_host("rack1-n[0010-0020]-ib"), "rack1-n0010-ib");
  EXPECT_EQ(first_slurm_host("login2,gpu[1-2]"), "login2");
  EXPECT_THROW(first_slurm_host("gpu[1-2"), DistributedEnvError);
}

TEST(DistributedEnv, ContradictionsNameTheVariableAndTheFix) {
  EXPECT_NE(error_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}})
                .find("rank 2 is outside a world of 2 (RANK / WORLD_SIZE)"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "x"}, {"WORLD_SIZE", "2"}}).find("RANK='x' is not an integer"), std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}).find("MASTER_ADDR is not set"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}).find("MASTER_PORT is not set"),
            std::string::npos);
  EXPECT_NE(error_of({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_JOB_ID", "1"}})
                .find("the Slurm node list is empty"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"LOCAL_RANK", "1"}}).find("local rank 1"), std::string::npos);
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "1"}}), "");  // a world of one needs no rendezvous
}
