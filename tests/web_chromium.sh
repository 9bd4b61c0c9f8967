#!/usr/bin/env bash
# The web page (build/web/locksim.html, `make web`) in headless Chromium, held
# against the native binary: every catalog scenario run in the page gives the
# verdict and trace digest that `locksim check --format json` gives; a link
# opens a catalog scenario, a scenario carried in the link itself, and a place
# in the run; a malformed scenario shows its file:line:col message and keeps
# the last good run; the seed's story, whole, shows the double entry.
# Usage: tests/web_chromium.sh PAGE.html LOCKSIM_BIN. Needs chromium, node
# (emscripten's) and python3 (and ImageMagick's convert for the picture). Closes with
# "web: N passed, M failed".
set -u
cd "$(dirname "$0")/.."
page=$(realpath "$1"); bin=$(realpath "$2")
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# page FRAGMENT [SHOT.png]: the page opened in headless Chromium (real time,
# over its DevTools pipe: tests/cdp.js) until it is ready; one JSON object of
# its body's data attributes and the texts of #verdict, #trace-hash, #error
# and #selftest.
page() { timeout 120 node tests/cdp.js "file://$page#$1" "${2:--}" ${3:+"$3"} ${4:+"$4"} 2>"$tmp/cdp.err" || cat "$tmp/cdp.err" >&2; }
# got FIELD: a field of the JSON text the page's UNTIL expression gave (page's 4th argument)
got() { python3 -c 'import sys,json
try: o=json.loads(json.load(sys.stdin).get("until") or "{}")
except ValueError: o={}
v=o.get(sys.argv[1],"")
sys.stdout.write(v if isinstance(v,str) else json.dumps(v))' "$1"; }
# field NAME: a field of that object on stdin (data.NAME for the body's)
field() { python3 -c 'import sys,json
try: o=json.load(sys.stdin)
except ValueError: o={}
k=sys.argv[1]
v=o.get("data",{}).get(k[5:],"") if k.startswith("data.") else o.get(k,"")
print(v)' "$1"; }

echo "== web: every catalog scenario in the page, against the native binary"
page "selftest=catalog" | field selftest | grep . > "$tmp/page.txt"
"$bin" check --format json scenarios/*.lsim > "$tmp/native.jsonl" 2>/dev/null
python3 - "$tmp/native.jsonl" > "$tmp/native.txt" <<'EOF'
import sys, json, os
for line in open(sys.argv[1]):
    r = json.loads(line)
    name = os.path.basename(r["file"])[:-5]
    print(name, r.get("verdict", "ERROR"), r.get("trace_hash", "-"))
EOF
n=$(grep -c . "$tmp/native.txt"); m=$(grep -c . "$tmp/page.txt")
cut -d' ' -f1-3 "$tmp/page.txt" | sort > "$tmp/page3.txt"; sort "$tmp/native.txt" > "$tmp/native3.txt"
check "the page ran every catalog scenario ($m of $n)" '[ "$m" -eq "$n" ] && [ "$n" -gt 90 ]'
diff "$tmp/native3.txt" "$tmp/page3.txt" > "$tmp/d.txt"
check "verdicts and trace digests equal to the native binary's for all $n" '[ ! -s "$tmp/d.txt" ]'
head -10 "$tmp/d.txt"

echo "== web: links"
d=$(page "scenario=fencing-rejects-stale-write")
want=$("$bin" run scenarios/fencing-rejects-stale-write.lsim --format json | python3 -c 'import sys,json; r=json.load(sys.stdin); print(r["verdict"], r["trace_hash"])')
got="$(echo "$d" | field verdict) $(echo "$d" | field trace_hash)"
check "#scenario=NAME opens that scenario ($got)" '[ "$got" = "$want" ]'
d=$(page "")
check "no fragment: the seed's story, at its start, nothing revealed" \
  'echo "$d" | field data.state | grep -q "^cur=-1 .*revealed=0 decided=0" && [ "$(echo "$d" | field verdict)" = UNSAFE ]'
d=$(page "scenario=gc-pause-outlives-lease&at=12")
check "at=K: the link opens at that event" 'echo "$d" | field data.state | grep -q "^cur=12 .*decided=1"'
# A scenario carried in the link: deflate-raw, base64url (what "share link" writes).
cat > "$tmp/own.lsim" <<'EOF'
title "A lease longer than the pause"
lock lease ttl=40s
resource stock=1 fencing=off
duration 60s
client A: acquire; read; work 10s; write; release
client B @31s: acquire retry=1s; read; write; release
@5s pause A 27s
EOF
frag=$(python3 -c 'import sys,zlib,base64; c=zlib.compressobj(9,zlib.DEFLATED,-15); d=c.compress(open(sys.argv[1],"rb").read())+c.flush(); print("text="+base64.urlsafe_b64encode(d).decode().rstrip("=")+"&seed=3&algo=fenced-lease")' "$tmp/own.lsim")
d=$(page "$frag")
want=$("$bin" run "$tmp/own.lsim" --seed 3 --algo fenced-lease --format json | python3 -c 'import sys,json; r=json.load(sys.stdin); print(r["verdict"], r["trace_hash"])')
got="$(echo "$d" | field verdict) $(echo "$d" | field trace_hash)"
check "a scenario in the link itself, with its seed and algorithm, runs as natively ($got)" '[ "$got" = "$want" ]'

d=$(page "scenario=gc-pause-outlives-lease&set=pause=20s")
want=$("$bin" run scenarios/gc-pause-outlives-lease.lsim --set pause=20s --format json | python3 -c 'import sys,json; r=json.load(sys.stdin); print(r["verdict"], r["trace_hash"])')
got="$(echo "$d" | field verdict) $(echo "$d" | field trace_hash)"
check "a knob in the link (set=pause=20s) runs as --set does ($got)" '[ "$got" = "$want" ]'
check "the scenario's params are sliders, showing the values in use ($(echo "$d" | field knobs))" \
  '[ "$(echo "$d" | field knobs)" = "pause=20s ttl=30s" ]'
# A slider moved to 1500 ms: the page names the value as the binary does
# (scn_format_duration: 1.5s, not 1500ms) and runs what --set pause=1.5s runs.
d=$(page "scenario=gc-pause-outlives-lease" - 'const i = document.querySelector("[data-param=pause] input");
  i.step = "any"; i.value = 1500; i.dispatchEvent(new Event("input"));')
want=$("$bin" run scenarios/gc-pause-outlives-lease.lsim --set pause=1.5s --format json | python3 -c 'import sys,json; r=json.load(sys.stdin); print(r["verdict"], r["trace_hash"])')
got="$(echo "$d" | field verdict) $(echo "$d" | field trace_hash)"
check "a slider's duration reads as the binary prints it ($(echo "$d" | field knobs))" \
  '[ "$(echo "$d" | field knobs)" = "pause=1.5s ttl=30s" ]'
check "and runs as --set pause=1.5s does ($got)" '[ "$got" = "$want" ]'
# The slider at its left end, 0s: no pause, as --set pause=0s runs (SAFE: A
# writes long before its lease ends), not an error
d=$(page "scenario=gc-pause-outlives-lease" - 'const i = document.querySelector("[data-param=pause] input");
  i.value = i.min; i.dispatchEvent(new Event("input"));')
want=$("$bin" run scenarios/gc-pause-outlives-lease.lsim --set pause=0s --format json | python3 -c 'import sys,json; r=json.load(sys.stdin); print(r["verdict"], r["trace_hash"])')
got="$(echo "$d" | field verdict) $(echo "$d" | field trace_hash)"
check "the pause slider at its left end reads $(echo "$d" | field knobs) and runs as --set pause=0s: SAFE ($got)" \
  '[ "$(echo "$d" | field knobs)" = "pause=0s ttl=30s" ] && [ -z "$(echo "$d" | field data.error)" ] && [ "$got" = "$want" ] && [ "${got%% *}" = SAFE ]'
# The window's knob keys (the view model's, render/viewmodel_knob.c): < twice
# turns pause down two steps of 1s; A resumes at 30s, before B takes the lock.
d=$(page "scenario=gc-pause-outlives-lease" "$tmp/knobs.png" 'for (const k of ["<", "<"])
  document.dispatchEvent(new KeyboardEvent("keydown", { key: k }));')
want=$("$bin" run scenarios/gc-pause-outlives-lease.lsim --set pause=25s --format json | python3 -c 'import sys,json; r=json.load(sys.stdin); print(r["verdict"], r["trace_hash"])')
got="$(echo "$d" | field verdict) $(echo "$d" | field trace_hash)"
check "< < turns the picked knob two steps: $(echo "$d" | field knobs)" '[ "$(echo "$d" | field knobs)" = "pause=25s ttl=30s" ]'
check "and runs as --set pause=25s does: SAFE ($got)" '[ "$got" = "$want" ] && [ "${got%% *}" = SAFE ]'

# The view too: stepped to event 12 (Right 13 times) and zoomed in (+ +),
# "share link" writes a link that opens the same stop, window and picture
view_until='JSON.stringify({ link: location.hash.slice(1), state: document.body.dataset.state.replace(/ playing=.*/, ""),
  pixels: (() => { const u = document.getElementById("timeline").toDataURL(); let h = 0;
    for (let i = 0; i < u.length; i++) h = (h * 31 + u.charCodeAt(i)) | 0; return u.length + ":" + h; })() })'
