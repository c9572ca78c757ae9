import { formatUnits } from "viem";
import type { z } from "zod";
import type { HealthChecks as HealthChecksSchema } from "../../src/routes/health.ts";
import type { OperationRecord } from "../../src/store/types.ts";
import { TERMINAL_STATES } from "../../src/schemas/operation.ts";
import type { ReplayAnswer } from "../replay/index.ts";

// The dashboard's HTML, rendered on the server: the page, and the fragments the push channel sends.

/** Text and attribute values: everything from the store or the chain goes through this. */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A time: the page's script shows it relative ("12 s ago"), the absolute one in its title. */
export const time = (iso: string, title = iso) => `<time datetime="${esc(iso)}" title="${esc(title)}">${esc(iso)}</time>`;
/** Wei per gas as gwei (the exact wei in its title). */
const gwei = (wei: string) => `<span title="${esc(wei)} wei">${esc((Number(wei) / 1e9).toFixed(4))} gwei</span>`;
const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
/** A hash shortened, the whole of it in its title and behind a copy button. */
export const hash = (value: string) =>
  `<code title="${esc(value)}">${esc(value.slice(0, 10))}…${esc(value.slice(-6))}</code><button type="button" class="copy" data-copy="${esc(value)}" aria-label="copy ${esc(value)}">copy</button>`;
/** Free text (a history entry's detail) with each 32-byte hash in it shortened, as everywhere else. */
const withHashes = (text: string) =>
  text
    .split(/(0x[0-9a-fA-F]{64})(?![0-9a-fA-F])/)
    .map((part, i) => (i % 2 ? hash(part) : esc(part)))
    .join("");
/**
 * A data table in a region that scrolls sideways when the table is wider than the screen: on a phone a
 * row of amounts, symbols and hashes scrolls rather than breaking inside a word. Focusable, so the
 * keyboard can scroll it too. `label` names the region when the caption is not unique on the page
 * (landmarks must be: each open operation has its own signed attempts).
 */
export const table = (caption: string, head: readonly string[], rows: string, label = caption) =>
  `<div class="table-scroll" role="region" aria-label="${esc(label)}" tabindex="0"><table><caption>${esc(caption)}</caption><thead><tr>${head.map((h) => `<th scope="col">${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows}</tbody></table></div>`;
/** A state as a coloured badge (the colours follow the README's state diagram). */
export const badge = (state: string) => `<span class="state" data-state="${esc(state)}">${esc(state)}</span>`;
/** A button calling a dev route with a JSON body (the page's script posts it and says how it went). */
export const postButton = (label: string, route: string, body: unknown, extra = "") =>
  `<button type="button" data-post="${esc(route)}" data-body="${esc(JSON.stringify(body))}"${extra}>${esc(label)}</button>`;

/** What the filters call an operation's kind: an action is a withdrawal with an action's terms. */
export function kindOf(op: Readonly<OperationRecord>): "send" | "withdraw" | "action" | "finalize" {
  return op.kind === "withdraw" && "action" in op.request && op.request.action ? "action" : op.kind;
}

/** The assets an operation's amounts are shown in: symbol and decimals by address (lower case). */
export type AssetBook = ReadonlyMap<string, { symbol: string; decimals: number }>;

/** An amount in its asset's units and symbol, or in base units when the asset is not known. */
function amount(value: string | bigint, asset: string, assets: AssetBook): string {
  const known = assets.get(asset.toLowerCase());
  return known ? `${esc(formatUnits(BigInt(value), known.decimals))} ${esc(known.symbol)}` : `${esc(value)} <span class="detail">(base units)</span>`;
}

/**
 * A send's recipient field: the Pool pays no address for a send (extAmount 0); whom it pays is the owner of
 * its output notes, private as its amount (contracts-fixtures/PROTOCOL.md). Clients leave the field 0x0.
 */
function sendRecipient(address: string): string {
  const note = `<span class="detail">private (a send pays no address: its recipient owns its output notes)</span>`;
  return /^0x0{40}$/i.test(address) ? note : `${hash(address)} ${note.replace("private (", "paid nothing (")}`;
}

/** What the operation asked for, from its stored request: only public fields (the store keeps no secret). */
function payloadHtml(op: Readonly<OperationRecord>, assets: AssetBook): string {
  const rows: Array<[string, string]> = [["kind", esc(kindOf(op))]];
  const request = op.request;
  if ("reservationId" in request) {
    rows.push(["reservation", hash(request.reservationId)]);
  } else if ("publicInputs" in request) {
    const asset = request.publicInputs.asset;
    const known = assets.get(asset.toLowerCase());
    const withdrawn = -BigInt(request.extData.extAmount);
    rows.push(
      ["asset", `${known ? `${esc(known.symbol)} ` : ""}${hash(asset)}`],
      // A send moves value inside the Pool: its amount is in the notes, which only their owners can open.
      ["amount", op.kind === "send" ? `<span class="detail">private (a send's amount is in its notes)</span>` : amount(withdrawn, asset, assets)],
      ["fee", amount(request.extData.fee, asset, assets)],
      ["recipient", op.kind === "send" ? sendRecipient(request.extData.recipient) : hash(request.extData.recipient)],
    );
    if (request.action) {
      const a = request.action;
      rows.push(["route", hash(a.routeId)], ["output", `at least ${amount(a.minOutput, a.outputAsset, assets)}`], ["deadline", time(new Date(Number(a.deadline) * 1000).toISOString())], ["quote", hash(a.quoteId)]);
    }
  }
  rows.push(["nullifiers", op.nullifiers.length ? op.nullifiers.map((n) => hash(n)).join(" ") : "none"], ["idempotency key", op.idempotencyKey === null ? "none" : `<code>${esc(op.idempotencyKey)}</code>`]);
  return `<dl class="payload">${rows.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl>`;
}

