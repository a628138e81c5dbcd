#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the tests of augbench's Slurm engine
# (docs/cluster.md, "Testing on one machine"): munged on its own socket, slurmctld and slurmd,
# every file under one state folder, from scripts/slurm/slurm.conf.in. Nothing is installed as a
# service and nothing is left running after `stop`.
#
# Usage: scripts/slurm_cluster.sh start DIR   # prints the SLURM_CONF to export
#        scripts/slurm_cluster.sh stop DIR
# Needs slurm-wlm and munge (Debian: apt-get install slurm-wlm munge), run as root (slurmd starts
# each task as the user who submitted it).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:?usage: slurm_cluster.sh start|stop DIR}
DIR=${2:?usage: slurm_cluster.sh start|stop DIR}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
CONF="$DIR/slurm.conf"

stop_pid() { # <pid file>
  [ -f "$1" ] || return 0
  local pid
  pid=$(cat "$1")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$1"
}

stop() {
  if [ -f "$CONF" ]; then
    SLURM_CONF="$CONF" scancel --user "$(id -un)" >/dev/null 2>&1 || true
  fi
  stop_pid "$DIR/slurmd.pid"
  stop_pid "$DIR/slurmctld.pid"
  stop_pid "$DIR/munge/munged.pid"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  for tool in munged mungekey slurmctld slurmd sbatch squeue; do
    command -v "$tool" >/dev/null || { echo "slurm_cluster.sh: $tool is missing (apt-get install slurm-wlm munge)" >&2; exit 2; }
  done
  stop
  mkdir -p "$DIR/munge" "$DIR/ctld" "$DIR/slurmd"
  chmod 700 "$DIR/munge"
  [ -f "$DIR/munge/munge.key" ] || mungekey --create --keyfile="$DIR/munge/munge.key" >/dev/null
  chmod 600 "$DIR/munge/munge.key"
  munged --force --socket="$DIR/munge/munge.socket" --key-file="$DIR/munge/munge.key" \
    --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" \
    --seed-file="$DIR/munge/munged.seed"
  local mem host node
  mem=$(awk '/MemTotal/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
  host=$(hostname)
  node=$(hostname -s)
  sed -e "s|@HOST@|$host|g" -e "s|@NODE@|$node|g" -e "s|@USER@|$(id -un)|g" \
    -e "s|@STATE@|$DIR|g" -e "s|@CPUS@|$(nproc)|g" -e "s|@MEM_MB@|$mem|g" \
    -e "s|@CTLD_PORT@|$(free_port)|g" -e "s|@SLURMD_PORT@|$(free_port)|g" \
    "$ROOT/scripts/slurm/slurm.conf.in" >"$CONF"
  slurmctld -c -f "$CONF"
  slurmd -f "$CONF" -N "$node"
  export SLURM_CONF="$CONF"
  for _ in $(seq 100); do
    if sinfo -h -N -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; then
      echo "SLURM_CONF=$CONF"
      return 0
    fi
    sleep 0.2
  done
  echo "slurm_cluster.sh: the node did not come up; the logs:" >&2
  tail -20 "$DIR/slurmctld.log" "$DIR/slurmd.log" "$DIR/munge/munged.log" >&2 || true
  stop
  exit 1
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: slurm_cluster.sh start|stop DIR" >&2; exit 2 ;;
esac
