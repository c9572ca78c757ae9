import { QueueDevstackError } from "../../src/errors/index.ts";

/** A path the queue named resolves to another host than the queue's own: refused before any request. */
export class ForeignOriginError extends QueueDevstackError {
  override name = "ForeignOriginError";
  readonly code = "foreign_origin";
}

/**
 * `path` (as a config names it) resolved under the queue's base URL, refused unless on the same origin:
 * "//host/x" or "/\host/x" resolve to another host, and fetching it would tell that host the app's
 * address and that it runs (a config may come from a bundle someone sent).
 */
export function sameOriginUrl(path: string, baseUrl: string): URL {
  const url = new URL(path, baseUrl);
  const base = new URL(baseUrl);
  if (url.origin !== base.origin) throw new ForeignOriginError(`${JSON.stringify(path)} resolves to ${url.origin}, not the queue's origin ${base.origin}: not fetched`);
  return url;
}
