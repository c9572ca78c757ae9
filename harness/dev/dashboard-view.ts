import { OPERATION_STATES } from "../../src/relay/operation.ts";
import type { OperationRecord } from "../../src/relay/store.ts";

// The dashboard's HTML, rendered on the server: the page, and the fragments the push channel sends.

/** Text and attribute values: everything from the store or the chain goes through this. */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const time = (iso: string) => `<time datetime="${esc(iso)}" title="${esc(iso)}">${esc(iso)}</time>`;
const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
/** A hash shortened, the whole of it in its title and behind a copy button. */
export const hash = (value: string) =>
  `<code title="${esc(value)}">${esc(value.slice(0, 10))}…${esc(value.slice(-6))}</code><button type="button" class="copy" data-copy="${esc(value)}" aria-label="copy ${esc(value)}">copy</button>`;

/** An operation as a collapsible entry: its summary line, then its timeline, attempts, block and failure. */
export function operationHtml(op: Readonly<OperationRecord>, prefix: string): string {
  const steps = op.history
    .map((entry, i) => {
      const next = op.history[i + 1];
      const spent = next ? ` <span class="spent">${seconds(Date.parse(next.at) - Date.parse(entry.at))} in it</span>` : "";
      return `<li><span class="state" data-state="${esc(entry.state)}">${esc(entry.state)}</span> ${time(entry.at)}${spent}${entry.detail ? ` <span class="detail">${esc(entry.detail)}</span>` : ""}</li>`;
    })
    .join("");
  const attempts = op.attempts.length
    ? `<table class="attempts"><caption>signed attempts</caption><thead><tr><th scope="col">#</th><th scope="col">nonce</th><th scope="col">max fee</th><th scope="col">priority fee</th><th scope="col">hash</th></tr></thead><tbody>${op.attempts
        .map((a, i) => `<tr><td>${i + 1}</td><td>${a.nonce}</td><td>${esc(a.maxFeePerGas)}</td><td>${esc(a.maxPriorityFeePerGas)}</td><td>${hash(a.hash)}</td></tr>`)
        .join("")}</tbody></table>`
    : "";
  const block = op.block ? `<p>block ${op.block.number} ${hash(op.block.hash)}${op.minedHash ? `, transaction ${hash(op.minedHash)}` : ""}</p>` : "";
  const failure = op.reason
    ? `<p class="failure"><strong class="code">${esc(op.reason.code)}</strong>: <span class="reason">${esc(op.reason.detail)}</span>${op.reason.revert ? ` <code>${esc(op.reason.revert.name)}(${esc(op.reason.revert.args.join(", "))})</code>` : ""}</p>`
    : "";
  // Read from the chain only when asked: a trace replays the transaction.
  const trace =
    op.state === "reverted" || op.minedHash
      ? `<p><button type="button" hx-get="${esc(prefix)}/dashboard/trace?id=${esc(encodeURIComponent(op.id))}" hx-target="#trace-${esc(op.id)}">show its trace</button></p><pre id="trace-${esc(op.id)}" class="trace"></pre>`
      : "";
  return (
    `<details id="op-${esc(op.id)}" class="op" data-state="${esc(op.state)}" data-kind="${esc(op.kind)}">` +
    `<summary><span class="state" data-state="${esc(op.state)}">${esc(op.state)}</span> <span class="kind">${esc(op.kind)}</span> <code class="id">${esc(op.id)}</code> ${time(op.createdAt)}${op.reason ? ` <span class="code">${esc(op.reason.code)}</span>` : ""}</summary>` +
    `<ol class="timeline">${steps}</ol>${attempts}${block}${failure}${trace}</details>`
  );
}

/** An operation's change as a push: replaces its entry, or, new to this page, goes on top of the list. */
export function operationChange(op: Readonly<OperationRecord>, known: boolean, prefix: string): string {
  const html = operationHtml(op, prefix);
  return known ? html.replace("<details ", '<details hx-swap-oob="outerHTML" ') : `<div hx-swap-oob="afterbegin:#ops">${html}</div>`;
}

