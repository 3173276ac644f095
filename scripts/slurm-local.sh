#!/usr/bin/env bash
# A single-node Slurm on this machine, for the summarize end-to-end test (tests/slurm.rs):
#   scripts/slurm-local.sh start   install (apt) and start munged, slurmctld and slurmd as root
#   scripts/slurm-local.sh stop    stop them
# Exits 3 with one line on stderr when Slurm cannot run here (not root, no apt, no daemons).
set -uo pipefail
HOST=$(hostname -s)
CONF=/etc/slurm/slurm.conf
STATE=/var/spool/stepscope-slurm

cannot() { echo "slurm-local: $*" >&2; exit 3; }

install() {
  command -v slurmctld >/dev/null 2>&1 && command -v munged >/dev/null 2>&1 && return 0
  [ "$(id -u)" = 0 ] || cannot "not root: cannot install slurm-wlm"
  command -v apt-get >/dev/null 2>&1 || cannot "no apt-get to install slurm-wlm"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge) \
    >/dev/null 2>&1 || cannot "apt-get install slurm-wlm munge failed"
}

configure() {
  mkdir -p /etc/slurm "$STATE/ctld" "$STATE/d" /var/log/slurm /run/munge
  cat > "$CONF" <<CONF
ClusterName=stepscope
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
NodeName=$HOST CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
  # cgroup.conf is read by slurmd even with the cgroup plugins off in some builds.
  [ -f /etc/slurm/cgroup.conf ] || echo "CgroupPlugin=cgroup/v1" > /etc/slurm/cgroup.conf
  [ -f /etc/munge/munge.key ] || { mungekey -c -f >/dev/null 2>&1 || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null; }
  chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null
  chmod 0700 /etc/munge; chmod 0400 /etc/munge/munge.key
}

start() {
  [ "$(id -u)" = 0 ] || cannot "not root: cannot start slurmctld and slurmd"
  install
  if scontrol ping 2>/dev/null | grep -q UP && sinfo -h -o %t 2>/dev/null | grep -q idle; then
    return 0
  fi
  configure
  pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged 2>/dev/null \
    || /usr/sbin/munged --force 2>/dev/null || cannot "munged does not start"
  pgrep -x slurmctld >/dev/null || slurmctld -c 2>/dev/null || cannot "slurmctld does not start"
  pgrep -x slurmd >/dev/null || slurmd 2>/dev/null || cannot "slurmd does not start"
  for _ in $(seq 1 30); do
    state=$(sinfo -h -o %t 2>/dev/null | head -1)
    case "$state" in
      idle|mix|alloc) return 0 ;;
      drain*|down*) scontrol update nodename="$HOST" state=resume >/dev/null 2>&1 ;;
    esac
    sleep 1
  done
  cannot "the node never came up (sinfo: ${state:-nothing}; /var/log/slurm/*.log)"
}

stop() {
  pkill -x slurmd; pkill -x slurmctld
  true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
