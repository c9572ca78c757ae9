import { isIP, isIPv4 } from "node:net";
import { QueueDevstackError } from "./errors/index.ts";

/**
 * Which proxies in front of the runtime are believed when they name the client (X-Forwarded-For):
 * Fastify's `trustProxy` as addresses and CIDRs ("127.0.0.1", "10.0.0.0/8", or proxy-addr's "loopback",
 * "linklocal", "uniquelocal"). Not `true` (then any client names itself, and picks its own limits), nor
 * a hop count: Fastify 5.12 refuses hop counts (it trusts no proxy then), since a count cannot tell a
 * proxy from a client connecting directly with a forged header.
 */
export type TrustProxy = string[];

const NAMED_RANGES = new Set(["loopback", "linklocal", "uniquelocal"]);

export class TrustProxyError extends QueueDevstackError {
  override name = "TrustProxyError";
  readonly code = "trust_proxy_invalid";
  readonly value: unknown;
  constructor(value: unknown, reason: string) {
    super(`trustProxy ${JSON.stringify(value)} ${reason}: name the proxies' addresses or CIDRs (127.0.0.1, 10.0.0.0/8, loopback)`);
    this.value = value;
  }
}

function isTrustedEntry(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address = "", prefix, ...rest] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (family === 4 && isIPv4(prefix)) return true; // an IPv4 netmask, 255.0.0.0
  return /^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** The option checked before anything starts: a typo must not silently trust nothing (or everyone). */
export function checkTrustProxy(value: TrustProxy): TrustProxy {
  if (typeof value === "number") throw new TrustProxyError(value, "is a hop count, which cannot tell a proxy from a client that forges the header");
  if (!Array.isArray(value) || value.length === 0) throw new TrustProxyError(value, "names no proxy");
  const bad = value.find((entry) => typeof entry !== "string" || !isTrustedEntry(entry));
  if (bad !== undefined) throw new TrustProxyError(value, `holds ${JSON.stringify(bad)}, which is no IP address, CIDR or range name`);
  return value;
}

/** The eight 16-bit groups of an IPv6 address (an embedded IPv4 tail included), or null. */
function ipv6Groups(address: string): number[] | null {
  const bare = address.split("%")[0] as string; // a zone (fe80::1%eth0) names no other client
  if (isIP(bare) !== 6) return null;
  let text = bare;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = (v4[1] as string).split(".").map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const part = (s: string) => (s === "" ? [] : s.split(":").map((g) => parseInt(g, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  return [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
}

/**
 * Who a request is, for the per-client limits (rate limit, live quotes, in-flight share): its address
 * (request.ip, so behind a trusted proxy the client the proxy names). An IPv6 client is its /64: one
 * host is usually given a whole /64, and would otherwise have 2^64 clients' limits.
 */
export function clientKey(ip: string): string {
  const groups = ipv6Groups(ip);
  if (groups === null) return ip;
  // An IPv4 client seen on a dual-stack socket (::ffff:1.2.3.4) is that IPv4 client.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}