d=$(page "scenario=gc-pause-outlives-lease" - 'for (let i = 0; i < 13; i++) document.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight" }));
  for (const k of ["+", "+"]) document.dispatchEvent(new KeyboardEvent("keydown", { key: k }));
  document.getElementById("b-share").click();' 'location.hash.includes("at=") && '"$view_until")
link=$(echo "$d" | got link); state=$(echo "$d" | got state); pixels=$(echo "$d" | got pixels)
d=$(page "$link" - "0" "$view_until")
check "a shared link keeps the zoom: $link opens at $(echo "$d" | got state) (shared at $state)" \
  'echo "$link" | grep -q "win=" && [ "$(echo "$d" | got state)" = "$state" ] && echo "$state" | grep -q "^cur=12 .* t0=[1-9]"'
check "and draws the same picture (canvas $(echo "$d" | got pixels), shared $pixels)" '[ -n "$pixels" ] && [ "$(echo "$d" | got pixels)" = "$pixels" ]'

# The verdict tab: the report as run prints it, each of its lines one line
# on screen (not wrapped at the tab's width, which breaks its columns)
d=$(page "scenario=gc-pause-outlives-lease&all=1" - 'document.querySelector("[data-tab=report]").click();' \
  'JSON.stringify({ lines: document.getElementById("report").textContent.replace(/\n$/, "").split("\n").length,
    rows: Math.round(document.getElementById("report").scrollHeight / parseFloat(getComputedStyle(document.getElementById("report")).lineHeight)) })')
