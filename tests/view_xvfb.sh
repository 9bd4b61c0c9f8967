#!/usr/bin/env bash
# The real window (`locksim view`) under an X server, driven as a person
# would with xdotool key presses; the window's --script-log state lines and
# its own screenshots (the s key) are what is checked. Installs nothing: it
# needs xdotool, ImageMagick's convert, and an X server on $DISPLAY (.ci/run
# starts Xvfb :99). With no DISPLAY it starts its own Xvfb when there is one.
# Also runs one short session under valgrind (suppressions: tests/view.supp)
# when valgrind is there (VIEW_VALGRIND=0 skips it).
# Usage: tests/view_xvfb.sh [LOCKSIM_BIN]. Closes with "tests: N passed, M failed".
set -u
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/locksim}")
root=$(pwd)
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

missing=""
command -v xdotool >/dev/null 2>&1 || missing="$missing xdotool"
# ImageMagick's own convert (a stand-in of the same name may come first in PATH)
convert=$(command -v /usr/bin/convert || command -v convert)
[ -n "$convert" ] && "$convert" -version 2>/dev/null | grep -q ImageMagick || missing="$missing imagemagick"
command -v import >/dev/null 2>&1 || missing="$missing import"
own_x=""
if [ -z "${DISPLAY:-}" ]; then
  if command -v Xvfb >/dev/null 2>&1; then
    Xvfb :98 -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 & own_x=$!
    export DISPLAY=:98
    sleep 1
  else
    missing="$missing Xvfb"
  fi
fi
if [ -n "$missing" ]; then
  echo "view: missing$missing (apt-get install -y xvfb xdotool imagemagick); the window is not tested"
  if [ "${CI:-}" = true ]; then echo "tests: 0 passed, 1 failed"; exit 1; fi
  echo "tests: 0 passed, 0 failed"; exit 0
fi

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  [ -n "$own_x" ] && kill "$own_x" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
cp scenarios/gc-pause-outlives-lease.lsim "$tmp/gc.lsim"

