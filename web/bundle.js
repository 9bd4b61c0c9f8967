// Assembles build/web/locksim.html, one self-contained file (`make web`):
// web/page.html with web/page.css, the catalog (every scenarios/*.lsim name and
// title, grouped by the sections of docs/scenarios.md that name it, and the
// lab handouts' groups of docs/labs/README.md), emcc's
// output (the wasm inlined) and web/page.js. Usage:
//   node web/bundle.js ENGINE.js OUT.html
"use strict";
const fs = require("fs");
const path = require("path");
const [engineJs, out] = process.argv.slice(2);
if (!engineJs || !out) {
  console.error("usage: node web/bundle.js ENGINE.js OUT.html");
  process.exit(64);
}
const root = path.join(__dirname, "..");
const read = (p) => fs.readFileSync(path.join(root, p), "utf8");

// The catalog: titles from each file's `title "..."` line.
const names = fs.readdirSync(path.join(root, "scenarios")).filter((f) => f.endsWith(".lsim")).map((f) => f.slice(0, -5)).sort();
const titles = {};
for (const n of names) {
  const m = /^title\s+"((?:[^"\\]|\\.)*)"/m.exec(read("scenarios/" + n + ".lsim"));
  if (m) titles[n] = m[1].replace(/\\(.)/g, "$1");
}
// Groups: the "## " sections of docs/scenarios.md, each with the scenarios it
// names (`NAME.lsim`), in order; the seed's story first; the rest under "More".
const groups = [{ title: "The seed's story", scenarios: ["gc-pause-outlives-lease", "fencing-rejects-stale-write"] }];
let g = null;
for (const line of read("docs/scenarios.md").split("\n")) {
  const h = /^## (.*)/.exec(line);
  if (h) { g = { title: h[1].replace(/`/g, ""), scenarios: [] }; groups.push(g); continue; }
  if (!g) continue;
  for (const m of line.matchAll(/([a-z0-9][a-z0-9-]*)\.lsim/g))
    if (names.includes(m[1]) && !g.scenarios.includes(m[1])) g.scenarios.push(m[1]);
}
// The lab handouts (docs/labs/README.md's table: handout, scenarios, knobs),
// one group each after the seed's story, their scenarios there again.
const labs = [];
for (const line of read("docs/labs/README.md").split("\n")) {
  const m = /^\| \[([^\]]+)\]\([^)]*\) \| ([^|]*) \| ([^|]*) \|$/.exec(line);
  if (!m) continue;
  const scenarios = [...m[2].matchAll(/([a-z0-9][a-z0-9-]*)\.lsim/g)].map((x) => x[1]).filter((n) => names.includes(n));
  const knobs = m[3].replace(/`/g, "").trim();
  if (scenarios.length) labs.push({ title: "Lab " + m[1] + " (knobs: " + knobs + ")", scenarios, lab: true });
}
groups.splice(1, 0, ...labs);
const listed = new Set(groups.flatMap((x) => x.scenarios));
groups.push({ title: "More", scenarios: names.filter((n) => !listed.has(n)) });
const catalog = { groups: groups.filter((x) => x.scenarios.length), titles };

const safe = (s) => s.replace(/<\/(script)/gi, "<\\/$1");
let html = read("web/page.html");
const put = (mark, text) => {
  const i = html.indexOf(mark);
  if (i < 0) throw new Error("web/page.html has no " + mark);
  html = html.slice(0, i) + text + html.slice(i + mark.length);
};
put("/*@CSS@*/", read("web/page.css"));
put("/*@CATALOG@*/", "const LOCKSIM_CATALOG = " + safe(JSON.stringify(catalog)) + ";");
put("/*@ENGINE@*/", safe(fs.readFileSync(engineJs, "utf8")));
put("/*@PAGE@*/", safe(read("web/page.js")));
const tmp = out + ".tmp";
fs.writeFileSync(tmp, html);
fs.renameSync(tmp, out);
console.log("web: " + out + ", " + html.length + " bytes, " + names.length + " scenarios in " + catalog.groups.length + " groups");
