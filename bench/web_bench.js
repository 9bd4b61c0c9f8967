// The web page's figures in real Chromium time (not the virtual time the tests
// use): the page's size, the time from opening it to its first drawn timeline,
// and a re-run plus redraw of every catalog scenario in the page as an edit in
// its editor does (split into the run, the page's text, the scene, the canvas's
// drawing, its pixels and the page's layout), against the native binary's run
// of the same scenarios (`locksim check`, the same engine): a same-run ratio.
// WEB_BENCH_EDITS=K: edits of each scenario (7), its figures their median.
// Drives headless Chromium over its DevTools pipe (fd 3 and 4), no packages.
// Usage: node bench/web_bench.js PAGE.html LOCKSIM_BIN [OPENINGS]
"use strict";
const { execFileSync } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");
const cdp = require("../tests/cdp.js");

const [page, bin, openingsArg] = process.argv.slice(2);
if (!page || !bin) { console.error("usage: node bench/web_bench.js PAGE.html LOCKSIM_BIN [OPENINGS]"); process.exit(64); }
const openings = parseInt(openingsArg || "5", 10);
const reps = parseInt(process.env.WEB_BENCH_EDITS || "7", 10); // edits of each scenario
const url = "file://" + path.resolve(page);
if (!cdp.findChrome()) { console.log("web bench: no chromium; skipped"); process.exit(0); }
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(s.length * p))]; };