/** Orders two versions of one operation, so a late answer never replaces a newer push. */
const versionOf = (op: Readonly<OperationRecord>) => `${op.updatedAt}|${String(op.history.length).padStart(5, "0")}|${String(op.attempts.length).padStart(4, "0")}`;

/** An operation as a collapsible entry: its summary line, then its timeline, attempts, block, failure and links. */
export function operationHtml(op: Readonly<OperationRecord>, prefix: string, requiredConfirmations: number, assets: AssetBook = new Map()): string {
  const steps = op.history
    .map((entry, i) => {
      const next = op.history[i + 1];
      const spent = next ? ` <span class="spent">${seconds(Date.parse(next.at) - Date.parse(entry.at))} in it</span>` : "";
      // A failure's reason is said once, below the timeline with its code: not again on the step that ended it.
      const detail = entry.detail && entry.detail !== op.reason?.detail ? ` <span class="detail">${withHashes(entry.detail)}</span>` : "";
      return `<li>${badge(entry.state)} ${time(entry.at)}${spent}${detail}</li>`;
    })
    .join("");
  const attempts = op.attempts.length
    ? `<div class="attempts">${table(
        "signed attempts",
        ["#", "nonce", "max fee", "priority fee", "hash"],
        op.attempts.map((a, i) => `<tr><td>${i + 1}</td><td>${esc(a.nonce)}</td><td>${gwei(a.maxFeePerGas)}</td><td>${gwei(a.maxPriorityFeePerGas)}</td><td>${hash(a.hash)}</td></tr>`).join(""),
        `signed attempts of ${op.id}`,
      )}</div>`
    : "";
  // Its confirmations are counted on the page from the head the health panel shows (pushed as blocks
  // come), out of the relayer's required confirmations: "1 of 3" says how long it still waits.
  const block = op.block
    ? `<p>block ${esc(op.block.number)} ${hash(op.block.hash)}${op.minedHash ? `, transaction ${hash(op.minedHash)}` : ""}, <span class="confirmations" data-block="${esc(op.block.number)}" data-required="${esc(requiredConfirmations)}"></span></p>`
    : "";
  // The decoded revert, unless the detail says it already ("the Pool reverted with InvalidProof()").
  const revert = op.reason?.revert ? `${op.reason.revert.name}(${op.reason.revert.args.join(", ")})` : null;
  const failure = op.reason
    ? `<p class="failure"><strong class="code">${esc(op.reason.code)}</strong>: <span class="reason">${esc(op.reason.detail)}</span>${revert && !op.reason.detail.includes(revert) ? ` <code>${esc(revert)}</code>` : ""}</p>`
    : "";
  const id = encodeURIComponent(op.id);
  // An action's reservation is read from the chain when its entry is opened (intersect: a closed entry is not shown).
  const reservation =
    kindOf(op) === "action" || op.kind === "finalize"
      ? `<div class="reservation" hx-get="${esc(prefix)}/dashboard/reservation?id=${esc(id)}" hx-trigger="intersect once" hx-swap="innerHTML">reservation…</div>`
      : "";
  // A transaction waiting in the mempool can be dropped, as a node that lost it would (the relayer sends it again).
  const drop = op.state === "submitted" && !op.minedHash ? postButton("drop its transaction", `${prefix}/drop`, { operationId: op.id }) : "";
  // Read from the chain only when asked: a trace replays the transaction, or the call of one never mined
  // (a refusal the stack kept, say) on the block it failed at.
  const trace =
    TERMINAL_STATES.has(op.state) || op.minedHash
      ? `<button type="button" hx-get="${esc(prefix)}/dashboard/trace?id=${esc(id)}" hx-target="#trace-${esc(op.id)}">show its trace</button>`
      : "";
  // An ended operation can be replayed on the chain as it is now (nothing is sent): its verdict and trace diff below it.
  const replay = TERMINAL_STATES.has(op.state)
    ? `<button type="button" class="replay" hx-get="${esc(prefix)}/dashboard/replay?id=${esc(id)}" hx-target="#replay-${esc(op.id)}">replay</button>`
    : "";
  const actions = drop || trace || replay ? `<p>${drop}${trace}${replay}</p>` : "";
  // The summary names a failure's code unless it is the state already ("reverted … reverted" was).
  return (
    `<details id="op-${esc(op.id)}" class="op" data-state="${esc(op.state)}" data-kind="${esc(kindOf(op))}" data-created="${esc(op.createdAt)}" data-version="${esc(versionOf(op))}">` +
    `<summary>${badge(op.state)} <span class="kind">${esc(kindOf(op))}</span> <code class="id">${esc(op.id)}</code> ${time(op.createdAt)}${op.reason && op.reason.code !== op.state ? ` <span class="code">${esc(op.reason.code)}</span>` : ""}</summary>` +
    `${payloadHtml(op, assets)}<ol class="timeline">${steps}</ol>${attempts}${block}${failure}${reservation}${actions}${trace ? `<pre id="trace-${esc(op.id)}" class="trace" tabindex="0"></pre>` : ""}${replay ? `<div id="replay-${esc(op.id)}" class="replay-answer"></div>` : ""}</details>`
  );
}

