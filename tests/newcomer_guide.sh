#!/usr/bin/env bash
# Follows README.md's "Where a newcomer adds: an algorithm" for a toy
# algorithm in a scratch copy of the tree (never the tree itself), so the
# guide cannot go stale: every file and name the guide mentions exists; then
# the toy's file, its two registry lines, the build (and
# `make algo-headers`), a scenario with it, its golden trace by
# `check --update`, its trace hash by `make hashes`, and `check` passing;
# then "a fault" for a toy fault (`@T nudge NODE`), whose trace kind's
# -Wswitch errors must name only files the guide lists.
# The scratch copy starts from BUILD_DIR's objects, so only what the toy
# touches is compiled (a few seconds). Prints one line per failure and
# `guide: N passed, M failed`.
# Usage: tests/newcomer_guide.sh REPO_DIR BUILD_DIR
#   (CC, OPT and LDLIBS from the environment, as the build used them;
#    GUIDE_KEEP=1 leaves the scratch tree in /tmp to look at)
set -u
repo=$(cd "${1:-.}" && pwd)
bdir=${2:-build}; bname=$(basename "$bdir")
work=$(mktemp -d); [ -n "${GUIDE_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
passed=0; failed=0
step() { # step NAME COMMAND...: run in the scratch tree, count, say a failure
  local name=$1; shift
  if (cd "$work" && "$@") >"$work/.log" 2>&1; then passed=$((passed + 1))
  else failed=$((failed + 1)); echo "guide: $name failed:"; tail -5 "$work/.log" | sed 's/^/      /'; fi
}
# The scratch tree: sources and the built objects, timestamps kept, so make
# sees the objects up to date and rebuilds only what the toy changes.
for d in Makefile mk sim render run real cli gfx examples; do cp -a "$repo/$d" "$work/"; done
mkdir -p "$work/$bname" "$work/scenarios/golden" "$work/tests"
for d in sim render run real cli gfx gfx-pic; do
  [ -d "$repo/$bdir/$d" ] && cp -a "$repo/$bdir/$d" "$work/$bname/"
done
cp -a "$repo/$bdir"/*.a "$repo/$bdir"/*.so "$repo/$bdir/.deps" "$repo/$bdir/locksim" "$work/$bname/" 2>/dev/null
mk() { env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory BUILD="$bname" \
         ${CC:+CC="$CC"} ${OPT:+OPT="$OPT"} ${LDLIBS:+LDLIBS="$LDLIBS"} "$@"; }

# 0. Every file the guide names exists, and every `NAME` (`FILE` it names is in that file.
guide=$(sed -n '/^Where a newcomer adds:/,/^Design in one breath/p' "$repo/README.md")
step "README.md has the guide" test -n "$guide"
for f in $(grep -o '`[a-z_]*/[A-Za-z_./]*`' <<<"$guide" | tr -d '`' | sort -u); do
  case "$f" in *NAME*|*NEW*) continue ;; esac
  step "the guide's $f exists" test -e "$repo/$f"
