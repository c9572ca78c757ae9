import type { RelayControl } from "../../src/relay/control.ts";
import type { OperationPage } from "../../src/store/types.ts";
import { OPERATION_STATES } from "../../src/schemas/operation-states.ts";
import { badge, esc, operationHtml, type AssetBook } from "./view.ts";

// The operations list, a page at a time: newest first, filtered by the store (kind, state and age, in
// SQL), with a button for the older ones. Later changes come over the push channel, one operation each.

/** Operations on one page of the list. */
export const PAGE_SIZE = 50;

export interface OpsQuery {
  kind?: string;
  state?: string;
  /** Only those accepted in the last this many seconds. */
  since?: number;
  /** The cursor: those older than this entry (`createdAt id` of the last one shown). */
  before?: string;
  /** An operation id, or a transaction hash (any attempt's): that operation only. */
  q?: string;
}

const OPERATION_ID = /^op_[0-9A-Za-z_-]{1,96}$/;
const TRANSACTION_HASH = /^0x[0-9a-fA-F]{64}$/;

/** The search box's text as the store's filter, or null when it is neither an operation id nor a transaction hash. */
function searchFilter(q: string): Pick<OperationPage, "id" | "transactionHash"> | null {
  const text = q.trim();
  if (OPERATION_ID.test(text)) return { id: text };
  if (TRANSACTION_HASH.test(text)) return { transactionHash: text };
  return null;
}

/**
 * How many operations are in each state, of every kind: the list's filters narrow what is shown, not these.
 * Every state in the diagram's order, in its colour (the page's legend), then any other state the store holds.
 */
export function countsHtml(control: RelayControl): string {
  const counts = new Map<string, number>();
  for (const { state, count } of control.stateCounts()) counts.set(state, (counts.get(state) ?? 0) + count);
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const states = [...new Set<string>([...OPERATION_STATES, ...counts.keys()])];
  return `${esc(total)} operation${total === 1 ? "" : "s"}: ${states.map((s) => `<span class="count" data-state="${esc(s)}">${badge(s)} <span class="n">${esc(counts.get(s) ?? 0)}</span></span>`).join(" ")}`;
}

/** The filters' kinds as the store's: an action is a withdrawal with an action's terms. */
const KINDS: Record<string, Pick<OperationPage, "kind" | "action">> = {
  send: { kind: "send" },
  withdraw: { kind: "withdraw", action: false },
  action: { kind: "withdraw", action: true },
  finalize: { kind: "finalize" },
};

/** One page of the list as HTML, ending with a button for the next (older) page if there is one. */
export function opsPageHtml(control: RelayControl | null, query: OpsQuery, prefix: string, now = Date.now(), assets?: AssetBook): string {
  const [createdAt, id] = query.before?.split(" ") ?? [];
  const search = query.q ? searchFilter(query.q) : {};
  if (search === null) return `<p class="empty">search by an operation id (op_…) or a transaction hash (0x and 64 hex digits)</p>`;
  // One more than a page: whether there is an older one, without counting them all.
  const found =
    control?.newestFirst({
      limit: PAGE_SIZE + 1,
      ...(query.kind ? KINDS[query.kind] : {}),
      ...(query.state ? { state: query.state as OperationPage["state"] } : {}),
      ...(query.since ? { since: new Date(now - query.since * 1000).toISOString() } : {}),
      ...(createdAt && id ? { before: { createdAt, id } } : {}),
      ...search,
    }) ?? [];
  const page = found.slice(0, PAGE_SIZE);
  const required = control?.requiredConfirmations() ?? 1;
  const html = page.map((op) => operationHtml(op, prefix, required, assets)).join("");
  if (found.length <= PAGE_SIZE) return html || (query.before ? "" : `<p class="empty">no operation${query.kind || query.state || query.since || query.q ? " matches the filters" : " yet"}</p>`);
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== "" && key !== "before") params.set(key, String(value));
  const last = page.at(-1) as (typeof page)[number];
  params.set("before", `${last.createdAt} ${last.id}`);
  // Replaces itself with the next page (and that page's own button).
  return `${html}<button type="button" class="older" hx-get="${esc(prefix)}/dashboard/ops?${esc(params.toString())}" hx-target="this" hx-swap="outerHTML">older operations</button>`;
}
