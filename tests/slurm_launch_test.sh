#!/usr/bin/env bash
# The Slurm path without Slurm: tests/fake_srun.sh starts two tasks of tests/process_group_rank,
# which find each other from srun's variables alone (rank, world, first host of the node list, port
# from the job id); scripts/slurm/train.sbatch, run by bash with the fake srun on PATH, starts its
# ranks with the training command line it promises. Argument: the process_group_rank binary.
set -uo pipefail
source "$(dirname "$0")/cli_lib.sh"
rank_bin=$1
here=$(cd "$(dirname "$0")" && pwd)
sbatch_script=$here/../scripts/slurm/train.sbatch
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

# The batch script: its srun line starts every task of the job with the training command, the CPUs
# per task as threads; the stub then joins the job as process_group_rank does.
mkdir -p "$tmp/bin"
ln -s "$here/fake_srun.sh" "$tmp/bin/srun"
cat >"$tmp/stub" <<STUB
#!/usr/bin/env bash
printf '[%s]' "\$@" >"$tmp/args.\$SLURM_PROCID"
echo "\$OMP_NUM_THREADS \$SRUN_CPUS_PER_TASK \$SLURM_LOCALID \$SLURM_STEP_TASKS_PER_NODE" >"$tmp/env.\$SLURM_PROCID"
exec "$rank_bin" 30000
STUB
chmod +x "$tmp/stub"
expect 0 "train.sbatch under bash and the fake srun" -- env PATH="$tmp/bin:$PATH" FFNSHAPE="$tmp/stub" \
  SLURM_NTASKS=2 SLURM_CPUS_PER_TASK=3 SLURM_JOB_NODELIST=127.0.0.1 timeout 120 bash "$sbatch_script" cfg.yaml "runs/a b"
contains "rank 0 of 2: sum 3, broadcast 6" "$out" "rank 0 from train.sbatch"
contains "rank 1 of 2: sum 3, broadcast 6" "$out" "rank 1 from train.sbatch"
for r in 0 1; do
  [ "$(cat "$tmp/args.$r" 2>/dev/null)" = "[train][cfg.yaml][--run-dir][runs/a b][--resume][auto]" ] ||
    fail "rank $r's command line: $(cat "$tmp/args.$r" 2>/dev/null)"
  [ "$(cat "$tmp/env.$r" 2>/dev/null)" = "3 3 $r 2" ] || fail "rank $r's environment: $(cat "$tmp/env.$r" 2>/dev/null)"
done
expect 2 "train.sbatch without its arguments" -- env PATH="$tmp/bin:$PATH" bash "$sbatch_script" cfg.yaml
contains "usage: sbatch" "$err" "train.sbatch usage"

finish slurm_launch
