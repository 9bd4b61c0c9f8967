#!/usr/bin/env bash
# Runs every command the docs show, so README.md and docs/ cannot drift from
# the binary: each indented line `build/locksim ...` (or `$ build/locksim ...`)
# in README.md and docs/**/*.md runs in a scratch folder (FILE stands for the
# seed scenario; a trailing `# comment` is dropped) and must not end in a
# usage, input or internal error (exit 64..78) nor crash; each indented block
# that starts with `title` or `lock` is a scenario and must parse.
# Prints one line per failure and `docs: N passed, M failed`.
# Usage: tests/docs_commands.sh REPO_DIR
set -u
repo=$(cd "${1:-.}" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# Commands may write (check --update, --out): the scenarios are a copy.
for d in build examples tests docs; do ln -s "$repo/$d" "$work/$d"; done
cp -r "$repo/scenarios" "$work/scenarios"
passed=0; failed=0
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
    (cd "$work" && timeout 60 bash -c "$cmd" >/dev/null 2>"$work/err"); rc=$?
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
# docs/metrics.md is generated from the metric table.
if cmp -s <("$repo/build/locksim" help metrics) "$repo/docs/metrics.md"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1)); echo "docs: docs/metrics.md differs from \`locksim help metrics\` (regenerate it)"
fi
echo "docs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