/**
 * A replay's answer in an operation's entry: its verdict, then its lines (the CLI's), a diff's own
 * lines marked as added or removed; or why it could not be judged. All of it escaped.
 */
export function replayHtml(answer: ReplayAnswer | Error): string {
  if (answer instanceof Error) {
    const code = (answer as Error & { code?: string }).code;
    return `<p class="failure">cannot replay it: ${code ? `<strong class="code">${esc(code)}</strong>: ` : ""}${esc(answer.message)}</p>`;
  }
  const lines = answer.text.split("\n").map((line) => {
    const mark = line.startsWith("+ ") ? "added" : line.startsWith("- ") ? "removed" : null;
    return mark ? `<span class="${mark}">${esc(line)}</span>` : esc(line);
  });
  return `<p class="verdict" data-exit="${esc(answer.verdict.exitCode)}">replay: ${esc(answer.after.state)}, expected ${esc(answer.verdict.expected)} (exit ${esc(answer.verdict.exitCode)})</p><pre class="replay-diff" tabindex="0">${lines.join("\n")}</pre>`;
}

export interface HealthView {
  health: { status: number; body: unknown };
  relayer: { address: string; balanceWei: bigint; nonce: number } | null;
  /** The head, its age by the chain's own clock (anvil's pending block's time less the head's), and whether it is one of the committed genesis's blocks (its date fixed). */
  head: { number: number; timestamp: number; ageS: number; genesis: boolean };
  /** auto, hold, or a block every so many seconds (anvil's interval mining). */
  mining: "auto" | "hold" | `every ${number} s`;
  engine: "running" | "paused" | null;
  faults: { fault: string; delayMs?: number | null; methods: string[] | null; endsAt: string | null; revertNextRelay: boolean };
  serving: string;
}

/** Wei as ETH with four decimals, exact (no float): balances are large integers. */
export function ether(wei: bigint): string {
  const negative = wei < 0n;
  const abs = negative ? -wei : wei;
  const whole = abs / 10n ** 18n;
  const frac = ((abs % 10n ** 18n) / 10n ** 14n).toString().padStart(4, "0");
  return `${negative ? "-" : ""}${whole}.${frac}`;
}

