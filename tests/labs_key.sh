#!/usr/bin/env bash
# Checks the teacher's key against the binary: every row of a table in
# docs/labs/key.md of the form
#   | FACT | `build/locksim ...` | EXIT | `TEXT` |
# runs the command in a scratch folder and must exit EXIT with TEXT in its
# standard output or error. Prints one line per failure and
# `labs key: N passed, M failed`. LABS_KEY names another key file (the
# docs test feeds it a stale copy, which must fail).
# Usage: tests/labs_key.sh REPO_DIR
set -u
repo=$(cd "${1:-.}" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
ln -s "$repo/build" "$work/build"
ln -s "$repo/docs" "$work/docs"   # read-only use: the committed figure
cp -r "$repo/scenarios" "$work/scenarios"
key=${LABS_KEY:-$repo/docs/labs/key.md}
passed=0; failed=0; n=0
while IFS= read -r line; do
  n=$((n + 1))
  case "$line" in "| "*" | \`build/locksim "*) ;; *) continue ;; esac
  IFS='|' read -r _ fact cmd want text _ <<<"$line"
  fact=${fact# }; fact=${fact% }
  cmd=${cmd#*\`}; cmd=${cmd%\`*}
  want=${want// /}
  text=${text#*\`}; text=${text%\`*}
  (cd "$work" && timeout 120 bash -c "$cmd" >"$work/out" 2>&1); rc=$?
  if [ "$rc" != "$want" ]; then
    failed=$((failed + 1)); echo "labs key: ${key#"$repo"/}:$n: $fact: exit $rc, the key says $want: $cmd"
    head -3 "$work/out" | sed 's/^/      /'
  elif ! grep -qF -- "$text" "$work/out"; then
    failed=$((failed + 1)); echo "labs key: ${key#"$repo"/}:$n: $fact: the output lacks '$text': $cmd"
  else
    passed=$((passed + 1))
  fi
done < "$key"
echo "labs key: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
