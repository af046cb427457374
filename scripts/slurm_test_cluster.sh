#!/bin/bash
# slurm_test_cluster.sh: a single-node Slurm cluster in one folder, for
# trying "compbench sweep --slurm" on a laptop and for the Go test that does
# it. Needs root and Debian's slurm-wlm and munge (make sweep-deps).
#
#   scripts/slurm_test_cluster.sh start DIR   # prints the environment to use
#   eval "$(scripts/slurm_test_cluster.sh env DIR)"
#   sbatch ... / compbench sweep --slurm ...
#   scripts/slurm_test_cluster.sh stop DIR
#
# DIR gets slurm.conf (SlurmUser=root, proctrack/linuxproc, task/none, one
# node with this machine's CPUs, one partition "debug"), a munge key, the
# daemons' state, logs and PID files. Nothing outside DIR is touched: the
# daemons use their own ports and munge socket, and stop kills exactly the
# PIDs they wrote.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
	echo "usage: $0 start|env|stop DIR" >&2
	exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

env_lines() {
	echo "export SLURM_CONF=$dir/slurm.conf"
}

stop() {
	local f pid pids=()
	# All three at once: each takes a second or two to exit on SIGTERM.
	for f in slurmd slurmctld munged; do
		[ -e "$dir/$f.pid" ] || continue
		pid=$(cat "$dir/$f.pid")
		if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
			kill "$pid" 2>/dev/null || true
			pids+=("$pid")
		fi
	done
	for pid in "${pids[@]}"; do
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
	done
	rm -f "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"
}

start() {
	for b in munged mungekey slurmctld slurmd sbatch; do
		command -v "$b" >/dev/null || { echo "$0: $b not found: install slurm-wlm and munge (make sweep-deps)" >&2; exit 1; }
	done
	[ "$(id -u)" = 0 ] || { echo "$0: the test cluster runs its daemons as root (SlurmUser=root)" >&2; exit 1; }
	local host cpus base
	host=$(hostname -s)
	cpus=$(nproc)
	# Ports from the shell's PID, so two test clusters on one machine do
	# not meet; SLURM_TEST_PORT picks them.
	base=${SLURM_TEST_PORT:-$((20000 + ($$ % 2000) * 2))}
	mkdir -p "$dir/munge" "$dir/state" "$dir/spool"
	chmod 700 "$dir/munge"
	[ -e "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null
	chmod 600 "$dir/munge/munge.key"
	cat >"$dir/slurm.conf" <<EOF
ClusterName=compbench-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
KillWait=10
SlurmdTimeout=30
MaxArraySize=1001
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
	munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
		--pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed"
	export SLURM_CONF=$dir/slurm.conf
	# -i: start afresh, ignoring state a previous cluster in DIR saved.
	slurmctld -i -f "$dir/slurm.conf"
	slurmd -f "$dir/slurm.conf"
	for _ in $(seq 150); do
		if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
			env_lines
			return 0
		fi
		sleep 0.2
	done
	echo "$0: the node did not come up in 30 s; logs in $dir:" >&2
	tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
	stop
	exit 1
}

case "$cmd" in
start) start ;;
env) env_lines ;;
stop) stop ;;
*)
	echo "usage: $0 start|env|stop DIR" >&2
	exit 2
	;;
esac
