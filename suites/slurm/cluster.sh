#!/bin/bash
# A real two-node Slurm on this host, for the tests (docs/slurm.md):
# munged, slurmctld and two slurmd (`slurmd -N n1`, `-N n2`) from a
# private folder, every daemon on its own ports and socket, so two runs
# on one host do not meet.
#
#   cluster.sh start DIR   bring it up; DIR/env holds the variables to
#                          source (SLURM_CONF, ...); exit 0 when both
#                          nodes are idle, 77 with the reason on stderr
#                          (and in DIR/skip) when Slurm cannot start here
#   cluster.sh stop DIR    stop what start started (by pid) and take its
#                          line out of /etc/hosts again
#
# What Debian 12's slurm-wlm 22.05 needs for two emulated nodes on one
# host (every line found by trying): one NodeName per node with
# NodeHostname=localhost, NodeAddr=127.0.0.1 and its own Port; %n in the
# slurmd spool, log and pid paths; node names that resolve (ranks find
# rank 0 by the step's first node name: an /etc/hosts line); CPUs=8 per
# node with SlurmdParameters=config_overrides (the host may have 2
# cores); proctrack/linuxproc and task/none (no cgroups in containers);
# select/cons_tres for --gpus-per-node; jobcomp/filetxt so `sacct -c`
# shows state and exit codes without slurmdbd; GPUs as GRES on empty
# files (22.05 drops GPUs without File=).
# Every wait has a deadline (EG_SLURM_UP_S, default 30 s).
set -u

NODES="n1 n2"
GPUS_PER_NODE=2

die77() {
	echo "cluster.sh: Slurm cannot start here: $*" >&2
	[ -n "${D:-}" ] && [ -d "$D" ] && echo "$*" >"$D/skip"
	stop_all
	exit 77
}

# A base port with this and the next 3 free (ctld, one per slurmd, spare).
pick_ports() {
	local tries=0 base busy
	busy=$(ss -Htan 2>/dev/null | awk '{n=split($4,a,":"); print a[n]}')
	while [ "$tries" -lt 50 ]; do
		base=$((30000 + (RANDOM % 2500) * 4))
		if ! printf '%s\n' "$busy" | grep -qx "$base\|$((base + 1))\|$((base + 2))\|$((base + 3))"; then
			echo "$base"
			return 0
		fi
		tries=$((tries + 1))
	done
	return 1
}

write_conf() {
	local base=$1 i=0 n
	mkdir -p "$D/state" "$D/log" "$D/spool" "$D/gpu" || return 1
	{
		echo "ClusterName=epgate$base"
		echo "SlurmctldHost=localhost(127.0.0.1)"
		echo "SlurmctldPort=$base"
		echo "SlurmUser=root"
		echo "SlurmdUser=root"
		echo "AuthType=auth/munge"
		echo "CredType=cred/munge"
		echo "AuthInfo=socket=$D/munge/munge.socket"
		echo "StateSaveLocation=$D/state"
		echo "SlurmdSpoolDir=$D/spool/%n"
		echo "SlurmctldPidFile=$D/slurmctld.pid"
		echo "SlurmdPidFile=$D/slurmd.%n.pid"
		echo "SlurmctldLogFile=$D/log/slurmctld.log"
		echo "SlurmdLogFile=$D/log/slurmd.%n.log"
		echo "PlugStackConfig=$D/plugstack.conf"
		echo "ProctrackType=proctrack/linuxproc"
		echo "TaskPlugin=task/none"
		echo "SelectType=select/cons_tres"
		echo "SelectTypeParameters=CR_Core"
		echo "MpiDefault=none"
		echo "JobCompType=jobcomp/filetxt"
		echo "JobCompLoc=$D/jobcomp.txt"
		echo "JobAcctGatherType=jobacct_gather/none"
		echo "AccountingStorageType=accounting_storage/none"
		echo "SlurmdParameters=config_overrides"
		echo "ReturnToService=2"
		echo "GresTypes=gpu"
		echo "KillWait=5"
		# sbatch --wait polls every 2 s while 2 s >= MinJobAge / 2;
		# above, it backs off to 8 and 32 s (a 12 s job waits 42 s)
		echo "MinJobAge=4"
		echo "InactiveLimit=0"
		echo "SlurmdTimeout=60"
		# a step launch's messages on a loaded 2-core host: Slurm's 10 s
		# default can lapse, and srun then ends the step's started tasks
		# (SIGTERM, 143); docs/ci.md, "check-slurm's 143"
		echo "MessageTimeout=60"
		for n in $NODES; do
			i=$((i + 1))
			echo "NodeName=$n NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + i)) CPUs=8 Gres=gpu:$GPUS_PER_NODE State=UNKNOWN"
		done
		echo "PartitionName=epgate Nodes=$(echo $NODES | tr ' ' ,) Default=YES MaxTime=30 State=UP"
	} >"$D/slurm.conf" || return 1
	: >"$D/plugstack.conf"
	{
		echo "AutoDetect=off"
		for n in $NODES; do
			for g in $(seq 0 $((GPUS_PER_NODE - 1))); do
				: >"$D/gpu/$n.$g" || return 1
			done
			echo "NodeName=$n Name=gpu File=$D/gpu/$n.[0-$((GPUS_PER_NODE - 1))]"
		done
	} >"$D/gres.conf"
}