check "the verdict tab shows the report's $(echo "$d" | got lines) lines as $(echo "$d" | got rows) rows, unwrapped" \
  '[ -n "$(echo "$d" | got lines)" ] && [ "$(echo "$d" | got lines)" = "$(echo "$d" | got rows)" ]'

echo "== web: the lab handouts"
# docs/labs/README.md's table (handout | scenarios | knobs): each handout a
# group of the scenario list, with its scenarios, and each scenario's knobs
# sliders in the page
python3 - > "$tmp/labs_want.txt" <<'EOF2'
import re
for l in open("docs/labs/README.md"):
    m = re.match(r"^\| \[([^\]]+)\]\([^)]*\) \| ([^|]*) \| ([^|]*) \|$", l.rstrip("\n"))
    if m: print(m.group(1).split(".")[0], " ".join(re.findall(r"([a-z0-9-]+)\.lsim", m.group(2))), "|", " ".join(re.findall(r"`([a-z_]+)`", m.group(3))))
EOF2
d=$(page "" - "0" 'JSON.stringify({ groups: [...document.querySelectorAll("#scenario optgroup")].filter((g) => /^Lab /.test(g.label))
  .map((g) => g.label.replace(/^Lab ([A-Z])\..*/, "$1") + " " + [...g.querySelectorAll("option")].map((o) => o.value).join(" ")).join("\n") })')