export interface HealthView {
  health: { status: number; body: unknown };
  relayer: { address: string; balanceWei: bigint; nonce: number } | null;
  head: { number: number; timestamp: number };
  mining: "auto" | "hold";
  engine: "running" | "paused" | null;
  faults: { fault: string; methods: string[] | null; endsAt: string | null; revertNextRelay: boolean };
}

/** The relayer, health and what is switched on now. */
export function healthHtml(view: HealthView): string {
  const body = view.health.body as { checks?: unknown; detail?: string };
  const ready = view.health.status === 200;
  const { faults } = view;
  const rows: Array<[string, string]> = [
    ["health", `<span class="ready" data-ready="${ready}">${ready ? "ready" : "not ready"}</span>${ready ? "" : ` <span class="detail">${esc(body.detail ?? "")}</span>`}`],
    ["head", `block ${view.head.number}, ${time(new Date(view.head.timestamp * 1000).toISOString())}`],
    ["mining", `<span id="mining-mode">${view.mining}</span>`],
    ["relay engine", esc(view.engine ?? "none")],
    ["RPC fault", `<span id="rpc-fault">${esc(faults.fault)}</span>${faults.methods ? ` (${esc(faults.methods.join(", "))})` : ""}${faults.endsAt ? `, until ${time(faults.endsAt)}` : ""}`],
    ["revert next relay", `<span id="revert-next">${faults.revertNextRelay ? "armed" : "off"}</span>`],
  ];
  if (view.relayer) {
    rows.push(["relayer", hash(view.relayer.address)], ["balance", `${esc((Number(view.relayer.balanceWei) / 1e18).toFixed(4))} ETH`], ["nonce", String(view.relayer.nonce)]);
  }
  return `<dl>${rows.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl><details><summary>/api/queue/health checks</summary><pre>${esc(JSON.stringify(body.checks ?? body, null, 2))}</pre></details>`;
}

const control = (label: string, route: string, body: unknown) => `<button type="button" data-post="${esc(route)}" data-body="${esc(JSON.stringify(body))}">${esc(label)}</button>`;

/** The page: its parts fill in from the push channel (/api/dev/events) as soon as it connects. */
export function pageHtml(prefix: string): string {
  const states = OPERATION_STATES.map((s) => `<option>${s}</option>`).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"selfRequestsOnly":true}'>
<title>queue-devstack dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${prefix}/dashboard/assets/dashboard.css">
<script src="${prefix}/dashboard/assets/htmx.min.js"></script>
<script src="${prefix}/dashboard/assets/sse.min.js"></script>
<script src="${prefix}/dashboard/assets/dashboard.js"></script>
</head><body hx-ext="sse" sse-connect="${prefix}/events">
<header><h1>queue-devstack</h1><p id="connection" role="status">connecting…</p></header>
<main>
<section aria-labelledby="ops-title"><h2 id="ops-title">Operations</h2>
<form id="filters" class="filters"><label>kind <select name="kind"><option value="">all</option><option>send</option><option>withdraw</option><option>finalize</option></select></label>
<label>state <select name="state"><option value="">all</option>${states}</select></label></form>
<div id="ops" sse-swap="ops" hx-swap="innerHTML"></div><div sse-swap="op" hx-swap="none" hidden></div></section>
<section aria-labelledby="health-title"><h2 id="health-title">Relayer and health</h2><div id="health" sse-swap="health" hx-swap="innerHTML"></div></section>
<section aria-labelledby="controls-title"><h2 id="controls-title">Controls</h2>
<div class="controls">
${control("mine a block", `${prefix}/mine`, { blocks: 1 })}
${control("hold mining", `${prefix}/mining`, { mode: "hold" })}
${control("release mining", `${prefix}/mining`, { mode: "auto" })}
${control("revert next relay", `${prefix}/revert-next`, { armed: true })}
${control("RPC fault: fail", `${prefix}/rpc`, { fault: "fail" })}
${control("RPC fault: off", `${prefix}/rpc`, { fault: "none" })}
${control("pause relayer", `${prefix}/relayer`, { engine: "paused" })}
${control("resume relayer", `${prefix}/relayer`, { engine: "running" })}
${control("reset the stack", `${prefix}/reset`, {})}
</div><p id="control-result" role="status"></p></section>
</main></body></html>`;
}
