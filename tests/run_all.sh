#!/usr/bin/env bash
# Runs every cmocka test binary given, then the scenario expectations, the
# docs' commands (tests/docs_commands.sh) and README's newcomer guide
# (tests/newcomer_guide.sh), make install (tests/install.sh), and closes with one line of totals:
# "tests: N passed, M failed".
# Usage: tests/run_all.sh LOCKSIM_BIN SCENARIO_GLOB_FILES... -- TEST_BIN...
set -u
bin=$1; shift
scen=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do scen+=("$1"); shift; done
shift || true
passed=0; failed=0; log=$(mktemp); logs=$(mktemp -d); trap 'rm -rf "$log" "$logs"' EXIT
# The test binaries run TEST_JOBS at a time (default: the number of CPUs),
# each into a log of its own, printed in the order given; the ones that play
# against real services in real time (test_real) run afterwards, alone, so
# that the others' load cannot make them late.
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
run_one() { # TEST INDEX: runs TEST, its output and status into $logs/INDEX
  LOCKSIM_BIN=$bin "$1" >"$logs/$2" 2>&1; echo $? >"$logs/$2.rc"
}
i=0; running=0; alone=()
for t in "$@"; do
  case "$t" in */test_real) alone+=("$t"); continue ;; esac
  i=$((i + 1)); echo "$t" >"$logs/$i.name"
  run_one "$t" "$i" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait
for t in "${alone[@]}"; do i=$((i + 1)); echo "$t" >"$logs/$i.name"; run_one "$t" "$i"; done
for k in $(seq 1 "$i"); do
  t=$(cat "$logs/$k.name"); rc=$(cat "$logs/$k.rc")
  echo "== $t"
  cat "$logs/$k"
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$logs/$k" | tail -1)
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$logs/$k" | tail -1)
  p=${p:-0}; f=${f:-0}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "!! $t exited with status $rc"; fi
  passed=$((passed + p)); failed=$((failed + f))
done
# tally WORD RC: adds the "WORD: N passed, M failed" line of $log to the
# totals (a failing status with no failure counted counts as one).
tally() {
  local p f
  cat "$log"
  p=$(sed -n "s/^$1: \\([0-9]*\\) passed, \\([0-9]*\\) failed.*/\\1/p" "$log")
  f=$(sed -n "s/^$1: \\([0-9]*\\) passed, \\([0-9]*\\) failed.*/\\2/p" "$log")
  p=${p:-0}; f=${f:-0}
  if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  passed=$((passed + p)); failed=$((failed + f))
}
if [ ${#scen[@]} -gt 0 ]; then
  echo "== scenario expectations (locksim check)"
  "$bin" check --quiet "${scen[@]}" >"$log" 2>&1; tally scenarios $?
fi
if [ -x tests/docs_commands.sh ]; then
  echo "== commands and scenario snippets shown in README.md and docs/"
  tests/docs_commands.sh . >"$log" 2>&1; tally docs $?
fi
if [ -x tests/newcomer_guide.sh ]; then
  echo "== README.md's newcomer guide, followed for a toy algorithm in a scratch copy"
  tests/newcomer_guide.sh . "$(dirname "$bin")" >"$log" 2>&1; tally guide $?
fi
if [ -x tests/install.sh ]; then
  echo "== make install into a scratch folder, used from there; make uninstall"
  tests/install.sh "$(dirname "$bin")" >"$log" 2>&1; tally install $?
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
