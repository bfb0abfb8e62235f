#!/usr/bin/env bash
# A single-node Slurm on this machine, for trying examples/slurm/sweep.sbatch without a cluster:
# munged, slurmctld and slurmd with a minimal configuration in a temporary directory, run as the
# current (root) user. Needs Debian's slurm-wlm (apt-get install slurm-wlm).
#
#   examples/slurm/local-cluster.sh start DIR   # writes DIR/slurm.conf, starts the daemons
#   SLURM_CONF=DIR/slurm.conf sbatch …           # use it
#   examples/slurm/local-cluster.sh stop DIR    # stops the daemons it started (by their pid files)
set -euo pipefail
cmd=${1:?usage: local-cluster.sh start|stop DIR}
dir=$(mkdir -p "${2:?usage: local-cluster.sh start|stop DIR}" && cd "$2" && pwd)

stop() {
  for p in slurmd slurmctld munged; do
    if [ -f "$dir/$p.pid" ]; then
      kill "$(cat "$dir/$p.pid")" 2>/dev/null || true
      rm -f "$dir/$p.pid"
    fi
  done
}

if [ "$cmd" = stop ]; then
  stop
  exit 0
fi

host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/munge"
cat >"$dir/slurm.conf" <<CONF
ClusterName=ubapp-local
SlurmctldHost=$host
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MaxArraySize=1001
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
# cgroup.conf is read by some plugins even when cgroups are not used.
: # no cgroup.conf: proctrack/linuxproc and task/none need no cgroups

munged --socket="$dir/munge/munge.socket" --pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/munge/seed" --force
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$dir/slurm.conf"
slurmd -f "$dir/slurm.conf"
# Wait (at most 30 s) for the node to come up.
for _ in $(seq 60); do
  if sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
    echo "slurm is up: export SLURM_CONF=$dir/slurm.conf"
    exit 0
  fi
  sleep 0.5
done
echo "slurm did not come up within 30 s; logs in $dir/log" >&2
stop
exit 1
