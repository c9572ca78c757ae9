import type { Writable } from "node:stream";

/**
 * What a page's push channel may hold unsent before the page is dropped. A tab that stops reading (a
 * suspended laptop, a stalled proxy) would otherwise make the runtime buffer every change for it without
 * end; dropped, its EventSource reconnects and asks for its list again, so it loses nothing.
 */
export const MAX_UNSENT_BYTES = 1 << 20;

/** One Server-Sent Event; each line of the data gets its own `data:` field. */
export const sseEvent = (name: string, data: string) => `event: ${name}\n${data.split("\n").map((line) => `data: ${line}\n`).join("")}\n`;

/**
 * Writes one event to each page, dropping (`drop`) a page whose unsent bytes are over `maxUnsent`
 * instead of writing to it.
 */
export function pushEvent<P extends { res: Writable }>(pages: Iterable<P>, name: string, data: string, drop: (page: P) => void, maxUnsent = MAX_UNSENT_BYTES): void {
  const text = sseEvent(name, data);
  for (const page of [...pages]) {
    if (page.res.writableLength > maxUnsent) drop(page);
    else page.res.write(text);
  }
}