echo "$d" | got groups > "$tmp/labs_got.txt"
check "the scenario list has the $(grep -c . "$tmp/labs_want.txt") lab handouts' groups, with their scenarios ($(tr '\n' ';' < "$tmp/labs_got.txt"))" \
  '[ -s "$tmp/labs_want.txt" ] && [ "$(cut -d"|" -f1 "$tmp/labs_want.txt" | sed "s/ *$//")" = "$(cat "$tmp/labs_got.txt")" ]'
while read -r lab rest; do
  first=${rest%% *}; want=$(echo "${rest#*| }" | tr ' ' '\n' | sort | tr '\n' ' ')
  d=$(page "scenario=$first")
  have=$(echo "$d" | field knobs | tr ' ' '\n' | sed 's/=.*//' | sort | tr '\n' ' ')
  check "lab $lab: $first's knobs are sliders: $have(the handout's: $want)" '[ "$have" = "$want" ]'
done < "$tmp/labs_want.txt"

echo "== web: a malformed scenario"
printf 'lock lease ttl=30s\nttl banana\n' > "$tmp/bad.lsim"
frag=$(python3 -c 'import sys,zlib,base64; c=zlib.compressobj(9,zlib.DEFLATED,-15); d=c.compress(open(sys.argv[1],"rb").read())+c.flush(); print("text="+base64.urlsafe_b64encode(d).decode().rstrip("="))' "$tmp/bad.lsim")
d=$(page "$frag")
err=$(echo "$d" | field data.error)
native=$("$bin" run "$tmp/bad.lsim" 2>&1 | head -1 | sed 's/^locksim: //; s|^.*bad\.lsim:|scenario.lsim:|')
check "its file:line:col message shows ($err)" 'echo "$err" | grep -q "^scenario.lsim:2:1: "'
check "the message is the native binary's" '[ "$err" = "$native" ]'
check "a link that does not load still draws a run (the seed's story)" '[ "$(echo "$d" | field verdict)" = UNSAFE ]'

echo "== web: break it by clicking"
# a right click on A's lane, 400 px in: the row found through the page's own view model
click='const a = window.locksim.api, c = document.getElementById("timeline"), r = c.getBoundingClientRect();
let y = 0; while (y < 600 && !a.web_fault_line(400, y, 0)) y++;
c.dispatchEvent(new MouseEvent("contextmenu", { clientX: r.left + 400, clientY: r.top + y, bubbles: true, cancelable: true }));'
d=$(page "scenario=gc-pause-outlives-lease" - "$click")
flash=$(echo "$d" | field data.flash)
check "a right click on A's lane adds a pause of half the run ($flash)" 'echo "$flash" | grep -Eq "^added @[0-9.]+s pause A 30s"'
check "into the scenario's text, after its earlier timed line (@5s)" \
  'echo "$d" | field editor | grep -E "^@" | tr "\n" "|" | grep -Eq "^@5s pause A \\\$pause\|@[0-9.]+s pause A 30s   # added by a click\|$"'
