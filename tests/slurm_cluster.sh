#!/usr/bin/env bash
# The Slurm recipe of examples/cluster run by a real Slurm (issue 24): a
# one-node cluster on loopback (munged, slurmctld -D, slurmd -D, started here
# and stopped by PID), then examples/cluster/slurm-submit.sh from a scratch
# copy of the repository folder, exactly as its README shows: the batch
# default (8 shards, JUnit) and the sweep recipe (16 shards, CSV + SVG + PNG).
# The array and its afterok merge step must run, and every merged file must
# equal the unsharded command's byte for byte.
# Needs root (slurmd starts jobs as their user); installs slurm-wlm and munge
# with apt-get when they are missing. Everything lives in one mktemp folder,
# removed at the end (SLURM_KEEP=1 keeps it). Without root it skips, unless
# CI=true, where that fails.
# Usage: tests/slurm_cluster.sh [LOCKSIM_BIN]. Closes with "tests: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bin=$(realpath "${1:-build/locksim}")
wait_s=${SLURM_WAIT:-150} # the longest wait for one submission's merge job (s)
t0=$SECONDS
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
step() { echo "slurm: [$((SECONDS - t0)) s] $*"; }
give_up() { # the cluster could not be set up: one failed test, and why
  echo "slurm: $*" >&2
  bad "a one-node Slurm cluster on loopback"
  echo "tests: $passed passed, $failed failed"; exit 1
}

if [ "$(id -u)" != 0 ]; then
  echo "slurm: needs root (slurmd runs the jobs as their user); the Slurm recipe is not tested"
  if [ "${CI:-}" = true ]; then echo "tests: 0 passed, 1 failed"; exit 1; fi
  echo "tests: 0 passed, 0 failed"; exit 0
fi
[ -x "$bin" ] || give_up "no binary $bin (run make first)"