/** The relayer, health and what is switched on now. */
export function healthHtml(view: HealthView): string {
  const body = view.health.body as { checks?: unknown; detail?: string };
  const ready = view.health.status === 200;
  const { faults } = view;
  const rows: Array<[string, string]> = [
    ["health", `<span class="ready" data-ready="${ready}">${ready ? "ready" : "not ready"}</span>${ready ? "" : `: <span class="detail">${esc(body.detail ?? "")}</span>`}`],
    [
      "head",
      // Its age ticks on the page from when it was mined, by the chain's clock (a loaded or time-moved chain runs apart from the wall's).
      // A block of the committed genesis has a fixed date: its age would only say how old the genesis is.
      `block <span id="head-number">${esc(view.head.number)}</span>, ${view.head.genesis ? `genesis <span class="detail">(its date fixed at ${esc(new Date(view.head.timestamp * 1000).toISOString().slice(0, 10))})</span>` : `mined ${time(new Date(Date.now() - view.head.ageS * 1000).toISOString(), `block time ${new Date(view.head.timestamp * 1000).toISOString()}`)}`}`,
    ],
    ["mining", `<span id="mining-mode">${esc(view.mining)}</span>`],
    ["relay engine", `<span id="engine">${esc(view.engine ?? "none")}</span>`],
    [
      "RPC fault",
      `<span id="rpc-fault">${esc(faults.fault)}</span>${faults.delayMs ? ` ${esc(faults.delayMs)} ms` : ""}${faults.methods ? ` (<span id="rpc-fault-methods">${esc(faults.methods.join(", "))}</span>)` : ""}${faults.endsAt ? `, ends ${time(faults.endsAt)}` : ""}`,
    ],
    ["revert next relay", `<span id="revert-next">${faults.revertNextRelay ? "armed" : "off"}</span>`],
    ["configuration", `<span id="serving">${esc(view.serving)}</span>`],
  ];
  // A patched contract is said where health is: its code is not what was deployed (docs/patching.md).
  const patched = (body.checks as HealthChecks | undefined)?.patched ?? [];
  if (patched.length > 0) rows.splice(1, 0, ["patched", `<ul id="patched">${patched.map((p) => `<li><span class="patched">patched</span> ${esc(p.name)} ${hash(p.address)}: code ${hash(p.codeHash)} from <code>${esc(p.source)}</code></li>`).join("")}</ul>`]);
  if (view.relayer) {
    rows.push(["relayer", hash(view.relayer.address)], ["balance", `<span id="relayer-balance">${esc(ether(view.relayer.balanceWei))}</span> ETH`], ["nonce", esc(view.relayer.nonce)]);
  }
  return `<dl>${rows.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl><details><summary>/api/queue/health checks</summary>${checksHtml(body.checks as HealthChecks | undefined)}</details>`;
}

type HealthChecks = z.output<typeof HealthChecksSchema>;
const yes = (ok: boolean, good: string, bad: string) => `<span class="ok" data-ok="${ok}">${ok ? good : bad}</span>`;

/** The health route's checks as labelled rows, as the route's schema describes them (JSON stays for the API). */
function checksHtml(checks: HealthChecks | undefined): string {
  if (!checks) return `<p class="detail">no checks in the answer</p>`;
  const { chain, relayer, queue, store, engine } = checks;
  const rows: Array<[string, string]> = [
    ["chain", `${yes(chain.reachable, "answers", "does not answer")}${chain.head === null ? "" : `, head ${esc(chain.head)}`}${chain.observedAgeMs === null ? "" : `, the relayer saw a head ${esc(seconds(chain.observedAgeMs))} ago`}`],
  ];
  if (relayer) rows.push(["relayer", `${yes(relayer.ready, "ready", "not ready")}${relayer.detail ? ` <span class="detail">${esc(relayer.detail)}</span>` : ""}`]);
  if (queue) rows.push(["queue", `${esc(queue.depth)} of ${esc(queue.capacity)} operations in flight`]);
  if (store) rows.push(["store", `${yes(store.writable, "writable", "not writable")}${store.detail ? ` <span class="detail">${esc(store.detail)}</span>` : ""}`]);
  if (engine) rows.push(["engine", `${esc(engine.state)}, last tick ${esc(seconds(engine.lagMs))} ago`]);
  return `<dl class="checks">${rows.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl>`;
}