check "and the edited run is drawn (no error)" '[ -z "$(echo "$d" | field data.error)" ] && [ -n "$(echo "$d" | field verdict)" ]'
# a right drag along A's lane, from 400 px to 460 px: pressed there, let go here
drag='const a = window.locksim.api, c = document.getElementById("timeline"), r = c.getBoundingClientRect();
let y = 0; while (y < 600 && !a.web_fault_line(400, y, 0)) y++;
c.dispatchEvent(new MouseEvent("mousedown", { button: 2, clientX: r.left + 400, clientY: r.top + y, bubbles: true }));
window.dispatchEvent(new MouseEvent("mouseup", { button: 2, clientX: r.left + 460, clientY: r.top + y, bubbles: true }));'
d=$(page "scenario=gc-pause-outlives-lease" - "$drag")
flash=$(echo "$d" | field data.flash)
check "a right drag along A's lane adds a pause as long as the stretch dragged ($flash)" \
  'echo "$flash" | grep -Eq "^added @[0-9.]+s pause A [0-9.]+m?s " && ! echo "$flash" | grep -q "pause A 30s"'

echo "== web: the sweep tab, in a Web Worker, against locksim sweep --svg"
# sweep X Y STEPS ALGOS: the sweep tab's form filled and run; the page's
# request, its progress text and the heatmap's SVG text once drawn
sweep_js() { echo 'document.querySelector("[data-tab=sweep]").click();
  const f = (id, v) => { document.getElementById(id).value = v; };
  f("sweep-x", "'"$1"'"); f("sweep-y", "'"$2"'"); f("sweep-steps", "'"$3"'");
  for (const o of document.getElementById("sweep-algos").options) o.selected = "'"$4"'" === "all" || "'"$4"'".split(",").includes(o.value);
  document.getElementById("sweep-run").click();'; }
sweep_until='window.locksim.sweep && window.locksim.sweep.svg && document.querySelector("#sweep-out svg") &&
  JSON.stringify({ progress: document.getElementById("sweep-progress").textContent, svg: window.locksim.sweep.svg,
                   xkey: window.locksim.sweep.request.xkey, xvals: window.locksim.sweep.request.xvals.split("\n").join(","),
                   ykey: window.locksim.sweep.request.ykey, yvals: window.locksim.sweep.request.yvals.split("\n").join(",") })'
d=$(page "scenario=gc-pause-outlives-lease" - "$(sweep_js pause ttl 5 lease,fenced-lease)" "$sweep_until")
echo "$d" | got svg > "$tmp/page_sweep.svg"
"$bin" sweep scenarios/gc-pause-outlives-lease.lsim --vary "pause=$(echo "$d" | got xvals)" \
  --vary "ttl=$(echo "$d" | got yvals)" --algos lease,fenced-lease --svg "$tmp/native_sweep.svg" >/dev/null 2>&1
check "a 5x5 sweep of pause and ttl over two algorithms: the heatmap is locksim sweep --svg's, byte for byte ($(wc -c < "$tmp/native_sweep.svg") bytes)" \
  '[ -s "$tmp/native_sweep.svg" ] && cmp -s "$tmp/page_sweep.svg" "$tmp/native_sweep.svg"'
check "its progress reaches 50 of 50 runs ($(echo "$d" | got progress))" 'echo "$d" | got progress | grep -q "^50 of 50 runs"'
# pause's range= starts at 0s: that column is the run without the pause
# (a param turned to 0), not an error cell
zero=$(grep -o '<rect class="cell" data-x="0s"[^>]*' "$tmp/page_sweep.svg" | grep -o 'data-class="[a-z-]*"' | sort | uniq -c | tr -s ' \n' ' ')
check "its first column, pause=0s (the low end of range=0s..55s), is no pause: no error cell ($zero)" \
  '[ -n "$zero" ] && ! echo "$zero" | grep -q error'
d=$(page "scenario=fencing-rejects-stale-write&seed=7" - "$(sweep_js "$(sed -n 's/^param \([a-z_]*\)=.*range=.*/\1/p' scenarios/fencing-rejects-stale-write.lsim | head -1)" "" 12 "")" "$sweep_until")
echo "$d" | got svg > "$tmp/page_sweep1.svg"
"$bin" sweep scenarios/fencing-rejects-stale-write.lsim --seed 7 --vary "$(echo "$d" | got xkey)=$(echo "$d" | got xvals)" \
  --svg "$tmp/native_sweep1.svg" >/dev/null 2>&1
check "one axis, the page's seed (7), the scenario's algorithm: byte for byte too ($(echo "$d" | got progress))" \
  '[ -s "$tmp/native_sweep1.svg" ] && cmp -s "$tmp/page_sweep1.svg" "$tmp/native_sweep1.svg"'
# stop: a 12x12 over every algorithm stopped at once leaves no picture and says so
d=$(page "scenario=gc-pause-outlives-lease" - "$(sweep_js pause ttl 12 all)
  setTimeout(() => document.getElementById('sweep-stop').click(), 400);" \
  'document.getElementById("sweep-stop").disabled && JSON.stringify({ progress: document.getElementById("sweep-progress").textContent, drawn: !!document.querySelector("#sweep-out svg") })')
check "the stop button ends the sweep where it is ($(echo "$d" | got progress))" \
  'echo "$d" | got progress | grep -q "(stopped)$" && [ "$(echo "$d" | got drawn)" = false ]'

echo "== web: every algorithm, in the worker"
# a timer on the main thread counts its ticks while the matrix computes
matrix_js='window.__ticks = 0; setInterval(() => { if (!document.body.dataset.matrixMs) window.__ticks++; }, 10);
  document.querySelector("[data-tab=matrix]").click();'
matrix_until='document.body.dataset.matrixMs && JSON.stringify({ ticks: window.__ticks, ms: document.body.dataset.matrixMs,
  progress: document.getElementById("matrix-progress").textContent,
  rows: [...document.querySelectorAll("#matrix tr")].map((tr) => tr.dataset.row).join("\n") })'