(async () => {
  const b = await cdp.open({ size: "1280,720" });
  try {
    const size = fs.statSync(page).size;
    console.log("web bench: " + page + ", " + (size / 1048576).toFixed(2) + " MiB as one file (target: under 1 MiB)");
    const ready = [];
    for (let i = 0; i < openings; i++) {
      ready.push(parseFloat(await b.load(url + "#scenario=gc-pause-outlives-lease", "document.body.dataset.readyMs")));
    }
    console.log("  opening to the first drawn timeline: median " + median(ready).toFixed(0) + " ms, worst " +
                Math.max(...ready).toFixed(0) + " ms over " + openings + " openings (target: under 1000 ms)");
    // Every catalog scenario opened, then edited REPS times (web/page.js's
    // selftest: the columns are its own), in real time: each scenario's
    // figures are the median of its edits, so a moment the scheduler gave
    // the 2 cores to other work counts in the worst edit, not in all.
    const load0 = os.loadavg()[0];
    const text = await b.load(url + "#selftest=catalog&reps=" + reps,
                              "document.getElementById('selftest') && document.getElementById('selftest').textContent");
    const load1 = os.loadavg()[0];
    const rows = text.trim().split("\n").map((l) => l.split(" "));
    const col = (k) => rows.map((r) => parseFloat(r[k]));
    const open = col(3), edit = col(4), worst = col(11);
    const phases = [["the run", 5], ["the page's text", 6], ["the scene", 7], ["the canvas's drawing", 8],
                    ["its pixels", 9], ["the page's layout", 10]];
    const over = rows.filter((r, i) => edit[i] > 16).map((r) => r[0]);
    const overOnce = worst.filter((w) => w > 16).length;
    console.log("  opening a catalog scenario (run, canvas resized, painted, rastered): median " + median(open).toFixed(2) +
                " ms, p95 " + pct(open, 0.95).toFixed(2) + " ms, worst " + Math.max(...open).toFixed(2) + " ms");
    console.log("  re-run + redraw as an edit does (the text changed, the whole run drawn, until pixels and layout; each " +
                "scenario's median of " + reps + " edits): median " + median(edit).toFixed(2) + " ms, p95 " +
                pct(edit, 0.95).toFixed(2) + " ms, worst " + Math.max(...edit).toFixed(2) + " ms over " + rows.length +
                " scenarios; " + over.length + " over 16 ms" + (over.length ? " (" + over.slice(0, 6).join(", ") +
                (over.length > 6 ? ", ..." : "") + ")" : "") + " (target: under 16 ms)");
    console.log("    split (medians over the scenarios; the slowest scenario's in brackets): " + phases.map(([name, k]) => {
      const v = col(k), slow = edit.indexOf(Math.max(...edit));
      return name + " " + median(v).toFixed(2) + " [" + v[slow].toFixed(1) + "]";
    }).join(", ") + "; the slowest: " + rows[edit.indexOf(Math.max(...edit))][0]);
    console.log("    single edits over 16 ms: in " + overOnce + " of " + rows.length + " scenarios at least once; the slowest single edit " +
                Math.max(...worst).toFixed(1) + " ms; load average " + load0.toFixed(1) + " before, " + load1.toFixed(1) +
                " after (" + os.cpus().length + " cores)");
    const run = col(5);
    // The sweep tab: a 10x10 of pause and ttl on the seed's story in the page's
    // Web Worker (the worker's start included), and the longest gap of a 10 ms
    // timer on the main thread meanwhile; the same sweep natively.
    const sweepMs = [], gaps = [];
    for (let k = 0; k < 3; k++) {
      await b.load(url + "#scenario=gc-pause-outlives-lease", "document.body.dataset.ready");
      const got = JSON.parse(await b.evaluate(`new Promise((done) => {
        let last = performance.now(), gap = 0;
        const timer = setInterval(() => { const t = performance.now(); gap = Math.max(gap, t - last); last = t; }, 10);
        document.querySelector("[data-tab=sweep]").click();
        document.getElementById("sweep-x").value = "pause"; document.getElementById("sweep-y").value = "ttl";
        document.getElementById("sweep-steps").value = "10";
        document.getElementById("sweep-run").click();
        const poll = setInterval(() => { if (!document.body.dataset.sweepMs) return;
          clearInterval(poll); clearInterval(timer);
          done(JSON.stringify({ ms: parseFloat(document.body.dataset.sweepMs), gap })); }, 20);
      })`));
      sweepMs.push(got.ms); gaps.push(got.gap);
    }
    const s0 = process.hrtime.bigint();
    try { // its pause=0s column is an error row, and the exit status says so
      execFileSync(bin, ["sweep", "scenarios/gc-pause-outlives-lease.lsim", "--vary", "pause=0s..54s/6s", "--vary", "ttl=1s..55s/6s",
                         "--jobs", "1"], { stdio: "ignore" });
    } catch (e) { /* the cells are the tests' */ }
    const nativeSweep = Number(process.hrtime.bigint() - s0) / 1e6;
    console.log("  sweep tab, 10x10 (100 runs) of pause and ttl on gc-pause-outlives-lease in the Web Worker: median " +
                median(sweepMs).toFixed(0) + " ms over 3 (worker start included); the main thread's 10 ms timer's longest gap " +
                Math.max(...gaps).toFixed(0) + " ms; natively (--jobs 1) " + nativeSweep.toFixed(0) + " ms");
    // The same scenarios run natively, in this same run of the bench.
    const scen = fs.readdirSync("scenarios").filter((f) => f.endsWith(".lsim")).map((f) => "scenarios/" + f);
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < 3; k++) { try { execFileSync(bin, ["check", "--quiet", ...scen], { stdio: "ignore" }); } catch (e) { /* verdicts are the tests' */ } }
    const nativeMs = Number(process.hrtime.bigint() - t0) / 1e6 / 3 / scen.length;
    const pageMean = run.reduce((a, b) => a + b, 0) / run.length;
    console.log("  native run (locksim check, with golden traces): " + nativeMs.toFixed(2) + " ms a scenario; the page's run " +
                pageMean.toFixed(2) + " ms a scenario: " + (pageMean / nativeMs).toFixed(2) + "x native");
  } catch (e) {
    console.error("web bench: " + e.message);
    process.exitCode = 1;
  } finally {
    await b.close();
  }
})();
