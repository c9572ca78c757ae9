import { isIPv4, isIPv6 } from "node:net";
import { QueueDevstackError } from "../../src/errors/index.ts";

/**
 * The Host names a dev stack's dev-only routes answer to. A page on a domain that rebinds to 127.0.0.1
 * (DNS rebinding) is same-origin with the stack, so CORS does not stop it, but its requests carry its
 * own name in Host: only the names below are served. Always: localhost and *.localhost (browsers
 * resolve them to loopback themselves), 127.0.0.0/8 and [::1]; the address the stack was bound to;
 * and the names the user adds (a leading dot, ".example.test", also allows every subdomain).
 */
export interface AllowedHosts {
  readonly exact: ReadonlySet<string>;
  readonly suffixes: readonly string[];
}

export class AllowedHostError extends QueueDevstackError {
  override name = "AllowedHostError";
  readonly code = "allowed_host_invalid";
}

/** A Host header's value: a name or IPv4 address, or a bracketed IPv6 literal, and an optional port. */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i;

/** The host name a Host header names, normalized as a browser's URL parser would (lower case, no trailing dot); undefined if it is not one. */
export function hostnameOf(header: string | undefined): string | undefined {
  const match = header === undefined ? null : HOST_HEADER.exec(header);
  if (!match) return undefined;
  return normalize(match[1] as string);
}

function normalize(host: string): string | undefined {
  try {
    const { hostname } = new URL(`http://${host}/`);
    return hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
  } catch {
    return undefined;
  }
}

/**
 * Checks names a user allows (`allowedHosts`, `--allowed-host`): a host name, an IP address (IPv6 with
 * or without brackets), or ".name" for a name and its subdomains; no scheme, port or wildcard.
 */
export function checkAllowedHosts(names: readonly string[]): AllowedHosts {
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const name of names) {
    const subdomains = name.startsWith(".");
    const bare = subdomains ? name.slice(1) : name;
    const host = isIPv6(bare) ? `[${bare}]` : bare;
    const normalized = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)$/i.test(host) ? normalize(host) : undefined;
    if (normalized === undefined || normalized === "" || (subdomains && (normalized.startsWith("[") || isIPv4(normalized)))) {
      throw new AllowedHostError(`allowed host ${JSON.stringify(name)} is not a host name: give a name (devbox.local), an IP address, or .name for a name and its subdomains; no scheme or port`);
    }
    if (subdomains) suffixes.push(normalized);
    else exact.add(normalized);
  }
  return { exact, suffixes };
}

/** The hosts a stack bound to `bindHost` answers to: loopback names, its own address, and the user's names. */
export function allowedHostsFor(bindHost: string, userNames: readonly string[] = []): AllowedHosts {
  const { exact, suffixes } = checkAllowedHosts(userNames);
  const bound = normalize(isIPv6(bindHost) ? `[${bindHost}]` : bindHost);
  return { exact: bound === undefined ? exact : new Set([...exact, bound]), suffixes };
}

export function hostAllowed(hostname: string, allowed: AllowedHosts): boolean {
  if (hostname === "localhost" || hostname.endsWith(".localhost") || hostname === "[::1]") return true;
  if (isIPv4(hostname) && hostname.startsWith("127.")) return true;
  return allowed.exact.has(hostname) || allowed.suffixes.some((suffix) => hostname === suffix || hostname.endsWith(`.${suffix}`));
}
