import type { RelayControl } from "../../src/relay/control.ts";
import type { OperationRecord } from "../../src/relay/store.ts";
import { esc, kindOf, operationHtml } from "./dashboard-view.ts";

// The operations list, a page at a time: newest first, filtered on the server by kind, state and age,
// with a button for the older ones. Later changes come over the push channel, one operation each.

/** Operations on one page of the list. */
export const PAGE_SIZE = 50;

export interface OpsQuery {
  kind?: string;
  state?: string;
  /** Only those accepted in the last this many seconds. */
  since?: number;
  /** The cursor: those older than this entry (`createdAt id` of the last one shown). */
  before?: string;
}

const cursorOf = (op: Readonly<OperationRecord>) => `${op.createdAt} ${op.id}`;

/** One page of the list as HTML, ending with a button for the next (older) page if there is one. */
export function opsPageHtml(control: RelayControl | null, query: OpsQuery, prefix: string, now = Date.now()): string {
  const from = query.since ? new Date(now - query.since * 1000).toISOString() : new Date(0).toISOString();
  // The store reads them oldest first; the list shows the newest first.
  const matching = (control?.operationsSince(from) ?? [])
    .filter((op) => (!query.kind || kindOf(op) === query.kind) && (!query.state || op.state === query.state) && (!query.before || cursorOf(op) < query.before))
    .reverse();
  const page = matching.slice(0, PAGE_SIZE);
  const html = page.map((op) => operationHtml(op, prefix)).join("");
  if (matching.length <= PAGE_SIZE) return html || (query.before ? "" : `<p class="empty">no operation${query.kind || query.state || query.since ? " matches the filters" : " yet"}</p>`);
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== "" && key !== "before") params.set(key, String(value));
  params.set("before", cursorOf(page.at(-1) as OperationRecord));
  // Replaces itself with the next page (and that page's own button).
  return `${html}<button type="button" class="older" hx-get="${esc(prefix)}/dashboard/ops?${esc(params.toString())}" hx-target="this" hx-swap="outerHTML">older operations (${matching.length - PAGE_SIZE} more)</button>`;
}
