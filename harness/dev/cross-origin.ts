import type { FastifyInstance, FastifyRequest } from "fastify";
import { hostAllowed, hostnameOf } from "./allowed-hosts.ts";
import { devProblem } from "./problems/index.ts";
import { READ_METHODS } from "../../src/paths.ts";

/**
 * Which browser pages may drive the dev controls. A POST with no body, or with a text/plain one, is a
 * "simple" request: a page on any site can send it (`fetch(url, { method: "POST", mode: "no-cors" })`)
 * without a preflight, and CORS only hides the answer from it, after the control has run. So, as Vite's
 * and webpack-dev-server's dev servers do, a request that changes something is refused when a browser
 * says it comes from elsewhere:
 * - an `Origin` header is allowed when it names a loopback host (localhost, *.localhost, 127.0.0.0/8,
 *   [::1]; any port, http or https: only this machine serves those), the host the request itself was
 *   sent to (the stack's own origin, as the dashboard's buttons send it, under any allowed Host name),
 *   or an origin given to the stack's CORS settings (`corsOrigins`, `--cors-origin`): those were trusted
 *   with the queue already. Anything else, `null` (a sandboxed frame, a file:// page) included, is refused;
 * - with no `Origin` (curl, Node's fetch, a test runner), the request is allowed unless it carries
 *   `Sec-Fetch-Site: cross-site`, a browser's word that another site sent it.
 * Reads (GET, HEAD) are not checked: CORS keeps their answers from other sites, and they change nothing.
 */
export interface AllowedOrigins {
  /** Exact origins the stack's CORS settings allow ("loopback" is covered by the loopback rule). */
  readonly cors: ReadonlySet<string>;
}

export function allowedOriginsFor(corsOrigins: readonly string[] = []): AllowedOrigins {
  return { cors: new Set(corsOrigins.filter((origin) => origin !== "loopback")) };
}

/** Loopback names only: the bind address and user names count as the request's own host, not as any page's. */
const LOOPBACK_ONLY = { exact: new Set<string>(), suffixes: [] };

/** Why a request that changes something is refused, or null when it is allowed. */
export function crossOriginRefusal(headers: { origin?: string | undefined; host?: string | undefined; "sec-fetch-site"?: string | undefined }, allowed: AllowedOrigins): string | null {
  const { origin } = headers;
  if (origin === undefined) {
    return headers["sec-fetch-site"] === "cross-site" ? "the browser says another site sent it (Sec-Fetch-Site: cross-site)" : null;
  }
  if (allowed.cors.has(origin)) return null;
  let url: URL | null = null;
  try {
    url = new URL(origin);
  } catch {}
  if (url === null || !/^https?:$/.test(url.protocol) || url.origin !== origin) return `it comes from a page of origin ${JSON.stringify(origin)}`;
  const hostname = url.hostname.endsWith(".") ? url.hostname.slice(0, -1) : url.hostname;
  if (hostAllowed(hostname, LOOPBACK_ONLY) || hostname === hostnameOf(headers.host)) return null;
  return `it comes from a page of ${origin}`;
}

/** Refuses, in this scope, every request that changes something and comes from another site's page (403 cross_origin_refused). */
export function refuseCrossOrigin(scope: FastifyInstance, allowed: AllowedOrigins): void {
  scope.addHook("onRequest", async (request: FastifyRequest) => {
    if (READ_METHODS.has(request.method)) return;
    const why = crossOriginRefusal(request.headers as Record<string, string | undefined>, allowed);
    if (why === null) return;
    throw devProblem(
      "cross_origin_refused",
      `the dev controls refuse this request: ${why}. They take requests from the stack's own pages, loopback origins and the stack's CORS origins (--cors-origin, corsOrigins), and from clients that send no Origin (curl, Node, test runners)`,
    );
  });
}
