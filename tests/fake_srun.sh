#!/usr/bin/env bash
# A stand-in for Slurm's srun in tests: starts the tasks of one job step on this machine, as srun
# would on a single node, with the variables srun gives each task (SLURM_PROCID, SLURM_LOCALID,
# SLURM_STEP_NUM_TASKS, SLURM_STEP_TASKS_PER_NODE, SLURM_STEP_NODELIST, ...), waits for all, and
# like srun --kill-on-bad-exit stops the others when one fails, exiting with the failed task's code.
#
#   fake_srun.sh [-n N | --ntasks=N] [other srun options, ignored] COMMAND [ARGS...]
#
# Without -n the step has SLURM_NTASKS tasks (the batch job's), else 1. The node is
# $FAKE_SRUN_HOST (default 127.0.0.1). Without SLURM_JOB_ID a random six-digit job id is drawn whose
# rendezvous port (20000 + id % 20000, unless MASTER_PORT is set) is free, so that tests running
# side by side do not collide.
set -uo pipefail

ntasks=${SLURM_NTASKS:-1}
while [ $# -gt 0 ]; do
  case $1 in
    -n | --ntasks) ntasks=$2; shift 2 ;;
    -n*) ntasks=${1#-n}; shift ;;
    --ntasks=*) ntasks=${1#--ntasks=}; shift ;;
    -N | -c | -p | -t | -J) shift 2 ;;  # options with a separate value
    --) shift; break ;;
    -*) shift ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "fake srun: no command to run" >&2; exit 2; }
[[ $ntasks =~ ^[1-9][0-9]*$ ]] || { echo "fake srun: '$ntasks' tasks is not a positive integer" >&2; exit 2; }

port_is_free() {
  python3 -c 'import socket, sys; socket.socket().bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null
}
if [ -z "${SLURM_JOB_ID:-}" ]; then
  for _ in $(seq 50); do
    SLURM_JOB_ID=$((100000 + (RANDOM * 32768 + RANDOM) % 900000))
    [ -n "${MASTER_PORT:-}" ] || port_is_free $((20000 + SLURM_JOB_ID % 20000)) && break
  done
fi
host=${FAKE_SRUN_HOST:-127.0.0.1}
export SLURM_JOB_ID SLURM_JOBID=$SLURM_JOB_ID
export SLURM_JOB_NODELIST=${SLURM_JOB_NODELIST:-$host} SLURM_NODELIST=${SLURM_NODELIST:-$host}
export SLURM_JOB_NUM_NODES=1 SLURM_NNODES=1 SLURM_NODEID=0 SLURM_STEP_ID=0 SLURM_STEPID=0
export SLURM_NTASKS=$ntasks SLURM_NPROCS=$ntasks SLURM_STEP_NUM_TASKS=$ntasks SLURM_STEP_NUM_NODES=1
export SLURM_STEP_TASKS_PER_NODE=$ntasks SLURM_TASKS_PER_NODE=$ntasks SLURM_STEP_NODELIST=$host

# Each task in its own process group, so that stopping a task stops whatever it started.
set -m
declare -A running  # pid -> task
for ((task = 0; task < ntasks; task++)); do
  SLURM_PROCID=$task SLURM_LOCALID=$task "$@" &
  running[$!]=$task
done
stop_all() { for pid in "${!running[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done; }
trap 'stop_all' TERM INT

code=0
while [ ${#running[@]} -gt 0 ]; do
  finished=
  wait -n -p finished "${!running[@]}" 2>/dev/null  # (no job-control notices)
  status=$?
  if [ -z "${finished:-}" ]; then
    [ "$status" -ne 127 ] || break  # no task left to wait for (reaped already): no busy loop
    continue                        # a signal interrupted the wait; the trap forwarded it
  fi
  unset "running[$finished]"
  if [ "$status" -ne 0 ] && [ "$code" -eq 0 ]; then
    code=$status
    echo "fake srun: a task exited with code $status; stopping the others" >&2
    stop_all
  fi
done
exit "$code"
