// Headless Chromium driven over its DevTools pipe (fd 3 and 4), for the web
// page's test (tests/web_chromium.sh) and bench (bench/web_bench.js): real
// time, the page waited for by a condition, no packages beyond node.
"use strict";
const { spawn, execFileSync } = require("child_process");
const fs = require("fs");
const path = require("path");
const os = require("os");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function findChrome() {
  return ["chromium", "chromium-browser", "google-chrome"].find((c) => {
    try { execFileSync("sh", ["-c", "command -v " + c], { stdio: "ignore" }); return true; } catch (e) { return false; }
  });
}

// open(): a browser with one page; returns { evaluate, load, close }.
async function open(opts) {
  const chrome = findChrome();
  if (!chrome) throw new Error("no chromium");
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "locksim-cdp-"));
  const args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                "--user-data-dir=" + profile, "about:blank"];
  if (opts && opts.size) args.unshift("--window-size=" + opts.size);
  const proc = spawn(chrome, args, { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] });
  const toChrome = proc.stdio[3], fromChrome = proc.stdio[4];
  let id = 0, buf = "";
  const waiting = new Map();
  fromChrome.on("data", (d) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf("\0")) >= 0) {
      const msg = JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
      if (msg.id && waiting.has(msg.id)) { waiting.get(msg.id)(msg); waiting.delete(msg.id); }
    }
  });
  const send = (method, params, sessionId) => {
    const m = { id: ++id, method, params: params || {} };
    if (sessionId) m.sessionId = sessionId;
    return new Promise((res, rej) => {
      waiting.set(m.id, (r) => (r.error ? rej(new Error(method + ": " + r.error.message)) : res(r.result)));
      toChrome.write(JSON.stringify(m) + "\0");
    });
  };
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  await send("Page.enable", {}, sessionId);
  // The page's own viewport exactly W x H (a headless window's size counts
  // its absent frame: --window-size=1280,720 alone leaves 1280x633).
  if (opts && opts.size) {
    const [w, h] = opts.size.split(",").map(Number);
    await send("Emulation.setDeviceMetricsOverride", { width: w, height: h, deviceScaleFactor: 1, mobile: false }, sessionId);
  }
  const evaluate = async (expr) => {
    const r = await send("Runtime.evaluate", { expression: expr, returnByValue: true, awaitPromise: true }, sessionId);
    return r.result.value;
  };
  // load(url, until): a new document at url, then until (a JS expression)
  // polled for 30 s; returns its value.
  const load = async (url, until) => {
    await send("Page.navigate", { url: "about:blank" }, sessionId);
    await sleep(100);
    await send("Page.navigate", { url }, sessionId);
    for (let i = 0; i < 600; i++) {
      await sleep(50);
      const v = await evaluate(until).catch(() => null);
      if (v) return v;
    }
    throw new Error("the page did not get ready: " + url);
  };
  const screenshot = async (file) => {
    const r = await send("Page.captureScreenshot", { format: "png" }, sessionId);
    fs.writeFileSync(file, Buffer.from(r.data, "base64"));
  };
  const close = async () => {
    proc.kill();
    await new Promise((r) => proc.once("exit", r));
    for (let i = 0; i < 20; i++) { // its helper processes may still write for a moment
      try { fs.rmSync(profile, { recursive: true, force: true }); break; } catch (e) { await sleep(100); }
    }
  };
  return { evaluate, load, screenshot, close };
}

module.exports = { open, sleep, findChrome };

// As a command: node tests/cdp.js URL [SHOT.png] [JS] [UNTIL]: the page opened
// until its body says data-ready, JS (if given) evaluated in it, UNTIL (a JS
// expression, if given) polled for 60 s until it is true, then one JSON
// object on stdout: the body's data attributes, the text of #verdict,
// #trace-hash, #error, #selftest and the editor's, and UNTIL's value.
// CDP_SIZE=W,H sets the page's viewport (1280,720), and so the screenshot's size.
if (require.main === module) {
  const [url, shot, js, until] = process.argv.slice(2);
  (async () => {
    const b = await open({ size: process.env.CDP_SIZE || "1280,720" });
    try {
      await b.load(url, "document.body && document.body.dataset.ready");
      if (js) { await b.evaluate(js); await sleep(300); }
      let got = null;
      for (let i = 0; until && i < 1200 && !got; i++) { got = await b.evaluate(until).catch(() => null); if (!got) await sleep(50); }
      const out = await b.evaluate(`JSON.stringify({ data: Object.assign({}, document.body.dataset),
        verdict: document.getElementById("verdict").textContent,
        trace_hash: document.getElementById("trace-hash").textContent,
        error: document.getElementById("error").hidden ? "" : document.getElementById("error").textContent,
        selftest: document.getElementById("selftest") ? document.getElementById("selftest").textContent : "",
        editor: document.getElementById("editor").value,
        knobs: [...document.querySelectorAll("#knobs > div")].map((d) => d.dataset.param + "=" +
          d.querySelector(".v").textContent).join(" ") })`);
      const o = JSON.parse(out);
      o.until = got;
      if (shot && shot !== "-") await b.screenshot(shot);
      console.log(JSON.stringify(o));
    } finally {
      await b.close();
    }
  })().catch((e) => { console.error("cdp: " + e.message); process.exitCode = 1; });
}