# Node names resolve: one line in /etc/hosts, marked with this folder
# (always our own, so that another cluster's teardown cannot take it).
hosts_add() {
	local mark="# epgate-slurm $D" n
	(
		flock 9
		echo "127.0.0.1 $NODES $mark" >>/etc/hosts
	) 9>>/etc/hosts 2>/dev/null || return 1
	echo "$mark" >"$D/hosts-line"
	for n in $NODES; do
		# an earlier line of this host's wins: it must say loopback
		getent hosts "$n" | grep -q '^127\.' || {
			echo "node name $n resolves to $(getent hosts "$n" | head -n 1), not this host"
			return 1
		}
	done
}

hosts_remove() {
	[ -f "$D/hosts-line" ] || return 0
	local mark tmp
	mark=$(cat "$D/hosts-line")
	(
		flock 9
		tmp=$D/hosts.new
		grep -vF -- "$mark" /etc/hosts >"$tmp" || exit 1
		# keep the inode: containers bind-mount /etc/hosts
		cat "$tmp" >/etc/hosts
		rm -f "$tmp"
	) 9>>/etc/hosts
	rm -f "$D/hosts-line"
}

# pid files name what this folder started; nothing else is touched.
stop_all() {
	local f pid deadline
	[ -n "${D:-}" ] && [ -d "$D" ] || return 0
	for f in "$D"/slurmd.*.pid "$D/slurmctld.pid" "$D/munge/munged.pid"; do
		[ -f "$f" ] || continue
		pid=$(cat "$f" 2>/dev/null)
		case "$pid" in '' | *[!0-9]*) continue ;; esac
		kill "$pid" 2>/dev/null
		deadline=$((SECONDS + 10))
		while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null
		rm -f "$f"
	done
	hosts_remove
}

log_tail() {
	local f
	for f in "$D"/log/*.log "$D"/munge/munged.log; do
		[ -s "$f" ] && { echo "---- $f"; tail -n 5 "$f"; }
	done
}

start_munge() {
	mkdir -p "$D/munge" && chown munge: "$D/munge" && chmod 755 "$D/munge" ||
		return 1
	runuser -u munge -- /usr/sbin/munged --socket="$D/munge/munge.socket" \
		--pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" \
		--seed-file="$D/munge/munged.seed" --key-file=/etc/munge/munge.key \
		>"$D/munge/start.out" 2>&1
}

# until: poll a condition (a command) every 0.1 s up to the deadline.
until_ok() {
	local deadline=$((SECONDS + $1))
	shift
	while ! "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.1
	done
}

nodes_idle() {
	local s
	s=$(timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null | sort -u)
	[ "$(printf '%s\n' "$s" | grep -c ' idle$')" -eq "$(echo $NODES | wc -w)" ]
}

start() {
	local up=${EG_SLURM_UP_S:-30} base n why
	for b in munged slurmctld slurmd srun sbatch sinfo scontrol sacct runuser; do
		command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] ||
			die77 "$b not found (apt-get install slurmctld slurmd slurm-client munge)"
	done
	[ "$(id -u)" -eq 0 ] || die77 "needs root (daemons as root, /etc/hosts)"
	[ -r /etc/munge/munge.key ] || die77 "no /etc/munge/munge.key (the munge package makes it)"
	id munge >/dev/null 2>&1 || die77 "no user munge"
	mkdir -p "$D" && chmod 755 "$D" || die77 "cannot create $D"
	base=$(pick_ports) || die77 "no free ports"
	write_conf "$base" || die77 "cannot write the configuration in $D"
	export SLURM_CONF=$D/slurm.conf
	{
		echo "export SLURM_CONF=$D/slurm.conf"
		echo "export FI_TCP_IFACE=lo"
		echo "export EG_SLURM_DIR=$D"
		echo "export EG_SLURM_GPUS_PER_NODE=$GPUS_PER_NODE"
	} >"$D/env"
	why=$(hosts_add) || die77 "cannot make the node names resolve: ${why:-/etc/hosts not writable}"
	start_munge || die77 "munged did not start: $(tail -n 3 "$D/munge/start.out" "$D/munge/munged.log" 2>/dev/null)"
	until_ok "$up" test -S "$D/munge/munge.socket" ||
		die77 "munged: no socket within $up s"
	/usr/sbin/slurmctld -f "$SLURM_CONF" >"$D/log/slurmctld.out" 2>&1 ||
		die77 "slurmctld did not start: $(log_tail)"
	until_ok "$up" timeout 5 scontrol ping ||
		die77 "slurmctld does not answer within $up s: $(log_tail)"
	for n in $NODES; do
		/usr/sbin/slurmd -f "$SLURM_CONF" -N "$n" >"$D/log/slurmd.$n.out" 2>&1 ||
			die77 "slurmd -N $n did not start: $(log_tail)"
	done
	until_ok "$up" nodes_idle ||
		die77 "nodes not idle within $up s: $(timeout 5 sinfo -N 2>&1) $(log_tail)"
	echo "cluster.sh: Slurm up in $D (nodes $NODES, ctld port $base)"
}

[ $# -eq 2 ] || {
	echo "usage: cluster.sh start|stop DIR" >&2
	exit 99
}
D=$2
case "$1" in
start) start ;;
stop) stop_all ;;
*)
	echo "usage: cluster.sh start|stop DIR" >&2
	exit 99
	;;
esac
