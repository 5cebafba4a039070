#!/usr/bin/env bash
# The Slurm path without Slurm: tests/fake_srun.sh starts two tasks of tests/process_group_rank,
# which find each other from srun's variables alone (rank, world, first host of the node list, port
# from the job id). Argument: the process_group_rank binary.
set -uo pipefail
source "$(dirname "$0")/cli_lib.sh"
rank_bin=$1
here=$(cd "$(dirname "$0")" && pwd)
# As inside a batch job: no torchrun variables, no rendezvous chosen by hand.
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT SLURM_JOB_ID SLURM_NTASKS
unset SLURM_JOB_NODELIST SLURM_NODELIST SLURM_CPUS_PER_TASK OMP_NUM_THREADS

# Two ranks of one job step agree on an all-reduce and a broadcast.
expect 0 "process group under the fake srun" -- timeout 120 bash "$here/fake_srun.sh" -n 2 "$rank_bin" 30000
contains "rank 0 of 2: sum 3, broadcast 6" "$out" "rank 0 under srun"
contains "rank 1 of 2: sum 3, broadcast 6" "$out" "rank 1 under srun"

# One failing task stops the step: the others are killed, and the failure's code comes back.
start=$(date +%s)
expect 3 "a failing task" -- timeout 60 bash "$here/fake_srun.sh" --ntasks=3 \
  bash -c '[ "$SLURM_PROCID" != 1 ] || exit 3; exec sleep 50'
[ $(($(date +%s) - start)) -lt 30 ] || fail "the fake srun waited for the tasks it should have stopped"

finish slurm_launch
