#!/usr/bin/env bash
# `make install` into a scratch DESTDIR, used as a person would use the
# installed tree: the installed binary draws a PNG (its modules found in
# PREFIX/lib/locksim, relative to itself), a plugin builds against the
# installed lock.h through pkg-config and runs, the man pages render and say
# what `locksim help` says, bash completes an option, and `make uninstall`
# leaves nothing behind. Closes with "install: N passed, M failed".
# Usage: tests/install.sh [BUILD_DIR]   (run from the repository root)
set -u
build=${1:-build}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
root=$tmp/dest; prefix=/opt/locksim-test; inst=$root$prefix
passed=0; failed=0
check() { if eval "$2"; then passed=$((passed + 1)); echo "ok   $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi; }

make --no-print-directory BUILD="$build" install DESTDIR="$root" PREFIX="$prefix" >"$tmp/log" 2>&1
check "make install succeeds" '[ $? -eq 0 ] || { cat "$tmp/log"; false; }'
check "the binary, its modules, headers, pc file, man pages, completions" \
  '[ -x "$inst/bin/locksim" ] && [ -f "$inst/lib/locksim/locksim-png.so" ] && [ -f "$inst/include/locksim/lock.h" ] &&
   [ -f "$inst/lib/pkgconfig/locksim.pc" ] && [ -f "$inst/share/man/man1/locksim-render.1" ] &&
   [ -f "$inst/share/bash-completion/completions/locksim" ] && [ -f "$inst/share/zsh/site-functions/_locksim" ]'
# The installed binary, run from elsewhere, finds its picture module relative to itself.
(cd "$tmp" && "$inst/bin/locksim" render "$inst/share/locksim/scenarios/gc-pause-outlives-lease.lsim" -o pic.png) \
  >"$tmp/r.out" 2>&1
check "installed render draws a PNG" '[ "$(head -c 8 "$tmp/pic.png" | od -An -c | tr -d " ")" = "211PNG\r\n032\n" ]'
# A plugin author: pkg-config's flags and nothing else of the source tree (the
# tree is staged under DESTDIR, so its prefix is redefined as a packager would).
check "locksim.pc names PREFIX" 'grep -qx "prefix=$prefix" "$inst/lib/pkgconfig/locksim.pc"'
cflags=$(echo $(PKG_CONFIG_PATH="$inst/lib/pkgconfig" pkg-config --define-variable=prefix="$inst" --cflags locksim 2>/dev/null))
check "pkg-config gives the installed include folder" '[ "$cflags" = "-I$inst/include/locksim" ]'
cc -std=c11 -shared -fPIC $cflags -o "$tmp/my_lock.so" "$inst/share/doc/locksim/examples/my_lock.c" 2>"$tmp/cc.err"
check "the example plugin builds against the installed lock.h" '[ -f "$tmp/my_lock.so" ] || { cat "$tmp/cc.err"; false; }'
"$inst/bin/locksim" run "$inst/share/locksim/scenarios/fencing-rejects-stale-write.lsim" --algo "$tmp/my_lock.so" \
  --no-timeline >"$tmp/plugin.out" 2>&1
check "the installed binary runs it" 'grep -q "^Verdict: SAFE" "$tmp/plugin.out"'
# Man pages are the help text.
if command -v man >/dev/null; then
  MANWIDTH=100 man -l "$inst/share/man/man1/locksim-render.1" 2>/dev/null >"$tmp/man.txt"
  check "man locksim-render shows help render's usage" 'grep -q "Usage: locksim render FILE -o|--out OUT.png" "$tmp/man.txt"'
fi
check "one man page per command" \
  '[ "$(ls "$inst/share/man/man1" | wc -l)" -eq "$(( $("$inst/bin/locksim" help | grep -c "^  locksim [a-z]" ) ))" ]'
comp=$(bash -c 'source "$1"; COMP_WORDS=(locksim render --wi); COMP_CWORD=2; _locksim; echo "${COMPREPLY[*]}"' _ \
  "$inst/share/bash-completion/completions/locksim")
check "bash completes render --wi to --width" '[ "$comp" = "--width" ]'
make --no-print-directory BUILD="$build" uninstall DESTDIR="$root" PREFIX="$prefix" >"$tmp/log" 2>&1
check "make uninstall leaves no file" '[ -z "$(find "$root" -type f)" ] || { find "$root" -type f | head; false; }'
echo "install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
