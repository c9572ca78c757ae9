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
header p { margin: 0; }
main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1rem; padding: 1rem; align-items: start; }
.column { display: flex; flex-direction: column; gap: 1rem; min-width: 0; }
/* A phone: one column, what changes most first (operations, health), then controls, the Pool, the manifest. */
@media (max-width: 800px) {
  main { grid-template-columns: minmax(0, 1fr); padding: .5rem; gap: .5rem; }
  .column { display: contents; }
  #ops-panel { order: 1; } #health-panel { order: 2; } #controls-panel { order: 3; } #pool-panel { order: 4; } #accounts-panel { order: 5; } #manifest-panel { order: 6; }
}
section { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; padding: .5rem 1rem; min-width: 0; overflow-wrap: anywhere; }
h2 { font-size: 1rem; margin: .25rem 0 .5rem; }
.filters { display: flex; flex-wrap: wrap; gap: .25rem 1rem; margin-bottom: .5rem; }
/* Wide enough for its whole placeholder (it was cut at 1280 px), never wider than a phone's panel. */
.filters .find input { width: 17rem; max-width: 100%; box-sizing: border-box; }
.filters .find { max-width: 100%; }
.op { border-top: 1px solid #d0d7de; padding: .25rem 0; }
.patched { display: inline-block; margin: 0 .5em; padding: .1em .6em; border-radius: 1em; background: #8250df; color: #fff; font-weight: 600; }
.dev-proofs { display: inline-block; margin: 0 .5em; padding: .1em .6em; border-radius: 1em; background: #9a6700; color: #fff; font-weight: 600; }
.op summary { cursor: pointer; overflow-wrap: anywhere; }
.op .timeline { margin: .25rem 0; padding-left: 1.5rem; }
.state { display: inline-block; min-width: 6.5em; padding: 0 .4em; border-radius: 3px; color: #fff; background: #57606a; text-align: center; }
td .state { min-width: 0; }
/* The README's state colours (Operation states): grey waits for the relayer, purple is being signed, blue
   waits in the mempool, teal is mined, green is done, red failed; a reservation's states alike. */
.state[data-state="accepted"] { background: #57606a; }
.state[data-state="processing"] { background: #6f42c1; }
.state[data-state="submitted"], .state[data-state="pending"] { background: #0969da; }
.state[data-state="included"], .state[data-state="settled"] { background: #1b7c83; }
.state[data-state="confirmed"], .state[data-state="finalized"] { background: #1a7f37; }
.state[data-state="rejected"], .state[data-state="reverted"], .state[data-state="expired"], .state[data-state="failed"] { background: #cf222e; }
.failure, .failure .code, summary .code { color: #a40e26; }
.failure .code, summary .code { font-weight: 600; }
.spent, .detail, .empty { color: #57606a; }
.scope { margin: 0 0 .5rem; padding: .25rem .5rem; border-left: 3px solid #9a6700; background: #fff8c5; }
.banner { margin: 0; padding: .4rem 1rem; border-bottom: 2px solid #9a6700; background: #fff8c5; }
.counts { margin: 0 0 .5rem; display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: baseline; }
.counts .count { white-space: nowrap; }
.counts .state { min-width: 0; }
/* A table wider than its panel (a phone) scrolls sideways in its region; its words never break. */
.table-scroll { overflow-x: auto; max-width: 100%; margin: .25rem 0 .5rem; }
table { border-collapse: collapse; }
caption { text-align: left; color: #57606a; }
th, td { padding: 0 .5rem 0 0; text-align: left; overflow-wrap: normal; word-break: normal; vertical-align: top; }
th[scope="col"], th[scope="row"], .state { overflow-wrap: normal; white-space: nowrap; }
/* A shortened hash is one word: never broken (an ellipsis is a break opportunity otherwise). */
code[title] { white-space: nowrap; }
code { font-size: .9em; }
button, .button { margin: .15rem; font: inherit; cursor: pointer; }
.button { display: inline-block; padding: 1px 6px; border: 1px solid #8c959f; border-radius: 3px; background: #f6f8fa; color: #0550ae; }
button.copy { font-size: .75em; padding: 0 .3em; }
button.older { display: block; margin: .5rem auto; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .1rem 1rem; margin: 0 0 .5rem; }
dt { color: #57606a; }
dd { margin: 0; overflow-wrap: anywhere; }
.ready[data-ready="true"] { color: #1a7f37; font-weight: 600; }
.ready[data-ready="false"] { color: #a40e26; font-weight: 600; }
.ok[data-ok="true"] { color: #1a7f37; }
.ok[data-ok="false"] { color: #a40e26; font-weight: 600; }
pre { overflow: auto; max-height: 20rem; background: #f6f8fa; padding: .25rem; }
pre:empty { display: none; }
.replay-diff .added { color: #1a7f37; }
.replay-diff .removed { color: #a40e26; }
.controls fieldset { border: 1px solid #d0d7de; border-radius: 4px; margin: .25rem 0; padding: .1rem .5rem; display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: center; }
.controls legend { color: #57606a; }
.controls input { width: 9em; font: inherit; }
.controls input[name="methods"] { width: 16em; max-width: 100%; }
.controls .buttons { display: flex; flex-wrap: wrap; }
.networks { padding-left: 1.2rem; }
a { color: #0550ae; }
`;

const SCRIPT = `
"use strict";
(function () {
  // Times relative ("12 s ago"), the absolute one in their title.
  // A time still to come (a fault's end) is "in 12 s".
  function ago(iso) {
    var d = Math.round((Date.now() - Date.parse(iso)) / 1000), s = Math.abs(d);
    var span = s < 60 ? s + " s" : s < 3600 ? Math.floor(s / 60) + " min" : s < 172800 ? Math.floor(s / 3600) + " h" : Math.floor(s / 86400) + " d";
    return d < 0 ? "in " + span : span + " ago";
  }
  // Written only when it differs: the page refreshes every second, and a write of the same text still
  // makes the browser lay the page out again (an open dashboard would cost CPU for nothing).
  function setText(node, text) { if (node.textContent !== text) node.textContent = text; }
  function refreshTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (t) { setText(t, ago(t.getAttribute("datetime"))); });
    var head = document.getElementById("head-number");
    if (!head) return;
    root.querySelectorAll(".confirmations[data-block]").forEach(function (c) {
      // Counted up to the relayer's requirement, no further: past it the operation is confirmed.
      var required = Number(c.dataset.required), n = Math.min(required, Math.max(0, Number(head.textContent) - Number(c.dataset.block) + 1));
      setText(c, n + " of " + required + (required === 1 ? " confirmation" : " confirmations"));
    });
  }
  function list() { return document.getElementById("ops"); }
  // A pushed operation is filtered here as the server filters a page.
  function applyFilters() {
    var form = document.getElementById("filters");
    if (!form) return;
    var kind = form.elements.kind.value, state = form.elements.state.value, since = Number(form.elements.since.value || 0);
    var from = since ? Date.now() - since * 1000 : 0, q = form.elements.q.value.trim().toLowerCase();
    // The search: its id, or the hash of one of its signed attempts.
    function found(op) {
      return op.id.toLowerCase() === "op-" + q || Array.prototype.some.call(op.querySelectorAll(".attempts [data-copy]"), function (b) { return b.dataset.copy.toLowerCase() === q; });
    }
    list().querySelectorAll(":scope > .op").forEach(function (op) {
      var hidden = Boolean((kind && op.dataset.kind !== kind) || (state && op.dataset.state !== state) || (from && Date.parse(op.dataset.created) < from) || (q && !found(op)));
      if (op.hidden !== hidden) op.hidden = hidden;
    });
  }
  function show(text) { document.getElementById("control-result").textContent = text; }
  function parse(html) { var t = document.createElement("template"); t.innerHTML = html; return t.content.firstElementChild; }

  // Pushed operations pile up on top of the list; past this many entries the oldest are let go, behind an
  // "older operations" button from the last one kept (the server pages them again): a burst of a thousand
  // relays leaves the page as light as one page.
  var MOST_SHOWN = 100;
  function trim() {
    var ops = list().querySelectorAll(":scope > .op");
    if (ops.length <= MOST_SHOWN) return;
    for (var i = MOST_SHOWN; i < ops.length; i++) ops[i].remove();
    var last = ops[MOST_SHOWN - 1], form = document.getElementById("filters"), params = new URLSearchParams();
    new FormData(form).forEach(function (value, key) { if (value) params.set(key, value); });
    params.set("before", last.dataset.created + " " + last.id.slice(3));
    var old = list().querySelector(":scope > button.older");
    if (old) old.remove();
    var button = parse('<button type="button" class="older" hx-target="this" hx-swap="outerHTML">older operations</button>');
    button.setAttribute("hx-get", form.getAttribute("hx-get") + "?" + params.toString());
    list().appendChild(button);
    htmx.process(button);
  }

  // One operation's change: replaces its entry unless that is newer, or goes where its age puts it.
  function upsert(op) {
    if (!op || !op.id) return;
    var existing = document.getElementById(op.id);
    if (existing) {
      if (existing.dataset.version > op.dataset.version) return;
      op.open = existing.open;
      existing.replaceWith(op);
    } else {
      var ops = list().querySelectorAll(":scope > .op");
      var older = list().querySelector(":scope > button.older");
      // Older than the page shown: it comes with the older ones, when asked.
      if (older && ops.length && op.dataset.created < ops[ops.length - 1].dataset.created) return;
      var empty = list().querySelector(":scope > .empty");
      if (empty) empty.remove();
      var before = null;
      for (var i = 0; i < ops.length; i++) if (ops[i].dataset.created < op.dataset.created) { before = ops[i]; break; }
      list().insertBefore(op, before || older);
      trim();
    }
    htmx.process(op);
    refreshTimes(op);
    applyFilters();
  }
  document.addEventListener("htmx:sseBeforeMessage", function (event) {
    if (event.detail.type !== "op") return;
    event.preventDefault();
    upsert(parse(event.detail.data));
  });
  // A page of the list replaces what is shown; an entry pushed meanwhile, newer than the page's, stays, and an opened one stays open.
  var shown = null;
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.target !== list()) return;
    shown = {};
    list().querySelectorAll(":scope > .op").forEach(function (op) { shown[op.id] = op; });
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target !== list() || !shown) return;
    var was = shown;
    shown = null;
    list().querySelectorAll(":scope > .op").forEach(function (op) {
      var old = was[op.id];
      if (old && old.dataset.version > op.dataset.version) { old.open = op.open; op.replaceWith(old); }
      else if (old) op.open = old.open; // an entry opened stays open across a filter's change
    });
  });

  // A form's fields as its dev route's JSON body: data-type says int, list (comma separated) or ether (in wei).
  function wei(text) {
    var parts = String(text).trim().split(".");
    var frac = (parts[1] || "").padEnd(18, "0").slice(0, 18);
    return (BigInt(parts[0] || "0") * 1000000000000000000n + BigInt(frac)).toString();
  }
  function bodyOf(form) {
    var body = {};
    Array.prototype.forEach.call(form.elements, function (field) {
      if (!field.name || field.value === "") return;
      var type = field.dataset.type;
      body[field.name] = type === "int" ? Number(field.value) : type === "list" ? field.value.split(/[\\s,]+/).filter(Boolean) : type === "ether" ? wei(field.value) : field.value;
    });
    return JSON.stringify(body);
  }
  // A control's answer in words a person reads ("mine blocks: done, block 12 at …", "relayer balance: done,
  // relayer running, balance 1.5 ETH", "refused, 404 operation_not_found: …"), each route's answer said its
  // own way; its JSON, field names and all, is the API's.
  // ETH to four decimals, as the health panel shows it: "about" when more were cut.
  function ether(wei) {
    var b = BigInt(wei), unit = 1000000000000000000n, shown = b / 100000000000000n;
    var frac = (shown % 10000n).toString().padStart(4, "0").replace(/0+$/, "");
    return (shown * 100000000000000n === b ? "" : "about ") + (b / unit).toString() + (frac ? "." + frac : "") + " ETH";
  }
  function block(head) { return "block " + head.number + " at " + new Date(head.timestamp * 1000).toISOString(); }
  function short(hash) { return hash.slice(0, 10) + "…" + hash.slice(-6); }
  function plural(n, one) { return n + " " + one + (n === 1 ? "" : "s"); }
  var SAID = {
    mine: block,
    time: block,
    mining: function (a) { return (a.mode === "hold" ? "mining held" : "mining automatic again") + ", the head at " + block(a.head); },
    drop: function (a) { return "transaction " + short(a.dropped) + " dropped from the mempool (the relayer sends it again)"; },
    reorg: function (a) {
      return "the last " + plural(a.depth, "block") + " replaced, the head at " + block(a.head) + "; " +
        (a.resent.length ? plural(a.resent.length, "transaction") + " sent again" + (a.mined ? " and mined" : ", waiting in the mempool") : "no transaction to send again");
    },
    rpc: function (a) {
      if (a.fault === "none") return "no RPC fault";
      return "RPC fault " + a.fault + (a.delayMs ? " " + a.delayMs + " ms" : "") + " on " + (a.methods ? a.methods.join(", ") : "every method") + (a.endsAt ? ", ends " + ago(a.endsAt) : ", until switched off");
    },
    "revert-next": function (a) { return a.revertNextRelay ? "the next relay will revert on chain (InvalidProof())" : "the next relay is relayed as usual"; },
    relayer: function (a) { return "relayer " + a.engine + ", balance " + ether(a.balanceWei); },
    config: function (a) { return "serving the " + a.serving + " configuration, Pool " + short(a.poolAddress); },
    reset: function () { return "back at the clean state the stack started in"; },
  };
  // An answer this page does not know (a newer route): its fields in words, not their JSON names.
  function words(value) {
    if (value === null || typeof value !== "object") return String(value);
    if (Array.isArray(value)) return value.length ? value.map(words).join(", ") : "none";
    return Object.keys(value).filter(function (k) { return value[k] !== null; }).map(function (k) {
      return k.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase() + " " + words(value[k]);
    }).join(", ");
  }
  function answer(route, response, text) {
    var body = null;
    try { body = JSON.parse(text); } catch (error) { /* not JSON: said as it came */ }
    if (!response.ok) return "refused, " + response.status + (body && body.code ? " " + body.code + ": " + body.detail : " " + text);
    if (body === null) return "done";
    var say = SAID[route.split("/").pop()];
    return "done, " + (say ? say(body) : words(body));
  }
  function post(label, route, body, done) {
    fetch(route, { method: "POST", headers: { "content-type": "application/json" }, body: body })
      .then(function (response) { return response.text().then(function (text) { show(label + ": " + answer(route, response, text)); }); })
      .catch(function (error) { show(label + ": " + error.message); })
      .finally(done);
  }
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.dataset.post) return;
    event.preventDefault();
    var button = form.querySelector("button[type=submit]");
    button.disabled = true;
    post(form.querySelector("legend").textContent, form.dataset.post, bodyOf(form), function () { button.disabled = false; });
  });
  // A form the browser refused (a field empty or out of range) sends nothing: the line under the controls
  // must not keep the previous control's answer as if it were this one's.
  document.addEventListener("invalid", function (event) { var form = event.target.form; if (form && form.dataset.post) show(""); }, true);

  function addChain(button) {
    var status = document.querySelector("#manifest .wallet-status");
    var ethereum = window.ethereum;
    if (!ethereum || typeof ethereum.request !== "function") { status.textContent = "no wallet in this browser (window.ethereum)"; return; }
    ethereum.request({ method: "wallet_addEthereumChain", params: [JSON.parse(button.dataset.chain)] })
      .then(function () { status.textContent = "the wallet added the chain"; }, function (error) { status.textContent = "the wallet refused: " + (error && error.message); });
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest("a[data-op]");
    if (link) {
      var target = document.getElementById("op-" + link.dataset.op);
      if (target) target.open = true;
      else show(link.dataset.op + " is not in the list shown: clear the filters or load older operations");
      return;
    }
    var button = event.target.closest("button");
    if (!button) return;
    if (button.classList.contains("add-chain")) { addChain(button); return; }
    // Said as it is shown beside the button (shortened): a whole hash would break on a phone.
    if (button.dataset.copy) { navigator.clipboard.writeText(button.dataset.copy).then(function () { show("copied " + button.previousElementSibling.textContent); }, function () { show("copy refused by the browser"); }); return; }
    if (!button.dataset.post) return;
    // One click must not undo a session's work: the reset asks first.
    if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) { show(button.textContent + ": not done"); return; }
    button.disabled = true;
    post(button.textContent, button.dataset.post, button.dataset.body, function () { button.disabled = false; });
  });
  // The accounts' balances are read when their panel is opened, and again with the Pool's while it is open.
  function readAccounts() {
    var details = document.getElementById("accounts-details");
    if (details && details.open) htmx.trigger("#accounts", "refresh");
  }
  document.addEventListener("htmx:sseBeforeMessage", function (event) { if (event.detail.type === "pool") readAccounts(); });
  document.addEventListener("DOMContentLoaded", function () {
    setInterval(function () { refreshTimes(document); applyFilters(); }, 1000);
    document.getElementById("accounts-details").addEventListener("toggle", readAccounts);
  });
  // The list is the stack's own deployment's: said so while the other one is served. Held mining is said on top.
  function showScope() {
    var serving = document.getElementById("serving"), mining = document.getElementById("mining-mode");
    if (serving) document.getElementById("ops-scope").hidden = serving.textContent !== "alternate";
    if (mining) document.getElementById("mining-held").hidden = mining.textContent !== "hold";
  }
  // At the swap already, so a reloaded list never shows its ISO times until it settles.
  document.addEventListener("htmx:afterSwap", function () { refreshTimes(document); });
  document.addEventListener("htmx:afterSettle", function () { refreshTimes(document); applyFilters(); showScope(); });
  document.addEventListener("htmx:sseOpen", function () { document.getElementById("connection").textContent = "live"; });
  document.addEventListener("htmx:sseError", function () { document.getElementById("connection").textContent = "reconnecting…"; });
})();
`;

export interface Asset {
  type: string;
  body: string | Uint8Array; // Uint8Array, not Buffer: the public types name no Node global
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
