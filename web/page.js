// The web page of locksim: the engine and the view model in wasm (web/web_api.c,
// the same C as the command line and the SDL2 window), this file only paints the
// frame's primitives on a canvas and wires the page's controls to them.
// LOCKSIM_CATALOG (the built-in scenarios, grouped as docs/scenarios.md groups
// them) and LocksimModule (emcc's output) are inlined before this script.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const NARR_LINES = 3;
  let M = null;          // the wasm module
  let api = {};          // its functions, cwrapped
  let current = { name: "", text: "", algo: "", seed: "", quiz: false, sets: {} };
  const setLines = () => Object.entries(current.sets).map(([k, v]) => k + "=" + v).join("\n");
  let lastWidth = 0, lastHeight = 0, lastTick = 0, dirty = true;
  let debounce = null, drag = 0, dragX = 0;
  let algoNames = [];    // the built-in algorithms, in `locksim list` order

  function wrap() {
    const s = "string", n = "number";
    const f = (name, ret, args) => (api[name] = M.cwrap(name, ret, args));
    f("web_run", n, [s, s, s, s, s, n]); f("web_error", s, []); f("web_verdict", s, []);
    f("web_headline", s, []); f("web_trace_hash", s, []); f("web_report", s, []);
    f("web_json", s, []); f("web_frame", n, [n, n]);
    f("web_words", n, []); f("web_strings", n, []); f("web_content_h", n, []);
    f("web_key", n, [s]); f("web_play", n, [n]); f("web_playing", n, []);
    f("web_seek_x", null, [n]); f("web_on_axis", n, [n, n]); f("web_pan_px", null, [n]);
    f("web_zoom_at", null, [n, n]); f("web_hit", s, [n, n]); f("web_narration", s, [n]);
    f("web_narration_current", n, []); f("web_status", s, [s]); f("web_help_line", s, [n]);
    f("web_question", s, []); f("web_state", s, []); f("web_goto", null, [n]); f("web_cur", n, []);
    f("web_svg", s, [n]); f("web_scenario_text", s, [s]); f("web_algos", s, []);
    f("web_fault_line", s, [n, n, n]); f("web_fault_drag", s, [n, n, n, n]); f("web_fault_place", n, [s]); f("web_params", s, []);
    f("web_knob_set", s, [n, n]); f("web_knob_taken", s, []); f("web_knob_picked", n, []);
    f("web_format_duration", s, [n]); f("web_window", null, [n, n]);
  }

  // The room the timeline may take: the view's column above the narration
  // (the scroller fills it; the canvas in it is as tall as the scene).
  const roomH = () => $("view").clientHeight - $("narration").offsetHeight;
  // Its width: whole pixels inside the scroller (at 1280 px the column is
  // 857.6 px, whose clientWidth 858 would overflow it by a scrollbar), at
  // least 640 (narrower, it scrolls).
  const roomW = () => {
    const sc = $("scroller");
    return Math.max(640, Math.floor(sc.getBoundingClientRect().width) - (sc.offsetWidth - sc.clientWidth));
  };

  // ---- painting: the frame's primitives (web_api.c: box, poly, line, text) ----
  const colours = new Map();
  const col = (v) => {
    let c = colours.get(v);
    if (c === undefined) colours.set(v, (c = "#" + (v & 0xffffff).toString(16).padStart(6, "0")));
    return c;
  };
  // The frame of width px: the scene built (web_frame: the view model's
  // layout and paint into the command list), then drawn on the canvas: the
  // rows the scroller shows (and CULL_PX around them), or all of it (whole:
  // the PNG). Returns false when there is nothing to draw.
  function paint(width, room, whole) {
    const avail = Math.max(200, room);
    const t0 = performance.now();
    const nw = api.web_frame(width, avail);
    const t1 = performance.now();
    if (nw < 0) return false;
    draw(width, nw, whole);
    phase.scene = t1 - t0; phase.paint = performance.now() - t1; phase.words = nw;
    return true;
  }
  // Drawing only the rows in view (issue 22): a long run's scene is taller
  // than the scroller, and every text drawn is rastered, seen or not. The
  // canvas keeps the scene's height (the scroller scrolls it as before); the
  // rows drawn are clipped, so they are the very pixels a whole drawing has,
  // and a scroll past them draws again (wire(): the scroller's scroll).
  const CULL_PX = 120; // drawn above and below the view: a wheel's notch is 100 px
  let drawn = { y0: 0, y1: 0 }; // the rows (CSS px) of the canvas the last drawing covered
  function draw(width, nw, whole) {
    const canvas = $("timeline"), ctx = canvas.getContext("2d"), sc = $("scroller");
    const h = Math.max(api.web_content_h(), 100);
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(width * dpr); canvas.height = Math.round(h * dpr);
      canvas.style.width = width + "px"; canvas.style.height = h + "px";
    }
    const y0 = whole ? 0 : Math.max(0, sc.scrollTop - CULL_PX);
    const y1 = whole ? h : Math.min(h, sc.scrollTop + sc.clientHeight + CULL_PX);
    drawn = { y0, y1 };
    ctx.__dpr = dpr;
    curFont = "";
    ctx.textBaseline = "middle";
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.save();
    ctx.beginPath(); ctx.rect(0, y0, width, y1 - y0); ctx.clip();
    ctx.fillStyle = curFill = "#fff"; ctx.fillRect(0, y0, width, y1 - y0);
    const words = new Int32Array(M.HEAP32.buffer, api.web_words(), nw);
    const strs = api.web_strings();
    let txt = false; // the transform is a text's own
    // out(top, bottom): a command's rows wholly outside the rows drawn
    const out = (top, bottom) => bottom < y0 || top > y1;
    for (let i = 0; i < nw;) {
      switch (words[i]) {
        case 1: if (!out(words[i + 2], words[i + 2] + words[i + 4])) {
            if (txt) { ctx.setTransform(dpr, 0, 0, dpr, 0, 0); txt = false; }
            setFill(ctx, col(words[i + 5])); ctx.fillRect(words[i + 1], words[i + 2], words[i + 3], words[i + 4]);
          }
          i += 6; break;
        case 2: {
          const n = words[i + 1];
          let top = Infinity, bottom = -Infinity;
          for (let k = 0; k < n; k++) { top = Math.min(top, words[i + 4 + 2 * k]); bottom = Math.max(bottom, words[i + 4 + 2 * k]); }
          if (!out(top, bottom)) {
            if (txt) { ctx.setTransform(dpr, 0, 0, dpr, 0, 0); txt = false; }
            setFill(ctx, col(words[i + 2])); ctx.beginPath();
            for (let k = 0; k < n; k++) ctx[k ? "lineTo" : "moveTo"](words[i + 3 + 2 * k], words[i + 4 + 2 * k]);
            ctx.closePath(); ctx.fill();
          }
          i += 3 + 2 * n; break;
        }
        case 3: {
          const w = words[i + 5];
          if (!out(Math.min(words[i + 2], words[i + 4]) - w, Math.max(words[i + 2], words[i + 4]) + w + 1)) {
            if (txt) { ctx.setTransform(dpr, 0, 0, dpr, 0, 0); txt = false; }
            line(ctx, words[i + 1], words[i + 2], words[i + 3], words[i + 4], w, col(words[i + 6]));
          }
          i += 7; break;
        }
        case 4: { // a glyph may reach a cell's height beyond its cell
          const y = words[i + 2], ch = words[i + 3], px = words[i + 4];
          if (!out(y + ch / 2 - px, y + ch / 2 + px)) {
            const s = M.UTF8ToString(strs + words[i + 7], words[i + 8]);
            txt = text(ctx, words[i + 1], y, ch, s, px, words[i + 5], col(words[i + 6]), txt);
          }
          i += 9; break;
        }
        case 5: i += 3; break;
        case 6: i += 1; break;
        default: i = nw;
      }
    }
    ctx.restore();
    curFill = "";
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }
  // The fill colour set only when it changes (a colour's text is parsed each
  // time it is set); curFill: the one set, "" after the state is restored.
  let curFill = "";
  const setFill = (ctx, c) => { if (c !== curFill) { ctx.fillStyle = c; curFill = c; } };
  // Lines as the window draws them: axis-aligned ones as whole pixels.
  function line(ctx, x0, y0, x1, y1, w, c) {
    setFill(ctx, c);
    if (x0 === x1) { ctx.fillRect(x0 - (w >> 1), Math.min(y0, y1), w, Math.abs(y1 - y0) + 1); return; }
    if (y0 === y1) { ctx.fillRect(Math.min(x0, x1), y0 - (w >> 1), Math.abs(x1 - x0) + 1, w); return; }
    ctx.strokeStyle = c; ctx.lineWidth = w; ctx.beginPath();
    ctx.moveTo(x0 + 0.5, y0 + 0.5); ctx.lineTo(x1 + 0.5, y1 + 0.5); ctx.stroke();
  }
  // Text in the layout's cells: DejaVu Sans Mono's advance is 0.602 em; a
  // fallback monospace font of another width is squeezed to the same width.
  // The font is set only when it changes, and each width measured once.
  let curFont = "";
  const widths = new Map();
  // Returns whether the transform is now the text's own (a squeezed text's);
  // txt: whether it was before.
  function text(ctx, x, y, h, s, px, bold, c, txt) {
    const font = (bold ? "bold " : "") + px + "px 'DejaVu Sans Mono', 'Liberation Mono', monospace";
    if (font !== curFont) { ctx.font = font; curFont = font; }
    setFill(ctx, c);
    const key = font + "\u0000" + s;
    let got = widths.get(key);
    if (got === undefined) {
      got = ctx.measureText(s).width;
      if (widths.size > 20000) widths.clear();
      widths.set(key, got);
    }
    const want = s.length * px * 0.602, d = ctx.__dpr;
    if (got > want * 1.02 && want > 0) {
      ctx.setTransform(d * want / got, 0, 0, d, d * x, d * (y + h / 2));
      ctx.fillText(s, 0, 0);
      return true;
    }
    if (txt) ctx.setTransform(d, 0, 0, d, 0, 0);
    ctx.fillText(s, x, y + h / 2); // the font's own width: no transform of its own
    return false;
  }

  // ---- the page around the canvas ----
  // Texts, classes and attributes are written only when they change: a write,
  // even of the same text, has the page laid out again (issue 22: most of an
  // edit's time was the page's, not the run's or the canvas's).
  const setText = (el, s) => { if (el.textContent !== s) el.textContent = s; };
  const setClass = (el, c) => { if (el.className !== c) el.className = c; };
  const setData = (k, v) => { if (document.body.dataset[k] !== v) document.body.dataset[k] = v; };
  const setHidden = (el, h) => { if (el.hidden !== h) el.hidden = h; };
  let lastQuestion = null;
  // The narration, status line, question and buttons; room: the timeline's
  // (roomH(), read once by the caller before anything here is written).
  function words(room) {
    const cur = api.web_narration_current();
    const rows = document.querySelectorAll("#narration > div:not(#status)");
    for (let i = 0; i < NARR_LINES; i++) {
      setText(rows[i], api.web_narration(i));
      setClass(rows[i], i === cur ? "current" : "");
    }
    const content = api.web_content_h();
    const hint = performance.now() < flashUntil ? flashText : content > room ? "? help  scroll for more below" : "";
    setText($("status"), api.web_status(hint));
    const q = api.web_question(), qd = $("question");
    if (q === lastQuestion) { /* shown already */ } else if (q) {
      const lines = q.split("\n").filter((l) => l);
      qd.innerHTML = "";
      const head = document.createElement("div");
      head.innerHTML = "<b>" + (lines[0][0] === "?" ? "What happens next?" : "The answer:") + "</b>";
      qd.appendChild(head);
      const ql = document.createElement("div"); ql.textContent = lines[0].slice(1); qd.appendChild(ql);
      for (const l of lines.slice(1)) {
        const d = document.createElement("div");
        d.textContent = "  " + l.slice(1);
        if (l[0] === "*") { d.className = "right"; d.textContent += "   <- this"; }
        qd.appendChild(d);
      }
      const foot = document.createElement("div");
      foot.innerHTML = lines[0][0] === "?" ? "<b>Press r (or Enter) to reveal.</b>" : "<b>Right or space goes on.</b>";
      qd.appendChild(foot);
      qd.hidden = false;
    } else qd.hidden = true;
    lastQuestion = q;
    setText($("b-play"), api.web_playing() ? "pause" : "play");
    const state = api.web_state();
    $("b-all").classList.toggle("on", / show_all=1 /.test(" " + state + " "));
    setData("state", state);
  }

  // The canvas with all of the timeline drawn, scrolled into view or not (the
  // PNG's; tests compare the rows in view with it).
  function wholeCanvas() {
    if (!paint(lastWidth, lastHeight, true)) redraw();
    return $("timeline");
  }

  // The timeline and the words under it. The page is laid out once, here,
  // for the scroller's width and the room, before anything is written.
  function redraw() {
    const width = roomW(), room = roomH();
    paint(width, room);
    lastWidth = width;
    lastHeight = room;
    words(room);
    dirty = false;
  }

  function showRun() {
    const v = api.web_verdict();
    setText($("verdict"), v);
    setClass($("verdict"), v);
    setText($("headline"), api.web_headline());
    setText($("trace-hash"), api.web_trace_hash());
    setText($("report"), api.web_report());
    scenarioChanged();
  }

  // Run the editor's text; a malformed line shows its file:line:col message and
  // the last good run stays.
  // The last run's phases in ms, for bench/web_bench.js: the engine's run,
  // the page's text around it (report, knobs, narration), the scene (the view
  // model's layout into the command list) and the canvas's painting.
  const phase = { run: 0, page: 0, scene: 0, paint: 0, words: 0 };
  function run(keepPlace) {
    const at = keepPlace ? api.web_cur() : -1;
    const t0 = performance.now();
    const rc = api.web_run(current.name ? current.name + ".lsim" : "scenario.lsim", current.text, current.algo,
                           current.seed, setLines(), current.quiz ? 1 : 0);
    phase.run = performance.now() - t0;
    const err = $("error");
    if (rc !== 0) {
      err.textContent = api.web_error();
      err.hidden = false;
      document.body.dataset.error = api.web_error();
      return false;
    }
    setHidden(err, true);
    if ("error" in document.body.dataset) delete document.body.dataset.error;
    if (at >= 0) api.web_goto(at);
    knobs();
    showRun();
    redraw();
    phase.page = performance.now() - t0 - phase.run - phase.scene - phase.paint;
    return true;
  }

  // Knobs: a slider for each `param NAME=VALUE range=MIN..MAX` of the
  // scenario; moving one re-runs with --set NAME=VALUE (the text unchanged).
  // Which params, their ranges, steps and the value's text are the view
  // model's (web_params, web_knob_set); sliders show durations in ms.
  function setKnob(nameValue) {
    const eq = nameValue.indexOf("=");
    if (eq < 0) return;
    const name = nameValue.slice(0, eq), v = nameValue.slice(eq + 1);
    const shown = $("knobs").querySelector('[data-param="' + name + '"] .v');
    if (shown) shown.textContent = v;
    current.sets[name] = v;
    clearTimeout(debounce);
    debounce = setTimeout(() => run(true), 60);
  }
  function knobs() {
    const box = $("knobs");
    const rows = api.web_params().split("\n").filter((l) => l).map((l) => l.split("\t"));
    const key = rows.map((r) => r[0] + r[2] + r[3] + r[4]).join("|");
    const picked = api.web_knob_picked(); // the one k picks and < > turn, marked
    rows.forEach((r, i) => { const d = box.querySelector('[data-param="' + r[0] + '"]'); if (d) d.classList.toggle("picked", i === picked); });
    if (box.dataset.key === key) { // the same params: only the values shown
      for (const r of rows) {
        const d = box.querySelector('[data-param="' + r[0] + '"]');
        if (!d) continue;
        setText(d.querySelector(".v"), r[1]);
        const input = d.querySelector("input"), v = String(Number(r[6]) / (r[2] === "d" ? 1e6 : 1));
        if (input.value !== v) input.value = v;
      }
      return;
    }
    box.dataset.key = key;
    box.innerHTML = "";
    rows.forEach(([name, val, kind, lo, hi, step, cur], i) => {
      const div = document.createElement("div");
      div.dataset.param = name;
      const scale = kind === "d" ? 1e6 : 1; // durations in ms on the slider
      const input = document.createElement("input");
      input.type = "range"; input.min = Number(lo) / scale; input.max = Number(hi) / scale;
      input.step = Number(step) / scale;
      input.value = Number(cur) / scale;
      const label = document.createElement("label");
      label.textContent = name + " ";
      const shown = document.createElement("span"); shown.className = "v"; shown.textContent = val;
      input.addEventListener("input", () => setKnob(api.web_knob_set(i, Number(input.value) * scale)));
      div.append(label, input, shown);
      div.classList.toggle("picked", i === picked);
      box.appendChild(div);
    });
  }

  function openScenario(name, text) {
    if (name !== current.name || text !== current.text) current.sets = current.keepSets || {};
    current.keepSets = null;
    current.name = name;
    current.text = text;
    $("editor").value = text;
    $("scenario").value = name;
    const opt = $("scenario").selectedOptions[0];
    $("scenario").title = opt ? opt.textContent : ""; // the whole title, when the box cuts it
    return run(false);
  }

  // ---- shareable links: #scenario=NAME or #text=DEFLATED, algo, seed, quiz, set, all, at, win ----
  const b64u = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const unb64u = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  async function deflate(s) {
    const cs = new CompressionStream("deflate-raw");
    const out = new Response(new Blob([new TextEncoder().encode(s)]).stream().pipeThrough(cs));
    return new Uint8Array(await out.arrayBuffer());
  }
  async function inflate(bytes) {
    const ds = new DecompressionStream("deflate-raw");
    const out = new Response(new Blob([bytes]).stream().pipeThrough(ds));
    return await out.text();
  }
  async function shareLink() {
    const p = new URLSearchParams();
    const builtIn = current.name && api.web_scenario_text(current.name) === current.text;
    if (builtIn) p.set("scenario", current.name);
    else p.set("text", b64u(await deflate(current.text)));
    if (current.algo) p.set("algo", current.algo);
    if (current.seed) p.set("seed", current.seed);
    if (current.quiz) p.set("quiz", "1");
    for (const [k, v] of Object.entries(current.sets)) p.append("set", k + "=" + v);
    if (/ show_all=1 /.test(" " + api.web_state() + " ")) p.set("all", "1");
    p.set("at", String(api.web_cur()));
    const w = / t0=(-?\d+) t1=(-?\d+) /.exec(" " + api.web_state() + " "); // the view: zoom and pan, in ns
    if (w) p.set("win", w[1] + ".." + w[2]);
    return location.href.split("#")[0] + "#" + p.toString();
  }
  async function openFragment() {
    const p = new URLSearchParams(location.hash.slice(1));
    current.algo = p.get("algo") || "";
    current.seed = p.get("seed") || "";
    current.quiz = p.get("quiz") === "1";
    current.keepSets = {};
    for (const kv of p.getAll("set")) { const i = kv.indexOf("="); if (i > 0) current.keepSets[kv.slice(0, i)] = kv.slice(i + 1); }
    $("algo").value = current.algo; $("seed").value = current.seed; $("quiz").checked = current.quiz;
    let ok;
    if (p.get("text")) {
      let text = "";
      try { text = await inflate(unb64u(p.get("text"))); } catch (e) { text = "# this link's scenario could not be read\n"; }
      ok = openScenario("", text);
    } else {
      const name = p.get("scenario") || "gc-pause-outlives-lease";
      const text = api.web_scenario_text(name);
      ok = openScenario(text ? name : "gc-pause-outlives-lease", text || api.web_scenario_text("gc-pause-outlives-lease"));
      if (!text) {
        $("error").textContent = "There is no scenario '" + name + "' in this page; the seed's story is shown. " +
          "The list at the top has every scenario.";
        $("error").hidden = false;
      }
    }
    if (!ok && api.web_cur() < 0 && !/^cur=/.test(api.web_state())) {
      // the link's scenario does not load and nothing ran yet: its text and
      // message stay in the editor, the seed's story is drawn meanwhile
      api.web_run("gc-pause-outlives-lease.lsim", api.web_scenario_text("gc-pause-outlives-lease"), "", "", "", 0);
      showRun();
    }
    if (ok && p.get("all") === "1") api.web_key("a");
    if (ok && p.has("at")) api.web_goto(parseInt(p.get("at"), 10));
    const win = /^(\d+)\.\.(\d+)$/.exec(p.get("win") || "");
    if (ok && win) api.web_window(Number(win[1]), Number(win[2]));
    redraw();
  }

  function download(name, blob) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob); a.download = name;
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }

  function fillControls() {
    const sel = $("scenario");
    const seen = new Set();
    for (const g of LOCKSIM_CATALOG.groups) {
      const og = document.createElement("optgroup");
      og.label = g.title;
      for (const n of g.scenarios) {
        if (seen.has(n) && !g.lab) continue; // a lab's scenarios are in its group too
        seen.add(n);
        const o = document.createElement("option");
        o.value = n; o.textContent = LOCKSIM_CATALOG.titles[n] ? n + ": " + LOCKSIM_CATALOG.titles[n] : n;
        og.appendChild(o);
      }
      if (og.children.length) sel.appendChild(og);
    }
    algoNames = api.web_algos().split("\n").filter((x) => x);
    for (const a of algoNames) {
      const o = document.createElement("option"); o.value = a; o.textContent = a; $("algo").appendChild(o);
      const p = document.createElement("option"); p.value = a; p.textContent = a; $("sweep-algos").appendChild(p);
    }
    const help = ["locksim in a web page: keys"];
    for (let i = 0; api.web_help_line(i); i++) help.push(api.web_help_line(i));
    help.push("drag on the time axis: scrub      drag elsewhere: pan      wheel: zoom");
    help.push("right-click a lane: pause that node there (shift: crash it); the line goes into the text");
    help.push("?            this help (any key closes it)");
    $("help").textContent = help.join("\n");
  }

  function wire() {
    $("scenario").addEventListener("change", (e) => {
      e.target.title = e.target.selectedOptions[0] ? e.target.selectedOptions[0].textContent : "";
      openScenario(e.target.value, api.web_scenario_text(e.target.value));
    });
    $("algo").addEventListener("change", (e) => { current.algo = e.target.value; run(false); });
    $("seed").addEventListener("change", (e) => { current.seed = e.target.value.trim(); run(false); });
    $("quiz").addEventListener("change", (e) => { current.quiz = e.target.checked; run(false); });
    $("editor").addEventListener("input", (e) => {
      current.text = e.target.value;
      clearTimeout(debounce);
      debounce = setTimeout(() => run(true), 250);
    });
    const key = (k) => () => { api.web_key(k); redraw(); };
    $("b-home").onclick = key("Home"); $("b-prev").onclick = key("ArrowLeft"); $("b-next").onclick = key("ArrowRight");
    $("b-end").onclick = key("End"); $("b-viol").onclick = key("n"); $("b-all").onclick = key("a");
    $("b-play").onclick = () => { api.web_key(" "); lastTick = performance.now(); redraw(); };
    $("b-help").onclick = () => { $("help").hidden = !$("help").hidden; };
    $("b-share").onclick = async () => {
      const link = await shareLink();
      history.replaceState(null, "", link);
      try { await navigator.clipboard.writeText(link); } catch (e) { /* the address bar has it */ }
      $("b-share").textContent = "link in the address bar";
      setTimeout(() => { $("b-share").textContent = "share link"; }, 2500);
    };
    $("b-svg").onclick = () => download((current.name || "scenario") + ".svg",
                                        new Blob([api.web_svg(lastWidth)], { type: "image/svg+xml" }));
    $("b-png").onclick = () => wholeCanvas().toBlob((b) => download((current.name || "scenario") + ".png", b));
    for (const b of document.querySelectorAll(".tabs button"))
      b.onclick = () => {
        for (const o of document.querySelectorAll(".tabs button")) o.classList.toggle("on", o === b);
        for (const t of document.querySelectorAll(".tab")) t.hidden = t.id !== "tab-" + b.dataset.tab;
        if (b.dataset.tab === "matrix") matrix();
      };
    $("sweep-run").onclick = sweep;
    $("sweep-stop").onclick = () => stopJob("stopped");
    document.addEventListener("keydown", (e) => {
      if (e.target.closest && e.target.closest("textarea, input, select")) return;
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      if (!$("help").hidden) { $("help").hidden = true; if (e.key === "?" || e.key === "Escape") return; }
      if (e.key === "?" || e.key === "F1") { $("help").hidden = false; e.preventDefault(); return; }
      if (api.web_key(e.key)) {
        e.preventDefault(); lastTick = performance.now();
        const turned = api.web_knob_taken(); // k, < and >: a knob, run again as its slider does
        if (turned) setKnob(turned); else { knobs(); redraw(); }
      }
    });
    const canvas = $("timeline");
    const pos = (e) => { const r = canvas.getBoundingClientRect(); return [Math.round(e.clientX - r.left), Math.round(e.clientY - r.top)]; };
    canvas.addEventListener("mousedown", (e) => {
      const [x, y] = pos(e);
      drag = api.web_on_axis(x, y) ? 2 : 1; dragX = x;
      if (drag === 2) { api.web_seek_x(x); redraw(); }
    });
    window.addEventListener("mouseup", () => { drag = 0; });
    canvas.addEventListener("mousemove", (e) => {
      const [x, y] = pos(e);
      if (drag === 2) { api.web_seek_x(x); redraw(); }
      else if (drag === 1) { api.web_pan_px(x - dragX); dragX = x; redraw(); }
      const tip = drag ? "" : api.web_hit(x, y), t = $("tip");
      if (tip) {
        t.textContent = tip; t.hidden = false;
        t.style.left = Math.min(x + 14, canvas.clientWidth - t.offsetWidth - 4) + "px"; t.style.top = (y + 18) + "px";
      } else t.hidden = true;
    });
    canvas.addEventListener("mouseleave", () => { $("tip").hidden = true; });
    // Break it by clicking: a right click on a lane pauses that node there for
    // half the run, a right drag along it for the stretch dragged over (shift:
    // crashes it); the line goes into the scenario's text among its timed
    // lines, and the run plays again. Ctrl+Z in the editor undoes. The button's
    // press is kept and the fault made on its release, wherever the browser
    // fires contextmenu (on the press here, on the release elsewhere).
    let rightFrom = null, rightDone = -Infinity; // when a release last made a fault
    function breakAt(from, to, shift) {
      const line = api.web_fault_drag(from[0], to[0], from[1], shift ? 1 : 0);
      if (!line) { flash("right-click a client's or a server's lane to pause it there (shift: crash it)"); return; }
      const bytes = new TextEncoder().encode(current.text);
      const at = api.web_fault_place(current.text);
      const dec = new TextDecoder();
      let before = dec.decode(bytes.subarray(0, at));
      if (before && !before.endsWith("\n")) before += "\n";
      const text = before + line + "   # added by a click\n" + dec.decode(bytes.subarray(at));
      const ed = $("editor");
      ed.focus(); ed.select();
      // through the editor's own undo: Ctrl+Z in it takes the line out again
      if (!document.execCommand || !document.execCommand("insertText", false, text)) ed.value = text;
      current.text = ed.value;
      if (run(true)) flash("added " + line + " (Ctrl+Z in the scenario text undoes)");
    }
    canvas.addEventListener("mousedown", (e) => { if (e.button === 2) rightFrom = pos(e); });
    window.addEventListener("mouseup", (e) => {
      if (e.button !== 2 || !rightFrom) return;
      const from = rightFrom;
      rightFrom = null;
      rightDone = performance.now();
      breakAt(from, pos(e), e.shiftKey);
    });
    canvas.addEventListener("contextmenu", (e) => {
      e.preventDefault();
      // decided on the release (above); a contextmenu without a press (a
      // keyboard's menu key, a script) is a click where it points
      if (rightFrom || performance.now() - rightDone < 500) return;
      const p = pos(e);
      breakAt(p, p, e.shiftKey);
    });
    canvas.addEventListener("wheel", (e) => {
      if (e.shiftKey) return;
      e.preventDefault();
      api.web_zoom_at(e.deltaY < 0 ? 1.25 : 0.8, pos(e)[0]); redraw();
    }, { passive: false });
    window.addEventListener("resize", () => { dirty = true; });
    window.addEventListener("hashchange", () => { openFragment(); });
    // rows scrolled into view that the last drawing left out: drawn now, in
    // this scroll's frame (the command list is the frame's, built again)
    const sc = $("scroller");
    sc.addEventListener("scroll", () => {
      if (sc.scrollTop < drawn.y0 || sc.scrollTop + sc.clientHeight > drawn.y1) redraw();
    }, { passive: true });
  }

  // A passing message in the status line.
  let flashUntil = 0, flashText = "";
  function flash(s) {
    flashText = s; flashUntil = performance.now() + 5000;
    document.body.dataset.flash = s;
    words(roomH());
  }

  // ---- the worker: the matrix and the sweep off the main thread ----
  // One Web Worker made, as a Blob, from this page's own inlined engine (the
  // script "engine") and workerMain below: the page stays one file that works
  // from file:// with no network. The wasm bytes (inlined in the engine) are
  // compiled once here and the module handed to each worker, so a worker
  // stopped (terminated: a new edit, the stop button) is replaced at once.
  // One job at a time: a new one stops the one before.
  function workerMain() {
    let wapi = null;
    const queue = [];
    self.onmessage = (e) => {
      const d = e.data;
      if (!d.init) { if (wapi) work(d); else queue.push(d); return; }
      const opts = d.module ? {
        instantiateWasm: (imports, ok) => {
          WebAssembly.instantiate(d.module, imports).then((inst) => ok(inst, d.module));
          return {};
        } } : {};
      LocksimModule(opts).then((M) => {
        const s = "string", n = "number";
        wapi = { row: M.cwrap("web_matrix_row", s, [s, n]), step: M.cwrap("web_sweep_step", n, [n]),
                 begin: M.cwrap("web_sweep_begin", n, [s, s, s, s, s, s, s, s, s]),
                 svg: M.cwrap("web_sweep_svg", s, []), error: M.cwrap("web_sweep_error", s, []) };
        for (const q of queue.splice(0)) work(q);
      });
    };
    function work(d) {
      const post = (m) => self.postMessage(Object.assign({ id: d.id }, m));
      if (d.kind === "matrix") {
        for (let i = 0; i < d.total; i++) post({ progress: i + 1, total: d.total, row: wapi.row(d.text, i) });
        post({ done: true });
        return;
      }
      const total = wapi.begin(d.file, d.text, d.seed, d.sets, d.algos, d.xkey, d.xvals, d.ykey, d.yvals);
      if (total < 0) { post({ error: wapi.error() }); return; }
      // progress every 50 ms at most: the page's thread has other work
      for (let i = 0, at = 0; i < total; i++) {
        wapi.step(i);
        const now = performance.now();
        if (now - at > 50 || i + 1 === total) { post({ progress: i + 1, total }); at = now; }
      }
      post({ done: true, svg: wapi.svg() });
    }
  }
  let wasmModule = null, workerUrl = null, worker = null, job = null, jobSeq = 0;
  // The engine's wasm compiled off the main thread (its data: URL fetched and
  // compiled asynchronously: decoding it here would hold the page ~0.3 s).
  function compiledWasm() {
    if (!wasmModule) {
      const m = /data:application\/octet-stream;base64,[A-Za-z0-9+/=]+/.exec($("engine").textContent);
      wasmModule = m ? fetch(m[0]).then((r) => r.arrayBuffer()).then((b) => WebAssembly.compile(b)).catch(() => null)
        : Promise.resolve(null); // then the worker decodes the engine's own copy
    }
    return wasmModule;
  }
  // The worker's script as a Blob's URL, made once (after the page is ready):
  // every worker, also after a stop, starts from it.
  function workerScript() {
    if (!workerUrl) {
      const src = $("engine").textContent + "\n;(" + workerMain.toString() + ")();\n";
      workerUrl = URL.createObjectURL(new Blob([src], { type: "text/javascript" }));
    }
    return workerUrl;
  }
  // job: { onProgress(d), onDone(d), onError(text), onStop(why) }
  function startJob(msg, handlers) {
    stopJob("stopped");
    if (!worker) {
      const w = (worker = new Worker(workerScript()));
      w.onmessage = (e) => {
        const d = e.data;
        if (!job || w !== worker || d.id !== job.id) return;
        const j = job;
        if (d.error || d.done) job = null;
        if (d.error) j.onError(d.error); else if (d.done) j.onDone(d); else j.onProgress(d);
      };
      w.onerror = (e) => { if (job && w === worker) { const j = job; job = null; j.onError("the worker failed: " + e.message); } };
      compiledWasm().then((m) => w.postMessage({ init: 1, module: m }));
    }
    job = Object.assign({ id: ++jobSeq }, handlers);
    worker.postMessage(Object.assign({ id: job.id }, msg));
  }
  function stopJob(why) {
    if (!job) return;
    worker.terminate();
    worker = null;
    const j = job;
    job = null;
    j.onStop(why);
  }
  let matrixShown = false, matrixText = null; // the matrix shown (or coming) is of matrixText
  // A new run: a sweep under way stops (its runs were of the scenario before);
  // the matrix plays the text alone, so only a new text stops and redoes it.
  function scenarioChanged() {
    if (job && (job.kind === "sweep" || matrixText !== current.text)) stopJob("stopped: the scenario changed");
    if (matrixText !== current.text) matrixShown = false;
    fillSweep();
    if (!$("tab-matrix").hidden) matrix();
  }

  function matrix() {
    if (matrixShown) return;
    matrixShown = true;
    matrixText = current.text;
    const t = $("matrix"), prog = $("matrix-progress"), total = algoNames.length, t0 = performance.now();
    t.innerHTML = "";
    prog.textContent = "0 of " + total + " algorithms";
    delete document.body.dataset.matrixMs;
    startJob({ kind: "matrix", text: current.text, total }, {
      kind: "matrix",
      onProgress: (d) => {
        const [name, verdict, why] = d.row.split("\t");
        const tr = document.createElement("tr");
        tr.dataset.row = d.row;
        for (const [v, cls] of [[name, ""], [verdict, verdict], [why, ""]]) {
          const td = document.createElement("td"); td.textContent = v; if (cls) td.className = cls; tr.appendChild(td);
        }
        t.appendChild(tr);
        prog.textContent = d.progress + " of " + d.total + " algorithms";
      },
      onDone: () => { document.body.dataset.matrixMs = (performance.now() - t0).toFixed(1); },
      onError: (e) => { prog.textContent = e; matrixShown = false; },
      onStop: (why) => { prog.textContent += " (" + why + ")"; matrixShown = false; },
    });
  }

  // ---- the sweep tab: one or two params over their range=, as `locksim sweep` ----
  const SWEEP_MAX_STEPS = 12;
  const paramRows = () => api.web_params().split("\n").filter((l) => l).map((l) => l.split("\t")).filter((r) => r[2] !== "-");
  function fillSweep() {
    const rows = paramRows(), xs = $("sweep-x"), ys = $("sweep-y");
    const key = rows.map((r) => r[0] + r[2] + r[3] + r[4]).join("|");
    if (xs.dataset.key === key) return;
    xs.dataset.key = key;
    const keepX = xs.value, keepY = ys.value;
    xs.innerHTML = ""; ys.innerHTML = '<option value="">(one axis)</option>';
    for (const r of rows) {
      for (const sel of [xs, ys]) { const o = document.createElement("option"); o.value = o.textContent = r[0]; sel.appendChild(o); }
    }
    if (rows.some((r) => r[0] === keepX)) xs.value = keepX;
    if (rows.some((r) => r[0] === keepY)) ys.value = keepY;
    $("sweep-run").disabled = rows.length === 0;
    $("sweep-progress").textContent = rows.length ? "" : "this scenario has no param with a range= to sweep";
  }
  // n values of a param's range, evenly spaced from its low end: a count's
  // integers (fewer when the range has fewer), a duration's in a step cut to
  // two significant digits, named as the binary names durations.
  function axisValues(row, n) {
    const lo = Number(row[3]), hi = Number(row[4]);
    if (n < 2 || hi <= lo) return [row[2] === "d" ? api.web_format_duration(lo) : String(lo)];
    if (row[2] === "i") {
      const step = Math.max(1, Math.floor((hi - lo) / (n - 1))), out = [];
      for (let v = lo; v <= hi && out.length < n; v += step) out.push(String(v));
      return out;
    }
    let step = (hi - lo) / (n - 1);
    const unit = Math.pow(10, Math.floor(Math.log10(step)) - 1);
    step = Math.max(1, Math.floor(step / unit) * unit);
    return Array.from({ length: n }, (_, k) => api.web_format_duration(lo + k * step));
  }
  function sweep() {
    const rows = paramRows();
    const px = rows.find((r) => r[0] === $("sweep-x").value);
    const py = rows.find((r) => r[0] === $("sweep-y").value && r !== px);
    if (!px) return;
    const steps = Math.min(SWEEP_MAX_STEPS, Math.max(2, parseInt($("sweep-steps").value, 10) || 8));
    $("sweep-steps").value = steps;
    const xv = axisValues(px, steps), yv = py ? axisValues(py, steps) : [];
    const algos = [...$("sweep-algos").selectedOptions].map((o) => o.value);
    const sets = Object.entries(current.sets).filter(([k]) => k !== px[0] && (!py || k !== py[0]));
    const req = { kind: "sweep", file: (current.name || "scenario") + ".lsim", text: current.text, seed: current.seed,
                  sets: sets.map(([k, v]) => k + "=" + v).join("\n"), algos: algos.join("\n"),
                  xkey: px[0], xvals: xv.join("\n"), ykey: py ? py[0] : "", yvals: yv.join("\n") };
    const state = (window.locksim.sweep = { request: req, svg: "", ms: 0 });
    const bar = $("sweep-bar"), prog = $("sweep-progress"), t0 = performance.now();
    bar.value = 0; prog.textContent = "starting";
    $("sweep-stop").disabled = false;
    const finish = (text) => { prog.textContent = text; $("sweep-stop").disabled = true; };
    startJob(req, {
      kind: "sweep",
      onProgress: (d) => { bar.max = d.total; bar.value = d.progress; prog.textContent = d.progress + " of " + d.total + " runs"; },
      onDone: (d) => {
        state.svg = d.svg; state.ms = performance.now() - t0;
        finish(prog.textContent + " in " + (state.ms / 1000).toFixed(1) + " s");
        $("sweep-out").innerHTML = d.svg;
        document.body.dataset.sweepMs = state.ms.toFixed(1);
      },
      onError: (e) => finish(e),
      onStop: (why) => finish(prog.textContent + " (" + why + ")"),
    });
  }

  // Play: the cursor moves with the wall clock; one frame per animation frame.
  function tick(now) {
    if (api.web_playing()) {
      api.web_play(Math.min(0.25, (now - lastTick) / 1000));
      dirty = true;
    }
    lastTick = now;
    if (dirty || roomW() !== lastWidth || roomH() !== lastHeight) redraw();
    requestAnimationFrame(tick);
  }

  // #selftest=catalog: every built-in scenario opened in the page, one line
  // each in the pre element "selftest", for tests/web_chromium.sh to hold
  // against the native binary and for bench/web_bench.js's figures:
  // "NAME VERDICT DIGEST OPEN EDIT RUN PAGE SCENE PAINT RASTER LAYOUT WORST WORDS",
  // times in ms. OPEN: the scenario opened from the list and shown whole
  // (canvas resized); EDIT: then an edit of its text (a newline at its end
  // put in or taken out: a new text, run again) at its last event, the whole
  // run drawn, as typing in the editor does once its debounce is over (the
  // editor laid out before), until the canvas's pixels are made and the page
  // is laid out; RUN, PAGE, SCENE, PAINT its phases (run()
  // above), RASTER the canvas's pixels, LAYOUT the page's. #reps=K: the edit
  // K times, each figure the median of the K; WORST the slowest edit.
  function selftest() {
    const lines = [];
    const reps = Math.max(1, parseInt((/[#&]reps=(\d+)/.exec(location.hash) || [0, "1"])[1], 10));
    const mid = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
    const settle = () => { // a canvas's drawing is rastered when read; reading a size lays the page out
      const t0 = performance.now();
      $("timeline").getContext("2d").getImageData(0, 0, 1, 1);
      const t1 = performance.now();
      const h = document.body.offsetHeight;
      phase.raster = t1 - t0; phase.layout = performance.now() - t1;
      return h;
    };
    const names = LOCKSIM_CATALOG.groups.flatMap((g) => g.scenarios).filter((n, i, a) => a.indexOf(n) === i).sort();
    for (const n of names) {
      const text = api.web_scenario_text(n), t0 = performance.now();
      const ok = openScenario(n, text);
      if (ok) { api.web_key("a"); redraw(); }
      settle();
      const open = performance.now() - t0;
      const verdict = ok ? api.web_verdict() : "ERROR", digest = api.web_trace_hash();
      const ph = [[], [], [], [], [], [], []];
      for (let k = 0; ok && k < reps; k++) {
        api.web_key("End");
        current.text = $("editor").value = k % 2 ? text : text + "\n";
        settle(); // the keystroke's own frame: the editor laid out, before the debounced run
        const a0 = performance.now();
        run(true);
        settle();
        ph[0].push(performance.now() - a0);
        for (const [i, v] of [phase.run, phase.page, phase.scene, phase.paint, phase.raster, phase.layout].entries()) ph[i + 1].push(v);
      }
      lines.push([n, verdict, digest, open.toFixed(3), ...ph.map((a) => (a.length ? mid(a) : 0).toFixed(3)),
                  Math.max(0, ...ph[0]).toFixed(3), phase.words].join(" "));
    }
    const pre = document.createElement("pre");
    pre.id = "selftest";
    pre.textContent = lines.join("\n") + "\n";
    document.body.appendChild(pre);
  }

  LocksimModule().then(async (mod) => {
    M = mod;
    wrap();
    window.locksim = { api, current, wholeCanvas }; // for scripts and tests: the page's own functions
    fillControls();
    wire();
    if (/selftest=catalog/.test(location.hash)) selftest();
    await openFragment();
    document.body.dataset.ready = "1";
    document.body.dataset.readyMs = performance.now().toFixed(1); // from navigation start: the first timeline drawn
    requestAnimationFrame((t) => { lastTick = t; tick(t); });
    setTimeout(() => { compiledWasm(); workerScript(); }, 500); // the worker's parts, before it is asked for
  });
})();
