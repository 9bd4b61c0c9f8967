#!/usr/bin/env bash
# Follows README.md's "Where a newcomer adds: an algorithm" for a toy
# algorithm in a scratch copy of the tree (never the tree itself), so the
# guide cannot go stale: every file and name the guide mentions exists; then
# the toy's file, its two registry lines, the build (and
# `make algo-headers`), a scenario with it, its golden trace by
# `check --update`, its trace hash by `make hashes`, and `check` passing.
# The scratch copy starts from BUILD_DIR's objects, so only what the toy
# touches is compiled (a few seconds). Prints one line per failure and
# `guide: N passed, M failed`.
# Usage: tests/newcomer_guide.sh REPO_DIR BUILD_DIR
#   (CC, OPT and LDLIBS from the environment, as the build used them)
set -u
repo=$(cd "${1:-.}" && pwd)
bdir=${2:-build}; bname=$(basename "$bdir")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
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

echo "guide: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
