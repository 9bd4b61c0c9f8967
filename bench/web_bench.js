// The web page's figures in real Chromium time (not the virtual time the tests
// use): the page's size, the time from opening it to its first drawn timeline,
// and a re-run plus redraw of every catalog scenario in the page (each run is
// followed by a frame of 1280 px), against the native binary's run of the same
// scenarios (`locksim check`, the same engine built natively): a same-run ratio.
// Drives headless Chromium over its DevTools pipe (fd 3 and 4), no packages.
// Usage: node bench/web_bench.js PAGE.html LOCKSIM_BIN [OPENINGS]
"use strict";
const { execFileSync } = require("child_process");
const fs = require("fs");
const path = require("path");
const cdp = require("../tests/cdp.js");

const [page, bin, openingsArg] = process.argv.slice(2);
if (!page || !bin) { console.error("usage: node bench/web_bench.js PAGE.html LOCKSIM_BIN [OPENINGS]"); process.exit(64); }
const openings = parseInt(openingsArg || "5", 10);
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
    const text = await b.load(url + "#selftest=catalog", "document.getElementById('selftest') && document.getElementById('selftest').textContent");
    const rows = text.trim().split("\n").map((l) => l.split(" "));
    const run = rows.map((r) => parseFloat(r[3])), frame = rows.map((r) => parseFloat(r[4]));
    const both = rows.map((r, i) => run[i] + frame[i]);
    const again = rows.map((r) => parseFloat(r[5]));
    const over = rows.filter((r, i) => again[i] > 16).map((r) => r[0]);
    console.log("  opening a catalog scenario (run, canvas resized, painted): median " + median(both).toFixed(2) +
                " ms, p95 " + pct(both, 0.95).toFixed(2) + " ms, worst " + Math.max(...both).toFixed(2) + " ms");
    console.log("    of which the run: median " + median(run).toFixed(2) + " ms; the frame: median " + median(frame).toFixed(2) + " ms");
    console.log("  re-run + redraw as an edit does (same canvas): median " + median(again).toFixed(2) + " ms, p95 " +
                pct(again, 0.95).toFixed(2) + " ms, worst " + Math.max(...again).toFixed(2) + " ms over " + rows.length +
                " scenarios (" + over.length + " over 16 ms" + (over.length ? ": " + over.slice(0, 5).join(", ") : "") +
                "; target: under 16 ms)");
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