d=$(page "scenario=consensus-leader-partitioned" - "$matrix_js" "$matrix_until")
echo "$d" | got rows | python3 -c 'import sys
for l in sys.stdin:
    f = l.rstrip("\n").split("\t")
    if len(f) >= 4 and f[1] not in ("-", "ERROR"): print(f[0], f[1], f[3])
    elif len(f) >= 2: print(f[0], "ERROR", "-")' > "$tmp/page_matrix.txt"
"$bin" matrix scenarios/consensus-leader-partitioned.lsim --format json | python3 -c 'import sys, json
for r in json.load(sys.stdin)["rows"]: print(r["algorithm"], r.get("verdict", "ERROR"), r.get("trace_hash", "-"))' > "$tmp/native_matrix.txt"
check "a consensus scenario's matrix: every row's verdict and digest as matrix --format json ($(grep -c . "$tmp/native_matrix.txt") rows)" \
  '[ -s "$tmp/native_matrix.txt" ] && cmp -s "$tmp/page_matrix.txt" "$tmp/native_matrix.txt"'
diff "$tmp/native_matrix.txt" "$tmp/page_matrix.txt" | head -5
check "its progress says $(echo "$d" | got progress)" 'echo "$d" | got progress | grep -Eq "^([0-9]+) of \1 algorithms$"'
check "the main thread's timer fired while it computed ($(echo "$d" | got ticks) ticks in $(echo "$d" | got ms) ms)" \
  '[ "$(echo "$d" | got ticks)" -gt 0 ]'

echo "== web: the page fills its window"
# At a laptop's 1280x720 and a projector's 1920x1080: no page scrollbar, the
# narration's bottom edge on the window's, the timeline's scroller taking the
# rest of the column (no band under the narration)
fill_until='JSON.stringify({ sh: document.documentElement.scrollHeight, sw: document.documentElement.scrollWidth,
  w: innerWidth, h: innerHeight, narr: Math.round(document.getElementById("narration").getBoundingClientRect().bottom),
  room: Math.round(document.getElementById("scroller").getBoundingClientRect().height),
  bar: document.getElementById("scroller").offsetHeight - document.getElementById("scroller").clientHeight,
  col: Math.round(document.getElementById("view").getBoundingClientRect().height - document.getElementById("narration").getBoundingClientRect().height) })'
