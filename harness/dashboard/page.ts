import { OPERATION_STATES } from "../../src/schemas/operation-states.ts";
import { controlsHtml } from "./controls.ts";
import { badge, esc } from "./view.ts";

/** The page: its parts fill in from the push channel (/api/dev/events) as soon as it connects. */
export function pageHtml(prefix: string, proofs: "groth16" | "dev" = "groth16", patched: ReadonlyArray<{ name: string; source: string }> = []): string {
  const p = esc(prefix);
  const states = OPERATION_STATES.map((s) => `<option>${esc(s)}</option>`).join("");
  // The states in the README diagram's order, in their colours: the way to a confirmed, then the failures.
  // Once, as the counts' line (their legend): it shows them until the first counts come.
  const legend = OPERATION_STATES.map((s) => badge(s)).join(" ");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"selfRequestsOnly":true}'>
<title>queue-devstack dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${p}/dashboard/assets/dashboard.css">
<script src="${p}/dashboard/assets/htmx.min.js"></script>
<script src="${p}/dashboard/assets/sse.min.js"></script>
<script src="${p}/dashboard/assets/dashboard.js"></script>
</head><body hx-ext="sse" sse-connect="${p}/events">
<header><h1>queue-devstack</h1>${proofs === "dev" ? `<p class="dev-proofs" role="note" title="The Pool's verifier is DevVerifier: proofs bind their public inputs and prove nothing">dev proofs</p>` : ""}${patched.length > 0 ? `<p class="patched" role="note" title="${esc(patched.map((p) => `${p.name} from ${p.source}`).join("; "))}">patched: ${esc(patched.map((p) => p.name).join(", "))}</p>` : ""}<p id="connection" role="status">connecting…</p></header>
<p id="mining-held" class="banner" hidden><strong>Mining is held.</strong> No block is mined: every transaction waits in the mempool, the relayer's and your app's own wallet transactions alike, until mining is released (Controls, <em>release mining</em>).</p>
<main>
<div class="column">
<section id="ops-panel" aria-labelledby="ops-title"><h2 id="ops-title">Operations</h2>
<form id="filters" class="filters" hx-get="${p}/dashboard/ops" hx-target="#ops" hx-swap="innerHTML" hx-trigger="change, submit, sse:ops">
<label>kind <select name="kind"><option value="">all</option><option>send</option><option>withdraw</option><option>action</option><option>finalize</option></select></label>
<label>state <select name="state"><option value="">all</option>${states}</select></label>
<label>since <select name="since"><option value="">any time</option><option value="60">the last minute</option><option value="600">the last 10 minutes</option><option value="3600">the last hour</option></select></label>
<label class="find">find <input type="search" name="q" placeholder="operation id or transaction hash" autocomplete="off" spellcheck="false"></label>
</form>
<p id="ops-counts" class="counts" sse-swap="counts" hx-swap="innerHTML">${legend}</p>
<p id="ops-scope" class="scope" hidden>The alternate configuration is served: this list is of the stack's own (original) deployment, whose relayer still settles what it accepted. The alternate deployment's operations are not listed; their status is at the queue URL's status routes.</p>
<div id="ops" aria-live="off"></div><div sse-swap="op" hx-swap="none" hidden></div></section>
<section id="pool-panel" aria-labelledby="pool-title"><h2 id="pool-title">Pool</h2><div id="pool" sse-swap="pool" hx-swap="innerHTML"></div></section>
<section id="accounts-panel" aria-labelledby="accounts-title"><h2 id="accounts-title">Accounts</h2><details id="accounts-details"><summary>the dev accounts and their balances</summary><div id="accounts" hx-get="${p}/dashboard/accounts" hx-trigger="refresh" hx-swap="innerHTML"></div></details></section>
<section id="manifest-panel" aria-labelledby="manifest-title"><h2 id="manifest-title">Manifest</h2><div id="manifest" sse-swap="manifest" hx-swap="innerHTML"></div></section>
</div><div class="column">
<section id="health-panel" aria-labelledby="health-title"><h2 id="health-title">Relayer and health</h2><div id="health" sse-swap="health" hx-swap="innerHTML"></div></section>
<section id="controls-panel" aria-labelledby="controls-title"><h2 id="controls-title">Controls</h2>${controlsHtml(prefix)}<p id="control-result" role="status"></p></section>
</div>
</main></body></html>`;
}