done
while IFS= read -r pair; do
  name=${pair#\`}; name=${name%%\`*}; f=${pair##*(\`}; f=${f%\`}
  step "the guide's $name is in $f" grep -qF "$name" "$repo/$f"
done < <(grep -o '`[^`]*` (`[a-z_]*/[A-Za-z_./]*`' <<<"$guide" | sort -u)
step "docs/explore.md has the guide's table" grep -qF 'Every algorithm under one budget' "$repo/docs/explore.md"

# 1. Its file, including only kv.h (a clone of lease under another name).
cat > "$work/sim/algo/algo_toy.c" <<'EOF'
/* toy: the newcomer guide's test algorithm, SET NX PX as lease does. */
#include "kv.h"

#define ALLOWED (KV_OPT_TTL | KV_OPT_RELEASE | KV_OPT_VALUE | KV_OPT_TIMEOUT)

static void defaults(void *config) { kv_config_default(config, "toy", ALLOWED); }
static int option(void *config, const char *k, const char *v, char *err, size_t n) {
    return kv_option(config, k, v, err, n);
}

const struct lock_algo algo_toy = {
    .abi = LOCK_ABI_VERSION,
    .name = "toy",
    .summary = "the newcomer guide's toy: a lease under another name",
    .default_servers = 1,
    .max_servers = KV_MAX_SERVERS,
    .config_size = sizeof(struct kv_config),
    .config_default = defaults,
    .option = option,
    KV_ALGO_CALLBACKS,
    KV_STATES,
};
EOF
# 2. Two registry lines: its extern and its entry in registry[].
reg="$work/sim/algo/algo_registry.c"
sed -i -e '0,/^extern const struct lock_algo/s//extern const struct lock_algo algo_toy;\n&/' \
       -e 's/^static const struct lock_algo \*const registry\[\] = {$/&\n    \&algo_toy,/' "$reg"
step "the registry's two lines" test "$(grep -c 'algo_toy' "$reg")" = 2
step "make build/locksim" mk "$bname/locksim"
step "make algo-headers" mk algo-headers
step "locksim list names toy" sh -c "'$bname/locksim' list | grep -qw toy"

# 3. A scenario with it, its golden trace and its trace hash.
cat > "$work/scenarios/toy-pause-outlives-lease.lsim" <<'EOF'
title "Toy: a GC pause outlives the lease"
purpose correctness
lock toy ttl=30s
resource stock=1 fencing=off
network latency=0ms
duration 60s
client A: acquire; read; work 10s; write; release
client B @31s: acquire retry=1s; read; write; work 5s; release
@5s pause A 27s
expect verdict UNSAFE
expect stale-write by A
EOF
step "locksim run (toy)" "$bname/locksim" run scenarios/toy-pause-outlives-lease.lsim --no-timeline
step "check --update writes the golden trace" "$bname/locksim" check --update scenarios/toy-pause-outlives-lease.lsim
step "the golden trace" test -s scenarios/golden/toy-pause-outlives-lease.jsonl
step "check matches the golden trace" "$bname/locksim" check scenarios/
: > "$work/tests/trace_hashes.txt"
step "make hashes" mk hashes
step "tests/trace_hashes.txt has the toy's line" \
  grep -q '^[0-9a-f]\{16\}  scenarios/toy-pause-outlives-lease.lsim$' tests/trace_hashes.txt
step "make determinism's comparison holds" sh -c \
  "'$bname/locksim' hash scenarios/*.lsim | cmp -s - tests/trace_hashes.txt"

# 4. A toy fault, `@T nudge NODE`, by the guide's steps for a fault: the kind
# and its word, its syntax (a node, as crash has: parse_fault.c's default
# case, and scenario_print.c's default prints it back), the engine's model
# (a trace event at the node, nothing else), its trace kind at the end of
# TRACE_KIND_MAP; then the build's -Wswitch errors must name only the files
# the guide lists, and a `case TRACE_NUDGE: break;` in each switch they name
# makes it build.
sed -i 's/^\( *\)SCN_FAULT_COUNT$/\1SCN_FAULT_NUDGE,\n\1SCN_FAULT_COUNT/' "$work/sim/lang/scenario.h"
sed -i 's/^\( *\)\[SCN_FAULT_KILL_REPLICAS\] = "kill-replicas",$/&\n\1[SCN_FAULT_NUDGE] = "nudge",/' "$work/sim/lang/scenario.c"
sed -i 's/{"promote", SCN_FAULT_PROMOTE},/{"nudge", SCN_FAULT_NUDGE}, &/' "$work/sim/lang/parse_fault.c"
sed -i 's/^\( *\)case SCN_FAULT_LINK:$/\1case SCN_FAULT_NUDGE:\n\1    emit(e, TRACE_NUDGE, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);\n\1    break;\n&/' \
  "$work/sim/engine_fault.c"
step "the fault's kind, word, syntax and model" sh -c \
  "grep -q SCN_FAULT_NUDGE sim/lang/scenario.h && grep -q '\"nudge\"' sim/lang/scenario.c &&
   grep -q '\"nudge\", SCN_FAULT_NUDGE' sim/lang/parse_fault.c && grep -q 'TRACE_NUDGE' sim/engine_fault.c"
python3 - "$work/sim/trace.h" <<'PY'
import sys
p = sys.argv[1]; lines = open(p).read().split('\n')
i = next(k for k, l in enumerate(lines) if l.startswith('#define TRACE_KIND_MAP(XX)'))
while lines[i].rstrip().endswith('\\'): i += 1
lines[i] = lines[i] + ' \\'
lines.insert(i + 1, '    XX(NUDGE, "nudge", 0, 0) /* the newcomer guide\'s toy fault */')
open(p, 'w').write('\n'.join(lines))
PY
(cd "$work" && mk -k "$bname/locksim") >"$work/.switch" 2>&1 # -k: every file's errors
# bottom up within a file, so that an inserted line moves no switch still to do
switches=$(grep -o '^[a-z/_]*\.c:[0-9]*:[0-9]*: error: enumeration value .TRACE_NUDGE. not handled' "$work/.switch" |
           cut -d: -f1,2 | sort -t: -k1,1 -k2,2nr -u)
step "-Wswitch names the switches a new kind must handle" test -n "$switches"
for loc in $switches; do
  f=${loc%%:*}
  step "the guide names $f" grep -qF "$(basename "$f")" <<<"$guide"
  # the switch's line opens its block: the case goes first in it
  sed -i "${loc#*:}s/{ *\$/{\n    case TRACE_NUDGE: break; \/* the toy fault: nothing to draw or judge *\//" "$work/$f"
done
(cd "$work" && mk "$bname/locksim") >"$work/.switch" 2>&1
step "the build with the toy fault" sh -c "! grep -q ': error:' '$work/.switch' && test -x '$work/$bname/locksim'"
cat > "$work/scenarios/toy-nudge.lsim" <<'EOF'
title "Toy: a nudge changes nothing"
lock lease ttl=30s
network latency=0ms
duration 20s
client A: acquire; work 5s; release
@2s nudge A
expect verdict SAFE
EOF
step "a scenario with the toy fault runs" "$bname/locksim" run scenarios/toy-nudge.lsim --no-timeline
step "its trace has the nudge at 2s" sh -c \
  "'$bname/locksim' run scenarios/toy-nudge.lsim --no-timeline --trace nudge.jsonl >/dev/null &&
   grep -q '\"t_ns\":2000000000,\"kind\":\"nudge\",\"node\":\"A\"' nudge.jsonl"

echo "guide: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