for size in 1280,720 1920,1080; do
  d=$(CDP_SIZE=$size page "scenario=gc-pause-outlives-lease" - "0" "$fill_until")
  check "at ${size/,/x}: the page is the window's size ($(echo "$d" | got w)x$(echo "$d" | got h), content $(echo "$d" | got sw)x$(echo "$d" | got sh)), the narration at its bottom (${size#*,}: $(echo "$d" | got narr)), the timeline $(echo "$d" | got room) px of $(echo "$d" | got col), no scrollbar under it ($(echo "$d" | got bar) px)" \
    '[ "$(echo "$d" | got w),$(echo "$d" | got h)" = "$size" ] && [ "$(echo "$d" | got sh)" = "${size#*,}" ] &&
     [ "$(echo "$d" | got sw)" = "${size%,*}" ] && [ "$(echo "$d" | got narr)" = "${size#*,}" ] && [ "$(echo "$d" | got room)" = "$(echo "$d" | got col)" ] && [ "$(echo "$d" | got bar)" = 0 ]'
done

echo "== web: a scrolled timeline"
# At 1280x480 the whole story is taller than its scroller, and the page draws
# only the rows in view (and a margin): scrolled to its bottom, the rows there
# are drawn, the very pixels that the whole drawing (the PNG's) has there.
scroll_js='const sc = document.getElementById("scroller"); sc.scrollTop = sc.scrollHeight;'
scroll_until='(() => { const sc = document.getElementById("scroller"), c = document.getElementById("timeline");
  if (!sc.scrollTop) return null;
  const dpr = window.devicePixelRatio || 1, top = Math.round(sc.scrollTop * dpr), h = Math.round(sc.clientHeight * dpr);
  const rows = () => c.getContext("2d").getImageData(0, top, c.width, h).data;
  const seen = rows();
  let ink = 0, diff = 0;
  for (let i = 0; i < seen.length; i += 4) if (seen[i + 3] && seen[i] + seen[i + 1] + seen[i + 2] < 600) ink++;
  window.locksim.wholeCanvas();
  const whole = rows();
  for (let i = 0; i < seen.length; i++) if (seen[i] !== whole[i]) diff++;
  return JSON.stringify({ top: sc.scrollTop, view: sc.clientHeight, height: c.height / dpr, ink, diff }); })()'
d=$(CDP_SIZE=1280,480 page "scenario=gc-pause-outlives-lease&all=1" - "$scroll_js" "$scroll_until")
check "scrolled $(echo "$d" | got top) px down a $(echo "$d" | got height) px timeline (its view $(echo "$d" | got view) px): the rows in view are drawn ($(echo "$d" | got ink) px of ink)" \
  '[ "$(echo "$d" | got top)" -gt 200 ] && [ "$(echo "$d" | got ink)" -gt 2000 ]'
check "and are the whole drawing's pixels there ($(echo "$d" | got diff) bytes differ)" '[ "$(echo "$d" | got diff)" = 0 ]'

echo "== web: the picture at 1280x720"
page "scenario=gc-pause-outlives-lease&all=1" "$tmp/story.png" >/dev/null
convert=$(command -v /usr/bin/convert || command -v convert)
if [ -n "$convert" ] && [ -s "$tmp/story.png" ]; then
  band=$("$convert" "$tmp/story.png" txt:- 2>/dev/null | grep -ic '#F6D2BC')
  check "the whole story shows the double-entry band ($band px)" '[ "$band" -gt 50 ]'
  red=$("$convert" "$tmp/story.png" txt:- 2>/dev/null | grep -ic '#D55E00')
  check "and the UNSAFE badge ($red px)" '[ "$red" -gt 100 ]'
else
  bad "a screenshot of the page (convert: ${convert:-missing})"
fi
if [ -n "${WEB_SHOTS:-}" ]; then mkdir -p "$WEB_SHOTS" && cp "$tmp"/*.png "$WEB_SHOTS"/; fi
echo "web: $passed passed, $failed failed"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