step "packages"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm: installing slurm-wlm and munge (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  (apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=300 slurm-wlm munge >/dev/null 2>&1 ||
   (apt-get update >/dev/null 2>&1 &&
    apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=300 slurm-wlm munge >/dev/null 2>&1)) ||
    give_up "apt-get could not install slurm-wlm and munge"
fi

T=$(mktemp -d /tmp/locksim-slurm.XXXXXX)
chmod 700 "$T"
pids=() orphans=""
# slurmstepd processes of another Slurm on this machine (not ours to judge).
steps_before=" $(pgrep -x slurmstepd | tr '\n' ' ')"
# our_steps: the PIDs of the slurmstepd processes our slurmd started (one per
# job step; each leaves its own session, so they are found by name, less the
# ones there before).
our_steps() {
  local p
  for p in $(pgrep -x slurmstepd); do [[ $steps_before == *" $p "* ]] || echo "$p"; done
}
# stop GRACE PID...: TERM, then KILL for what has not stopped within GRACE
# tenths of a second.
stop() {
  local p grace=$1; shift
  for p in "$@"; do
    kill "$p" 2>/dev/null || continue
    for _ in $(seq 1 "$grace"); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
}
# Stops what this script started: the jobs (scancel, then up to 10 s for
# their slurmstepd to finish), slurmd, slurmctld and munged by PID; then a
# slurmstepd left orphaned (a run cut short stops slurmd under it), after the
# process group of each task it started, by PID. A slurmstepd ignores TERM.
cleanup() {
  local p left=""
  if [ -f "$T/slurm.conf" ] && [ ${#pids[@]} -ge 2 ] && kill -0 "${pids[1]}" 2>/dev/null; then
    SLURM_CONF=$T/slurm.conf timeout 5 scancel --quiet --user=root 2>/dev/null
    for _ in $(seq 1 50); do [ -z "$(our_steps)" ] && break; sleep 0.2; done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop 100 "${pids[i]}"; done
  orphans=$(our_steps | paste -sd ' ')
  for p in $orphans; do
    for t in $(pgrep -P "$p"); do kill -9 -- "-$t" "$t" 2>/dev/null; done
    kill -9 "$p" 2>/dev/null
  done
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
  [ -n "$left" ] && echo "slurm: FAIL: still running after the test:$left" >&2
  [ -n "$orphans" ] && echo "slurm: killed slurmstepd $orphans, left by a stopped slurmd" >&2
  if [ "${SLURM_KEEP:-0}" = 1 ]; then echo "slurm: kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT # cut short (timeout, ^C): the EXIT trap still stops the cluster

# Two free TCP ports on loopback, above 40000 (slurmctld's, then slurmd's).
free_port() {
  local p
  for p in $(seq "$1" $(($1 + 200))); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
  done
  return 1
}
cport=$(free_port $((40000 + RANDOM % 20000))) || give_up "no free port for slurmctld"
dport=$(free_port $((cport + 1))) || give_up "no free port for slurmd"

# The node offers the CPUs this machine has, and at least the 2 that
# slurm-shard.sbatch asks per task (--cpus-per-task=2): on a 1-core machine
# it claims 2 it does not have (SlurmdParameters=config_overrides lets it).
cpus=$(nproc)
[ "$cpus" -ge 2 ] || { cpus=2; echo "slurm: the node claims 2 CPUs on a machine with $(nproc)"; }
host=$(hostname -s)

step "munged, slurmctld, slurmd (ports $cport, $dport on 127.0.0.1, $cpus CPUs)"
mkdir -p "$T/state" "$T/spool" "$T/repo/build"
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge.key"
munged -F --force --key-file="$T/munge.key" --socket="$T/munge.sock" --pid-file="$T/munged.pid" \
  --log-file="$T/munged.log" --seed-file="$T/munged.seed" 2>>"$T/munged.log" & pids+=($!)
for _ in $(seq 1 50); do [ -S "$T/munge.sock" ] && break; sleep 0.1; done
[ -S "$T/munge.sock" ] || { cat "$T/munged.log" >&2; give_up "munged did not start"; }

cat > "$T/slurm.conf" <<EOF
# A one-node cluster on loopback for tests/slurm_cluster.sh (issue 24).
ClusterName=locksimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge.sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=sched_interval=1,bf_interval=1
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
MailProg=/bin/true
NodeName=locksim1 NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$cpus State=UNKNOWN
PartitionName=locksim Nodes=locksim1 Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$T/slurm.conf
slurmctld -D -c >"$T/slurmctld.out" 2>&1 & pids+=($!)
slurmd -D -N locksim1 >"$T/slurmd.out" 2>&1 & pids+=($!)

# The node must come up idle (bounded wait).
state=""
for _ in $(seq 1 60); do
  state=$(sinfo -h -n locksim1 -o %T 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 1
done
if [ "$state" != idle ]; then
  tail -n 20 "$T/slurmctld.log" "$T/slurmd.log" "$T/slurmctld.out" "$T/slurmd.out" >&2
  give_up "the node is '${state:-not reported}' after 60 s, not idle"
fi
ok "a one-node Slurm cluster on loopback (node idle)"

# The scratch copy of the repository folder: what the recipe reads.
cp -r examples scenarios "$T/repo/"
cp "$bin" "$T/repo/build/locksim"
for so in "$(dirname "$bin")"/locksim-*.so; do [ -e "$so" ] && cp "$so" "$T/repo/build/"; done
repo=$T/repo

# submit NAME N: slurm-submit.sh N in the scratch folder (LOCKSIM_ARGS and
# MERGE_ARGS from the caller's environment), then waits for the merge job.
# Fails loudly on a merge job that cannot run (DependencyNeverSatisfied), ends
# other than COMPLETED, or is still there after $wait_s s.
submit() {
  local name=$1 n=$2 out mid st reason
  step "$name: examples/cluster/slurm-submit.sh $n"
  out=$(cd "$repo" && examples/cluster/slurm-submit.sh "$n" 2>&1)
  echo "$out"
  mid=$(echo "$out" | sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' | tail -1)
  if [ -z "$mid" ]; then bad "$name: slurm-submit.sh submits the array and the merge job"; return 1; fi
  ok "$name: slurm-submit.sh submits the array and the merge job ($mid)"
  local until=$((SECONDS + wait_s))
  while :; do
    st=$(scontrol show job "$mid" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    reason=$(scontrol show job "$mid" 2>/dev/null | sed -n 's/.* Reason=\([^ ]*\).*/\1/p')
    case $st in
      COMPLETED) break ;;
      PENDING | RUNNING | CONFIGURING | COMPLETING | "")
        [ "$reason" = DependencyNeverSatisfied ] && break
        [ $SECONDS -lt $until ] || break
        sleep 1 ;;
      *) break ;;
    esac
  done
  if [ "$st" != COMPLETED ]; then
    echo "slurm: $name: merge job $mid is ${st:-gone}${reason:+ (Reason=$reason)} after $((SECONDS - until + wait_s)) s" >&2
    scontrol show job "$mid" >&2
    squeue -a >&2
    sacct -a -X 2>&1 | head -40 >&2 # with accounting off this says so
    # The array's tasks: state and exit code of each, the log of each that failed.
    local arr line
    arr=$(scontrol show job "$mid" 2>/dev/null | sed -n 's/.*Dependency=after[a-z]*:\([0-9]*\).*/\1/p')
    [ -n "$arr" ] && scontrol -o show job "$arr" 2>/dev/null | while read -r line; do
      echo "$line" | sed -n 's/.* ArrayTaskId=\([0-9]*\) .*JobState=\([A-Z_]*\) .*ExitCode=\([0-9:]*\).*/slurm: array task \1: \2, exit \3/p' >&2
      case $line in *JobState=COMPLETED*) ;; *) tail -n 5 "$(echo "$line" | sed -n 's/.* StdOut=\([^ ]*\).*/\1/p')" >&2 2>/dev/null ;; esac
    done
    tail -n 30 "$T/slurmctld.log" >&2
    bad "$name: the array and its afterok merge step run to COMPLETED"
    return 1
  fi
  ok "$name: the array and its afterok merge step run to COMPLETED"
  step "$name: merge job $mid completed"
}

# same NAME A B: files A and B hold the same bytes.
same() {
  if [ -s "$2" ] && cmp -s "$2" "$3"; then ok "$1"; else
    bad "$1"; ls -l "$2" "$3" >&2; cmp "$2" "$3" >&2
  fi
}

# 1. The batch default: 8 shards, the merge into cluster-shards/batch.xml.
mkdir -p "$T/want"
unset LOCKSIM_ARGS MERGE_ARGS SHARD_DIR LOCKSIM
if submit "batch default" 8; then
  step "batch default: the unsharded command"
  (cd "$repo" && build/locksim batch scenarios --seeds 1..200 --algos all --format junit --out "$T/want/batch.xml")
  same "batch default: merged JUnit XML equals the unsharded run's" "$T/want/batch.xml" "$repo/cluster-shards/batch.xml"
  rm -f "$T/want/batch.xml" "$repo/cluster-shards/batch.xml" "$repo"/cluster-shards/shard-*.jsonl
fi

# 2. The sweep recipe of the README, 16 shards, with a PNG as well.
sweep='sweep scenarios/gc-pause-outlives-lease.lsim --vary pause=1s..55s/1s --vary ttl=5s..60s/5s --algos lease,fenced-lease'
if LOCKSIM_ARGS=$sweep MERGE_ARGS='--format csv --out grid.csv --svg grid.svg --png grid.png' submit "sweep" 16; then
  step "sweep: the unsharded command"
  # shellcheck disable=SC2086  # $sweep is a word list, as in the recipe
  (cd "$repo" && build/locksim $sweep --format csv --out "$T/want/grid.csv" --svg "$T/want/grid.svg" --png "$T/want/grid.png")
  for f in grid.csv grid.svg grid.png; do
    same "sweep: merged ${f#grid.} equals the unsharded run's" "$T/want/$f" "$repo/$f"
  done
fi

step "stopping the cluster"
trap - EXIT
cleanup
# Nothing of the cluster runs on: the daemons by PID, and no slurmstepd (the
# process slurmd starts for each job) but another Slurm's.
left=""
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
if [ -z "$left$orphans" ]; then ok "nothing left running (munged, slurmctld, slurmd, slurmstepd)"; else
  bad "nothing left running: still there after the daemons stopped:$left ${orphans:+slurmstepd $orphans}"
fi
step "done"
echo "tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
