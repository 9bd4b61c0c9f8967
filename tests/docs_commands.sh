#!/usr/bin/env bash
# Runs every command the docs show, so README.md and docs/ cannot drift from
# the binary: each indented line `build/locksim ...` (or `$ build/locksim ...`)
# in README.md and docs/**/*.md runs in a scratch folder (FILE stands for the
# seed scenario; a trailing `# comment` is dropped) and must not end in a
# usage, input or internal error (exit 64..78) nor crash; each indented block
# that starts with `title` or `lock` is a scenario and must parse. A
# `build/locksim view ...` line (the classroom window) runs without a display
# (DISPLAY and WAYLAND_DISPLAY unset) and passes with exit 69, "no display";
# it is skipped, and counted as such, while the binary has no `view` command.
# Then the teacher's key (tests/labs_key.sh): its facts are added to the
# counts, and a key with one number changed must be caught.
# Prints one line per failure and `docs: N passed, M failed[, K skipped]`.
# Usage: tests/docs_commands.sh REPO_DIR
set -u
repo=$(cd "${1:-.}" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# Commands may write (check --update, --out): the scenarios are a copy.
for d in build examples tests docs; do ln -s "$repo/$d" "$work/$d"; done
cp -r "$repo/scenarios" "$work/scenarios"
passed=0; failed=0; skipped=0
has_view=0; "$repo/build/locksim" help view >/dev/null 2>&1 && has_view=1
# The plugin example some docs run.
(cd "$work" && cc -std=c11 -shared -fPIC -Isim -o "$work/my_lock.so" \
   "$repo/examples/algorithms/my_lock.c" -I"$repo/sim") >/dev/null 2>&1
mapfile -t docs < <(cd "$repo" && ls README.md docs/*.md docs/*/*.md 2>/dev/null)
for doc in "${docs[@]}"; do
  n=0
  while IFS= read -r line; do
    n=$((n + 1))
    while [ "${line%\\}" != "$line" ] && IFS= read -r more; do  # continuation lines
      n=$((n + 1)); line="${line%\\} ${more#    }"
    done
    case "$line" in
      "    build/locksim "*|"    \$ build/locksim "*) ;;
      *) continue ;;
    esac
    cmd=${line#    }; cmd=${cmd#\$ }
    cmd=${cmd%%  #*}; cmd=${cmd%%	#*}
    cmd=${cmd//FILE/scenarios/gc-pause-outlives-lease.lsim}
    cmd=${cmd//.\/build\/my_lock.so/.\/my_lock.so}
    view=0
    case "$cmd" in "build/locksim view "*) view=1 ;; esac
    if [ "$view" = 1 ] && [ "$has_view" = 0 ]; then skipped=$((skipped + 1)); continue; fi
    if [ "$view" = 1 ]; then
      (cd "$work" && env -u DISPLAY -u WAYLAND_DISPLAY timeout 60 bash -c "$cmd" >/dev/null 2>"$work/err"); rc=$?
      [ "$rc" = 69 ] && rc=0
    else
      (cd "$work" && timeout 60 bash -c "$cmd" >/dev/null 2>"$work/err"); rc=$?
    fi
    if [ "$rc" -ge 64 ]; then
      failed=$((failed + 1))
      echo "docs: $doc:$n: exit $rc: $cmd"; sed 's/^/      /' "$work/err" | head -3
    else
      passed=$((passed + 1))
    fi
  done < "$repo/$doc"
  # Scenario snippets: indented blocks whose first line is `title ...` or `lock ...`.
  awk -v out="$work/snip" '
    /^    / { if (!inb) { inb = 1; start = NR; first = substr($0, 5); buf = "" }
             buf = buf substr($0, 5) "\n"; next }
    { if (inb && first ~ /^(title|lock) /) { k++; f = out "." k; printf "%s", buf > f; close(f); print start > (f ".line") }
      inb = 0 }
    END { if (inb && first ~ /^(title|lock) /) { k++; f = out "." k; printf "%s", buf > f; close(f); print start > (f ".line") } }
  ' "$repo/$doc"
  for s in "$work"/snip.[0-9]*; do
    [ -e "$s" ] || continue
    case "$s" in *.line) continue ;; esac
    "$repo/build/locksim" run - --no-timeline < "$s" >/dev/null 2>"$work/err"; rc=$?
    if [ "$rc" -ge 64 ]; then
      failed=$((failed + 1)); echo "docs: $doc:$(cat "$s.line"): scenario snippet does not run (exit $rc)"
      sed 's/^/      /' "$work/err" | head -3
    else
      passed=$((passed + 1))
    fi
    rm -f "$s" "$s.line"
  done
done
# examples/*/README.md: each indented block that runs something of examples/
# (or sets its environment first) runs whole, as a script, in the scratch
# folder, and must not end in 64..78. A block that names placeholder hosts
# (you@node1.example) or needs a Slurm cluster where sinfo reaches none (an
# installed sbatch without one only fails) is skipped and counted;
# tests/slurm_cluster.sh (make test-slurm) runs the Slurm blocks on a cluster
# of its own.
ex_skipped=0
for doc in $(cd "$repo" && ls examples/*/README.md 2>/dev/null); do
  rm -f "$work"/block.[0-9]*
  awk -v out="$work/block" '
    /^    / { if (!inb) { inb = 1; start = NR; buf = "" }
             buf = buf substr($0, 5) "\n"; next }
    { if (inb) { k++; f = out "." k; printf "%s", buf > f; close(f); print start > (f ".line") }
      inb = 0 }
    END { if (inb) { k++; f = out "." k; printf "%s", buf > f; close(f); print start > (f ".line") } }
  ' "$repo/$doc"
  for b in "$work"/block.[0-9]*; do
    [ -e "$b" ] || continue
    case "$b" in *.line) continue ;; esac
    grep -q 'examples/' "$b" || { rm -f "$b" "$b.line"; continue; }
    if grep -q '@node[0-9]*\.example\|you@' "$b" ||
       { grep -q 'slurm-submit' "$b" && ! sinfo -h >/dev/null 2>&1; }; then
      ex_skipped=$((ex_skipped + 1)); rm -f "$b" "$b.line"; continue
    fi
    (cd "$work" && LOCKSIM="$repo/build/locksim" timeout 300 bash -e "$b" >/dev/null 2>"$work/err"); rc=$?
    if [ "$rc" -ge 64 ]; then
      failed=$((failed + 1)); echo "docs: $doc:$(cat "$b.line"): exit $rc: $(head -1 "$b")"
      sed 's/^/      /' "$work/err" | tail -3
    else
      passed=$((passed + 1))
    fi
    rm -f "$b" "$b.line"
  done
done
[ "$ex_skipped" -gt 0 ] && echo "docs: $ex_skipped example blocks skipped (placeholder hosts, or no Slurm cluster here: make test-slurm runs them)"
# docs/metrics.md is generated from the metric table.
if cmp -s <("$repo/build/locksim" help metrics) "$repo/docs/metrics.md"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1)); echo "docs: docs/metrics.md differs from \`locksim help metrics\` (regenerate it)"
fi
# The teacher's key: every fact checked, and a stale fact caught.
if [ -f "$repo/docs/labs/key.md" ]; then
  "$repo/tests/labs_key.sh" "$repo" >"$work/key" 2>&1
  cat "$work/key" | grep -v '^labs key: [0-9]* passed'
  p=$(sed -n 's/^labs key: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$work/key")
  f=$(sed -n 's/^labs key: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$work/key")
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-1}))
  # One number changed (2.004s -> 2.005s): the check must fail on it.
  sed 's/2\.004s in total/2.005s in total/' "$repo/docs/labs/key.md" > "$work/stale-key.md"
  if LABS_KEY="$work/stale-key.md" "$repo/tests/labs_key.sh" "$repo" >"$work/key" 2>&1 ||
     ! grep -q "lacks '.*2\.005s in total" "$work/key"; then
    failed=$((failed + 1)); echo "docs: tests/labs_key.sh did not catch a changed number in the key"
  else
    passed=$((passed + 1))
  fi
fi
echo "docs: $passed passed, $failed failed$([ "$skipped" -gt 0 ] && echo ", $skipped skipped (\`view\` lines: no view command in this build)")"
[ "$failed" -eq 0 ]