# The text scale every window below opens with, unless a test says otherwise
# (the pixel positions checked are those of the 1.0 scale; () = from the screen).
scale_args=(--scale 1)
# start NAME ARGS...: the window in the background, its log in $tmp/NAME.log;
# waits for "view: ready" and sets $win (the window) and $vpid.
start() {
  local name=$1; shift
  : > "$tmp/$name.log"
  (cd "$tmp" && exec "$@" --script-log "${scale_args[@]}" > "$tmp/$name.log" 2> "$tmp/$name.err") & vpid=$!
  pids+=("$vpid")
  log="$tmp/$name.log"
  for _ in $(seq 1 ${START_WAIT:-200}); do grep -q "^view: ready" "$log" && break; sleep 0.1; done
  win=$(xdotool search --sync --onlyvisible --pid "$vpid" --name "locksim view" 2>/dev/null | head -1)
  [ -n "$win" ]
}
# key K...: key presses to the window, then a moment for it to draw.
key() { for k in "$@"; do xdotool key --window "$win" "$k"; sleep 0.08; done; sleep 0.3; }
# last: the window's latest state line.
last() { grep '^view: cur=' "$log" | tail -1; }
# field NAME: a field of the latest state line.
field() { last | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# wait_for REGEX [SECONDS]: until the latest state line matches.
wait_for() {
  local n=$(( ${2:-5} * 10 ))
  for _ in $(seq 1 "$n"); do last | grep -Eq "$1" && return 0; sleep 0.1; done
  return 1
}
# quit: q, and the process must end with status 0.
# A window that has not ended after 5 s is killed and counts as a failure,
# so a lost key press can never hang the suite.
quit() {
  # the window may be gone before q's release arrives: xdotool's BadWindow then is expected
  xdotool key --window "$win" q 2>/dev/null
  local st=0
  for _ in $(seq 1 50); do kill -0 "$vpid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$vpid" 2>/dev/null; then
    echo "view: the window did not quit on q; killed" >&2
    kill -9 "$vpid" 2>/dev/null; wait "$vpid" 2>/dev/null
    return 1
  fi
  wait "$vpid"; st=$?
  return $st
}
# band_cols PNG Y0 H: the x of every pixel of the double-entry band colour
# (palette BAND, #F6D2BC) in rows Y0 .. Y0+H, one per line, sorted, unique.
band_cols() {
  "$convert" "$1" -crop "2000x$3+0+$2" +repage txt:- 2>/dev/null | grep -i '#F6D2BC' |
    sed 's/^\([0-9]*\),.*/\1/' | sort -n | uniq
}

echo "== view: no display"
out=$(env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER "$bin" view scenarios/gc-pause-outlives-lease.lsim 2>&1); st=$?
check "no display: exit 69" '[ "$st" = 69 ]'
check "no display: suggests render" 'echo "$out" | grep -q "locksim render .* -o out.png"'

echo "== view: stepping moves the cursor"
if start step "$bin" view "$tmp/gc.lsim"; then
  check "opens at the start, whole run" 'last | grep -q "cur=-1 .*t0=0 t1=60000000000"'
  shot0="$tmp/before.png"; import -window "$win" "$shot0" 2>/dev/null
  key Right Right Right Right Right
  check "5 x Right: A pauses at 5s" 'wait_for "cur=4 kind=pause cursor=5000000000"'
  key Right
  # the store keeps a key through its deadline's millisecond (Redis keyIsExpired: now > when)
  check "Right: the lease expires at 30.001s" 'wait_for "kind=srv-expire cursor=30001000000"'
  key Left
  check "Left: back to the pause exactly" 'wait_for "cur=4 kind=pause cursor=5000000000"'
  import -window "$win" "$tmp/after.png" 2>/dev/null
  check "the picture changed with the cursor" '! cmp -s "$shot0" "$tmp/after.png"'
  key End
  check "End: the last event" 'wait_for "kind=.* cursor=60000000000|cursor=3[0-9]{10}"'
  key Home
  check "Home: the start" 'wait_for "cur=-1 "'
  key plus
  check "+: zoom in 2x around the cursor" 'wait_for "t0=0 t1=30000000000"'
  key minus 0
  check "- and 0: the whole run" 'wait_for "t0=0 t1=60000000000"'
  key bracketright bracketright
  check "] ]: 4x speed" 'wait_for "speed=2"'
  key space
  check "space: plays" 'wait_for "playing=1"'
  sleep 1
  check "playing moves the cursor" '[ "$(field cursor)" -gt 0 ]'
  key space
  check "space: pauses" 'wait_for "playing=0"'
  key question
  check "?: help shown" 'wait_for "help=1"'
  key Escape
  check "Esc closes the help (and not the window)" 'wait_for "help=0" && kill -0 $vpid'
  key F1
  check "F1: help shown" 'wait_for "help=1"'
  key space
  xdotool windowsize "$win" 1000 700; sleep 0.5
  check "resized: the window follows" 'wait_for "size=1000x700"'
  key F11
  check "F11: full screen" 'wait_for "fullscreen=1"'
  key F11
  check "F11 again: windowed" 'wait_for "fullscreen=0"'
  xdotool windowsize "$win" 1280 800; sleep 0.5
  # hover: the mouse over A's acquire mark (+) at 0s on lane A, the whole
  # run shown (a): at Home, revealed as it plays, nothing is drawn yet
  key Home a
  check "a: the whole run at once" 'wait_for "show_all=1"'
  xdotool mousemove --window "$win" 159 184; sleep 0.4
  xdotool mousemove --window "$win" 160 185; sleep 0.4
  check "hover over A's acquire shows its details" '[ "$(field hover)" != -1 ]'
  xdotool mousemove --window "$win" 600 760; sleep 0.3
  key a
  check "a again: revealed as it plays" 'wait_for "show_all=0"'
  # scrub: press on the time axis at 30s and drag to 45s
  xdotool mousemove --window "$win" 710 158 mousedown 1; sleep 0.2
  xdotool mousemove --window "$win" 894 158; sleep 0.2; xdotool mouseup 1; sleep 0.3
  check "dragging on the time axis scrubs the cursor to about 40s" \
    'c=$(field cursor); [ "$c" -gt 38000000000 ] && [ "$c" -lt 42000000000 ]'
  # pan: zoom in, then drag in the lanes to the left
  key plus
  t0=$(field t0)
  xdotool mousemove --window "$win" 900 300 mousedown 1; sleep 0.2
  xdotool mousemove --window "$win" 500 300; sleep 0.2; xdotool mouseup 1; sleep 0.3
  check "dragging in the lanes pans later in time" '[ "$(field t0)" -gt "$t0" ]'
  check "q: quits with status 0" 'quit'
else
  bad "the window opened"
fi

echo "== view: opens at a size that fits a 1280x720 projector"
if command -v Xvfb >/dev/null 2>&1; then
  Xvfb :96 -screen 0 1280x720x24 -nolisten tcp >/dev/null 2>&1 & x96=$!
  sleep 1
  # every X call of this block (start, key, quit) goes to :96
  outer_display=$DISPLAY; export DISPLAY=:96
  if start small "$bin" view "$tmp/gc.lsim" --algos lease,fenced-lease; then
    size=$(field size); w=${size%x*}; h=${size#*x}
    check "the window fits the screen ($size)" '[ "$w" -le 1280 ] && [ "$h" -le 720 ]'
    check "q: quits on the small screen too" 'quit >/dev/null'
  else
    bad "the window opened (1280x720)"
  fi
  export DISPLAY=$outer_display
  kill "$x96" 2>/dev/null
fi

echo "== view: reveals the run as it plays (nothing of the future at t=0)"
mkdir -p "$tmp/scn" "$tmp/shots"
cp scenarios/gc-pause-outlives-lease.lsim "$tmp/scn/gc.lsim"
if start reveal "$bin" view "$tmp/scn/gc.lsim"; then
  check "at the start: no event drawn, the verdict not decided" 'wait_for "cur=-1 .*revealed=0 decided=0"'
  key s
  for _ in $(seq 1 50); do grep -q "shot written" "$log" && break; sleep 0.1; done
  check "s: the screenshot goes to the current folder, not among the scenarios" \
    'grep -q "shot written ./locksim-shot-1.png" "$log" && [ -f "$tmp/locksim-shot-1.png" ] && ! ls "$tmp/scn" | grep -q shot'
  n=$(band_cols "$tmp/locksim-shot-1.png" 200 150 | grep -c .)
  check "at t=0 no double-entry band is drawn ($n columns)" '[ "$n" -eq 0 ]'
  # the UNSAFE badge's vermillion (#D55E00) anywhere above the lanes
  red=$("$convert" "$tmp/locksim-shot-1.png" -crop "1280x140+0+0" +repage txt:- 2>/dev/null | grep -ic '#D55E00')
  check "at t=0 no UNSAFE badge ($red px)" '[ "$red" -eq 0 ]'
  key n
  check "n: at the double entry the verdict is decided" 'wait_for "kind=double-entry-begin .*decided=1"'
  key Home
  check "Home: hidden again, exactly" 'wait_for "cur=-1 .*revealed=0 decided=0"'
  quit >/dev/null
else
  bad "the window opened (reveal)"
fi
rm -f "$tmp/locksim-shot-1.png"

echo "== view: break it by clicking"
mkdir -p "$tmp/brk" "$tmp/brk/shots"
cp scenarios/gc-pause-outlives-lease.lsim "$tmp/brk/gc.lsim"
if start brk "$bin" view "$tmp/brk/gc.lsim" --shots "$tmp/brk/shots"; then
  xdotool mousemove --window "$win" 400 184 click 3; sleep 0.8
  check "right-click on A's lane: a pause of half the run added there" \
    'grep -Eq "^view: added @[0-9.]+s pause A 30s \(saved as $tmp/brk/shots/locksim-edit-1.lsim; u undoes\)" "$log"'
  check "saved as a new file in --shots, the line among the timed lines, the scenario untouched" \
    'grep -Eq "^@[0-9.]+s pause A 30s   # added in the window by a click$" "$tmp/brk/shots/locksim-edit-1.lsim" &&
     cmp -s "$tmp/brk/gc.lsim" scenarios/gc-pause-outlives-lease.lsim'
  check "and the run played again (reloads=1, no error)" 'wait_for "reloads=1 error=0" 3'
  key u
  check "u: back to the scenario as it was" 'grep -q "^view: undone: back to $tmp/brk/gc.lsim" "$log" && wait_for "reloads=2 error=0" 3'
  xdotool mousemove --window "$win" 400 5 click 3; sleep 0.5
  check "right-click off the lanes: nothing added, a hint" 'grep -q "^view: right-click a client" "$log" && [ ! -e "$tmp/brk/shots/locksim-edit-2.lsim" ]'
  # more faults by the modifiers: shift crashes A, ctrl later restarts it,
  # alt steps A's clock; each a line of the edited file, played again
  xdotool mousemove --window "$win" 400 184 keydown shift click 3 keyup shift; sleep 0.8
  check "shift+right-click on A's lane: a crash added" 'grep -Eq "^view: added @[0-9.]+s crash A \(saved as $tmp/brk/shots/locksim-edit-2.lsim" "$log"'
  xdotool mousemove --window "$win" 600 184 keydown ctrl click 3 keyup ctrl; sleep 0.8
  check "ctrl+right-click later on A's lane: a restart added after the crash, the run played again" \
    'grep -Eq "^view: added @[0-9.]+s restart A \(saved as $tmp/brk/shots/locksim-edit-3.lsim" "$log" &&
     grep -Eq "^@[0-9.]+s restart A   # added in the window by a click$" "$tmp/brk/shots/locksim-edit-3.lsim" &&
     grep -Eq "^@[0-9.]+s crash A   # added" "$tmp/brk/shots/locksim-edit-3.lsim" && wait_for "reloads=4 error=0" 3'
  xdotool mousemove --window "$win" 500 184 keydown alt click 3 keyup alt; sleep 0.8
  check "alt+right-click on A's lane: its clock stepped forward by half the run" \
    'grep -Eq "^view: added @[0-9.]+s clock A step \+30s \(saved as $tmp/brk/shots/locksim-edit-4.lsim" "$log" && wait_for "reloads=5 error=0" 3'
  # a middle-button drag from A's lane to B's cuts A off from the rest; a middle click heals
  xdotool mousemove --window "$win" 300 184 mousedown 2 mousemove --window "$win" 300 210 mouseup 2; sleep 0.8
  check "middle-drag from A's lane to B's: A cut off, B, S1 and R together" \
    'grep -Eq "^view: added @[0-9.]+s partition A \| B S1 R \(saved as $tmp/brk/shots/locksim-edit-5.lsim" "$log" && wait_for "reloads=6 error=0" 3'
  xdotool mousemove --window "$win" 900 210 click 2; sleep 0.8
  check "middle click on B's lane: every link healed" \
    'grep -Eq "^view: added @[0-9.]+s heal \(saved as $tmp/brk/shots/locksim-edit-6.lsim" "$log" && wait_for "reloads=7 error=0" 3'
  # a right drag along A's lane: a pause as long as the stretch dragged over, from where it began
  xdotool mousemove --window "$win" 300 184 mousedown 3 mousemove --window "$win" 360 184 mouseup 3; sleep 0.8
  drag=$(grep -E "^view: added @[0-9.]+s pause A " "$log" | tail -1 | sed -E 's/^view: added (@[0-9.]+s) pause A ([0-9.]+m?s) .*/\1 \2/')
  echo "     right drag from x=300 to x=360 on A's lane: ${drag:-nothing}"
  check "right-drag along A's lane: a pause of the stretch dragged, not half the run ($drag)" \
    'grep -Eq "^view: added @[0-9.]+s pause A [0-9.]+m?s \(saved as $tmp/brk/shots/locksim-edit-7.lsim" "$log" &&
     [ -n "$drag" ] && [ "${drag#* }" != 30s ] && wait_for "reloads=8 error=0" 3'
  "$bin" run "$tmp/brk/shots/locksim-edit-6.lsim" > "$tmp/brk/run6.txt" 2>&1; rc=$?
  check "the file with the cut and the heal runs (exit $rc)" '[ "$rc" -le 1 ] && grep -Eq "partition A \| B S1 R( |$)" "$tmp/brk/shots/locksim-edit-6.lsim"'
  "$bin" run "$tmp/brk/shots/locksim-edit-4.lsim" > "$tmp/brk/run4.txt" 2>&1; rc=$?
  check "the edited file runs with locksim run (exit $rc)" '[ "$rc" -le 1 ] && grep -q "restart A" "$tmp/brk/shots/locksim-edit-4.lsim"'
  quit >/dev/null
else
  bad "the window opened (break it by clicking)"
fi

echo "== view: screenshot shows the double entry where it is"
echo keep > "$tmp/locksim-shot-1.png"
if start shot "$bin" view "$tmp/gc.lsim" --show-all --shots "$tmp"; then
  key s
  check "s: a screenshot in --shots DIR, not over an existing file" \
    'grep -q "shot written $tmp/locksim-shot-2.png" "$log" && [ "$(cat $tmp/locksim-shot-1.png)" = keep ]'
  cols=$(band_cols "$tmp/locksim-shot-2.png" 200 150)
  lo=$(echo "$cols" | head -1); hi=$(echo "$cols" | tail -1); n=$(echo "$cols" | grep -c .)
  echo "     band columns (whole run): ${lo:-none}..${hi:-none} ($n)"
  check "the whole run: the band at 31s..32s, columns 725..750" \
    '[ -n "$lo" ] && [ "$lo" -ge 725 ] && [ "$hi" -le 750 ] && [ "$n" -ge 15 ]'
  key n
  check "n: the double entry, zoomed" 'wait_for "kind=double-entry-begin cursor=31000000000 t0=27500000000 t1=35500000000"'
  key s
  check "s again: locksim-shot-3.png" 'grep -q "shot written $tmp/locksim-shot-3.png" "$log"'
  cols=$(band_cols "$tmp/locksim-shot-3.png" 200 150)
  lo=$(echo "$cols" | head -1); hi=$(echo "$cols" | tail -1); n=$(echo "$cols" | grep -c .)
  echo "     band columns (zoomed): ${lo:-none}..${hi:-none} ($n)"
  check "zoomed: the band is 1/8 of the plot, columns 635..785" \
    '[ -n "$lo" ] && [ "$lo" -ge 635 ] && [ "$hi" -le 785 ] && [ "$n" -ge 120 ]'
  quit >/dev/null
else
  bad "the window opened (screenshot)"
fi

echo "== view: a server's clock step drawn as a jump in its clock lane"
cp scenarios/server-clock-jump-expires-early.lsim "$tmp/clk.lsim"
if start clk "$bin" view "$tmp/clk.lsim" --show-all; then
  key s
  for _ in $(seq 1 50); do grep -q "shot written" "$log" && break; sleep 0.1; done
  check "s: a screenshot of the clock scenario" 'grep -q "shot written" "$log"'
  shot=$(sed -n 's/.*shot written \(.*\.png\).*/\1/p' "$log" | tail -1)
  case $shot in /*) ;; *) shot="$tmp/$shot" ;; esac # written in the window's folder, $tmp
  # the clock's colour (palette: reddish purple #CC79A7) per column, left of
  # the labels: the first column with 10 or more is the step's vertical line
  jump=$("$convert" "$shot" -crop "1100x300+150+150" +repage txt:- 2>/dev/null | grep -i '#CC79A7' |
    sed 's/^\([0-9]*\),.*/\1/' | sort -n | uniq -c | awk '$1 >= 10 {print $2 + 150; exit}')
  echo "     clock jump at column ${jump:-none}"
  check "the +25s step at 5s of a 60s window: column 240..262" \
    '[ -n "$jump" ] && [ "$jump" -ge 240 ] && [ "$jump" -le 262 ]'
  quit >/dev/null
else
  bad "the window opened (clock lane)"
fi

echo "== view: the quiz stops before the decisive events"
if start quiz "$bin" view "$tmp/gc.lsim" --quiz; then
  key bracketright bracketright bracketright space
  check "plays, then stops before S1 grants B the lock after A's lease expired" \
    'wait_for "playing=0 .*question_kind=srv-grant" 8'
  check "the cursor stands before the grant (31s)" '[ "$(field cursor)" -le 31000000000 ] && [ "$(field cursor)" -ge 30000000000 ]'
  import -window "$win" "$tmp/quiz.png" 2>/dev/null
  key Right
  check "Right does not skip the question" 'wait_for "question_kind=srv-grant"'
  key r
  check "r reveals: the grant is the current event" 'wait_for "kind=srv-grant .*question=-1"'
  key space
  check "plays on, stops before A's late write reaches R" 'wait_for "playing=0 .*question_kind=write" 8'
  key Return
  check "Enter reveals the write" 'wait_for "kind=write .*question=-1"'
  quit >/dev/null
else
  bad "the window opened (quiz)"
fi

echo "== view: compare two algorithms"
if start cmp "$bin" view "$tmp/gc.lsim" --algos lease,fenced-lease; then
  check "two panels" 'wait_for "panels=2"'
  key n
  check "n: the double entry (both panels share the cursor)" 'wait_for "kind=double-entry-begin cursor=31000000000"'
  import -window "$win" "$tmp/compare.png" 2>/dev/null
  quit >/dev/null
else
  bad "the window opened (compare)"
fi

echo "== view: compare two files"
cp scenarios/failover-async-replication-loses-lock.lsim "$tmp/fo.lsim"
cp scenarios/failover-with-wait.lsim "$tmp/fw.lsim"
if start two "$bin" view "$tmp/fo.lsim" "$tmp/fw.lsim" --show-all; then
  check "two panels, one per file" 'wait_for "panels=2"'
  key n
  check "n: the first panel's double entry (one cursor for both)" 'wait_for "kind=double-entry-begin cursor=4002000000"'
  xdotool mousemove --window "$win" 400 180 click 3; sleep 0.5
  check "a right click adds nothing when two files are shown" '[ -z "$(ls "$tmp" | grep locksim-edit)" ] && ! grep -q "^view: added" "$log"'
  # the second file is watched too: an edit of it plays both again
  sleep 0.3; echo "# edited" >> "$tmp/fw.lsim"
  check "an edit of the second file on disk is picked up" 'wait_for "reloads=1 error=0" 3'
  quit >/dev/null
else
  bad "the window opened (two files)"
fi
out=$("$bin" view "$tmp/fo.lsim" "$tmp/fw.lsim" --algos lease,fenced-lease,redlock,setnx,lease-renew 2>&1); st=$?
check "more panels than fit (2 files x 5 algorithms): exit 64 with why" '[ "$st" = 64 ] && echo "$out" | grep -q "at most 8 panels"'

echo "== view: a recorded real run under the simulated one"
# tests/recorded/: gc-pause-outlives-lease recorded against a real
# redis-server (locksim real --trace); its lease expired at 30.00349188s
# (drawn to the microsecond), the simulated one at 30.001s: one time axis,
# one cursor for both
cp scenarios/gc-pause-outlives-lease.lsim "$tmp/rec.lsim"
if start rec "$bin" view "$tmp/rec.lsim" --trace "$root/tests/recorded/gc-pause-outlives-lease-redis.jsonl"; then
  check "two panels: simulated, then recorded" 'wait_for "panels=2"'
  key Right Right Right Right Right Right Right Right Right Right Right
  check "Right x11: the simulated lease expires at 30.001s" 'wait_for "kind=srv-expire cursor=30001000000"'
  key Right
  check "Right: then the real one, in the recorded panel, at 30.003492s" 'wait_for "kind=srv-expire cursor=30003492000"'
  import -window "$win" "$tmp/rec.png" 2>/dev/null
  sleep 0.3; echo "# edited" >> "$tmp/rec.lsim"
  check "the scenario played again on an edit, the recorded panel kept" 'wait_for "panels=2 reloads=1 error=0" 3'
  quit >/dev/null
else
  bad "the window opened (recorded trace)"
fi
"$bin" run scenarios/redlock-restart-without-persistence.lsim --trace "$tmp/redlock.jsonl" >/dev/null 2>&1
out=$("$bin" view "$tmp/rec.lsim" --trace "$tmp/redlock.jsonl" 2>&1); st=$?
check "a trace of other nodes: exit 65 naming the difference" \
  '[ "$st" = 65 ] && echo "$out" | grep -q "redlock.jsonl: not a run of .*rec.lsim: its node 4 is S2 (server), the scenario.s R (resource)"'

echo "== view: text scale and knobs on a 1920x1080 projector"
# text_h PNG: the height in pixels of the status line's text (the last run
# of rows with light pixels in the bottom 160 rows' first 700 columns)
text_h() {
  "$convert" "$1" -gravity south -crop 700x160+0+0 +repage -colorspace gray -threshold 50% txt:- 2>/dev/null |
    grep -iE 'white|#FFFFFF|gray\(255' | sed 's/^[0-9]*,\([0-9]*\):.*/\1/' | sort -n | uniq |
    awk 'NR > 1 && $1 != prev + 1 {n = 0} {n++; prev = $1} END {print n + 0}'
}
if command -v Xvfb >/dev/null 2>&1; then
  Xvfb :95 -screen 0 1920x1080x24 -nolisten tcp >/dev/null 2>&1 & x95=$!
  sleep 1
  outer_display=$DISPLAY; export DISPLAY=:95
  mkdir -p "$tmp/knob" "$tmp/knob/shots"
  cp scenarios/gc-pause-outlives-lease.lsim "$tmp/knob/gc.lsim"
  scale_args=()
  if start big "$bin" view "$tmp/knob/gc.lsim" --shots "$tmp/knob/shots"; then
    check "opens at scale 1.5 on 1080 lines, as large as the screen allows" \
      'wait_for "size=1920x1048 .*scale=150 " 3'
    quit >/dev/null
  else
    bad "the window opened (1920x1080, scale from the screen)"
  fi
  scale_args=(--scale 1)
  if start scale "$bin" view "$tmp/knob/gc.lsim" --shots "$tmp/knob/shots"; then
    key s
    for _ in $(seq 1 50); do grep -q "shot written" "$log" && break; sleep 0.1; done
    xdotool key --window "$win" ctrl+equal; sleep 0.3; xdotool key --window "$win" ctrl+equal; sleep 0.3
    check "Ctrl+= twice: scale 1.5" 'wait_for "scale=150 " 3'
    key s
    for _ in $(seq 1 50); do [ "$(grep -c "shot written" "$log")" -ge 2 ] && break; sleep 0.1; done
    h1=$(text_h "$tmp/knob/shots/locksim-shot-1.png"); h2=$(text_h "$tmp/knob/shots/locksim-shot-2.png")
    echo "     status text: $h1 px at 1.0, $h2 px at 1.5"
    check "Ctrl+=: the status text is taller ($h1 -> $h2 px)" '[ "$h1" -ge 10 ] && [ "$h2" -ge $((h1 * 13 / 10)) ]'
    xdotool key --window "$win" ctrl+minus; sleep 0.3
    check "Ctrl+-: a step smaller" 'wait_for "scale=125 " 3'
    xdotool key --window "$win" ctrl+0; sleep 0.3
    check "Ctrl+0: the scale it opened with" 'wait_for "scale=100 " 3'
    check "and + alone still zooms the time axis" 'key plus; wait_for "t0=0 t1=30000000000 .*scale=100 "'
    key 0
    # knobs: n goes to the double entry at 31s; < turns pause down a step (1s)
    key n
    check "n: the double entry, UNSAFE, the knob pause picked" 'wait_for "cursor=31000000000 .*scale=100 knob=pause verdict=UNSAFE"'
    key shift+comma
    check "<: pause=26s, played again, saved" \
      'grep -q "^view: pause=26s, same seed: saved as $tmp/knob/shots/locksim-edit-1.lsim (u undoes)" "$log" && wait_for "reloads=1 error=0" 3'
    check "26s: still UNSAFE" 'wait_for "reloads=1 .*verdict=UNSAFE"'
    key less
    check "< again: pause=25s, A resumes before B takes the lock: SAFE, the cursor kept at 31s" \
      'wait_for "cursor=31000000000 .*reloads=2 .*verdict=SAFE" 3'
    check "the saved file has pause=25s, the rest as it was" \
      '[ "$(diff "$tmp/knob/gc.lsim" "$tmp/knob/shots/locksim-edit-2.lsim" | grep -c "^[<>]")" = 2 ] && grep -q "^param pause=25s range=0s..55s$" "$tmp/knob/shots/locksim-edit-2.lsim"'
    a=$("$bin" hash "$tmp/knob/shots/locksim-edit-2.lsim" | cut -d" " -f1); b=$("$bin" hash "$tmp/knob/gc.lsim" --set pause=25s | cut -d" " -f1)
    check "the saved .lsim replays to the trace hash of the run the window played ($a = $b)" '[ -n "$a" ] && [ "$a" = "$b" ]'
    check "locksim run of it: SAFE" '"$bin" run "$tmp/knob/shots/locksim-edit-2.lsim" | grep -q "^Verdict: SAFE"'
    key k
    check "k: the next knob, ttl" 'wait_for "knob=ttl "'
    key u
    check "u: back to pause=26s, UNSAFE again" 'wait_for "reloads=3 .*verdict=UNSAFE" 3'
    import -window "$win" "$tmp/knobs.png" 2>/dev/null
    quit >/dev/null
  else
    bad "the window opened (scale and knobs)"
  fi
  scale_args=(--scale 3)
  if start huge "$bin" view "$tmp/knob/gc.lsim" --shots "$tmp/knob/shots"; then
    check "--scale 3 on 1048 lines: 2.25, the bars a third of the window at most" 'wait_for "scale=225 " 3'
    quit >/dev/null
  else
    bad "the window opened (--scale 3)"
  fi
  scale_args=(--scale 1)
  out=$("$bin" view "$tmp/knob/gc.lsim" --scale 9 2>&1); st=$?
  check "--scale 9: exit 64 saying the range" '[ "$st" = 64 ] && echo "$out" | grep -q "scale from 0.75 to 3"'
  export DISPLAY=$outer_display
  kill "$x95" 2>/dev/null
fi

echo "== view: live reload"
cp scenarios/gc-pause-outlives-lease.lsim "$tmp/edit.lsim"
if start edit "$bin" view "$tmp/edit.lsim"; then
  key plus
  before=$(field t1)
  sleep 1.1 # a new mtime even on a coarse clock
  sed -i 's/^@5s pause A 27s/@5s pause A 20s/' "$tmp/edit.lsim"
  check "an edit on disk is picked up" 'wait_for "reloads=1 error=0" 3'
  check "the view (zoom) is kept" '[ "$(field t1)" = "$before" ]'
  sleep 1.1
  echo "ttl banana" >> "$tmp/edit.lsim"
  check "a malformed edit: the error is shown, the window stays" 'wait_for "reloads=2 error=1" 3 && kill -0 $vpid'
  import -window "$win" "$tmp/error.png" 2>/dev/null
  sleep 1.1
  sed -i '$d' "$tmp/edit.lsim"
  check "fixed again: the error goes" 'wait_for "reloads=3 error=0" 3'
  quit >/dev/null
else
  bad "the window opened (reload)"
fi
printf 'lock lease ttl=30s\nttl banana\n' > "$tmp/bad.lsim"
out=$("$bin" view "$tmp/bad.lsim" 2>&1); st=$?
check "a malformed file at start: exit 65 with file:line:col" '[ "$st" = 65 ] && echo "$out" | grep -q "bad.lsim:2:"'

if [ "${VIEW_VALGRIND:-1}" != 0 ] && command -v valgrind >/dev/null 2>&1; then
  echo "== view: a short session under valgrind"
  if START_WAIT=1200 start vg valgrind -q --keep-debuginfo=yes --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
       --suppressions="$root/tests/view.supp" --error-exitcode=99 --log-file="$tmp/vg.txt" \
       "$bin" view "$tmp/gc.lsim"; then
    key Right Right n s plus minus question Escape ctrl+equal ctrl+minus less k greater u
    sleep 0.5
    xdotool key --window "$win" q
    st=99
    for _ in $(seq 1 300); do kill -0 "$vpid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$vpid" 2>/dev/null; then
      echo "view: the window under valgrind did not quit in 30 s; killed"; kill -9 "$vpid"; wait "$vpid" 2>/dev/null
    else
      wait "$vpid"; st=$?
    fi
    check "valgrind: no errors and no leaks of our own (status $st)" '[ "$st" = 0 ]'
    [ "$st" = 0 ] || sed -n 1,60p "$tmp/vg.txt"
  else
    bad "the window opened under valgrind"
  fi
fi

if [ -n "${VIEW_SHOTS:-}" ]; then mkdir -p "$VIEW_SHOTS" && cp "$tmp"/*.png "$VIEW_SHOTS"/ 2>/dev/null; fi
echo "view: $passed passed, $failed failed"
echo "tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
