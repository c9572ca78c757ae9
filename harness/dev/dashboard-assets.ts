import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

// The dashboard's static files. Its own CSS and script are strings here, so they ship in the package's
// dist with the rest (no build step, no front-end toolchain at run time); htmx and its SSE extension are
// served from their npm packages, dependencies of this one: nothing comes from a CDN.

const fromPackages = createRequire(import.meta.url);

const CSS = `
:root { font: 14px/1.4 system-ui, sans-serif; color: #1b1f24; background: #f6f8fa; }
body { margin: 0; }
header { display: flex; gap: 1rem; align-items: baseline; padding: .5rem 1rem; background: #1b1f24; color: #fff; }
header h1 { font-size: 1.1rem; margin: 0; }
main { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 1fr); gap: 1rem; padding: 1rem; }
main > section:first-child { grid-row: span 2; }
@media (max-width: 800px) { main { grid-template-columns: minmax(0, 1fr); } main > section:first-child { grid-row: auto; } }
section { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; padding: .5rem 1rem; }
h2 { font-size: 1rem; }
.filters { display: flex; gap: 1rem; margin-bottom: .5rem; }
.op { border-top: 1px solid #d0d7de; padding: .25rem 0; }
.op summary { cursor: pointer; overflow-wrap: anywhere; }
.state { display: inline-block; min-width: 6.5em; padding: 0 .4em; border-radius: 3px; color: #fff; background: #57606a; text-align: center; }
.state[data-state="processing"] { background: #6f42c1; }
.state[data-state="submitted"] { background: #0969da; }
.state[data-state="included"] { background: #1b7c83; }
.state[data-state="confirmed"] { background: #1a7f37; }
.state[data-state="rejected"], .state[data-state="reverted"], .state[data-state="expired"] { background: #cf222e; }
.failure .code, summary .code { color: #a40e26; font-weight: 600; }
.spent, .detail { color: #57606a; }
table { border-collapse: collapse; margin: .25rem 0; }
caption { text-align: left; color: #57606a; }
th, td { padding: 0 .5rem; text-align: left; }
code { font-size: .9em; }
button { margin: .15rem; font: inherit; cursor: pointer; }
button.copy { font-size: .75em; padding: 0 .3em; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; margin: 0; }
dt { color: #57606a; }
dd { margin: 0; overflow-wrap: anywhere; }
.ready[data-ready="true"] { color: #1a7f37; font-weight: 600; }
.ready[data-ready="false"] { color: #a40e26; font-weight: 600; }
pre { overflow: auto; max-height: 20rem; }
`;

const SCRIPT = `
"use strict";
(function () {
  // Times relative ("12 s ago"), the absolute one in their title.
  function ago(iso) {
    var s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    return s < 60 ? s + " s ago" : s < 3600 ? Math.floor(s / 60) + " min ago" : Math.floor(s / 3600) + " h ago";
  }
  function refreshTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (t) { t.textContent = ago(t.getAttribute("datetime")); });
  }
  function applyFilters() {
    var form = document.getElementById("filters");
    if (!form) return;
    var kind = form.elements.kind.value, state = form.elements.state.value;
    document.querySelectorAll("#ops > .op").forEach(function (op) {
      op.hidden = (kind && op.dataset.kind !== kind) || (state && op.dataset.state !== state);
    });
  }
  function show(text) { document.getElementById("control-result").textContent = text; }
  document.addEventListener("DOMContentLoaded", function () {
    document.getElementById("filters").addEventListener("change", applyFilters);
    setInterval(function () { refreshTimes(document); }, 1000);
  });
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button");
    if (!button) return;
    if (button.dataset.copy) { navigator.clipboard.writeText(button.dataset.copy).then(function () { show("copied " + button.dataset.copy); }, function () { show("copy refused by the browser"); }); return; }
    if (!button.dataset.post) return;
    button.disabled = true;
    fetch(button.dataset.post, { method: "POST", headers: { "content-type": "application/json" }, body: button.dataset.body })
      .then(function (response) { return response.text().then(function (text) { show(button.textContent + ": " + (response.ok ? "done" : response.status + " " + text)); }); })
      .catch(function (error) { show(button.textContent + ": " + error.message); })
      .finally(function () { button.disabled = false; });
  });
  // An operation replaced by its change keeps the reader's open timeline open.
  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    var target = event.detail.target, fragment = event.detail.fragment;
    var details = fragment && (fragment.tagName === "DETAILS" ? fragment : fragment.querySelector && fragment.querySelector("details"));
    if (target && target.open && details) details.open = true;
  });
  document.addEventListener("htmx:afterSettle", function () { refreshTimes(document); applyFilters(); });
  document.addEventListener("htmx:oobAfterSwap", function () { refreshTimes(document); applyFilters(); });
  document.addEventListener("htmx:sseOpen", function () { document.getElementById("connection").textContent = "live"; });
  document.addEventListener("htmx:sseError", function () { document.getElementById("connection").textContent = "reconnecting…"; });
})();
`;

export interface Asset {
  type: string;
  body: string | Buffer;
}

/** The files under /api/dev/dashboard/assets/, by name; read once, on first use. */
export function dashboardAssets(): Map<string, Asset> {
  return new Map<string, Asset>([
    ["dashboard.css", { type: "text/css; charset=utf-8", body: CSS }],
    ["dashboard.js", { type: "text/javascript; charset=utf-8", body: SCRIPT }],
    ["htmx.min.js", { type: "text/javascript; charset=utf-8", body: readFileSync(fromPackages.resolve("htmx.org/dist/htmx.min.js")) }],
    ["sse.min.js", { type: "text/javascript; charset=utf-8", body: readFileSync(fromPackages.resolve("htmx-ext-sse/dist/sse.min.js")) }],
  ]);
}
