import { describe, expect, it } from "vitest";
import { checkTrustProxy, clientKey, TrustProxyError } from "../src/client-address.ts";

// Issue 30, item 15: the key every per-client limit counts by (rate limit, live quotes, in-flight share).
describe("clientKey", () => {
  it("an IPv4 client is its address, also as seen on a dual-stack socket", () => {
    expect(clientKey("203.0.113.7")).toBe("203.0.113.7");
    expect(clientKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(clientKey("::ffff:cb00:7107")).toBe("203.0.113.7");
  });

  it("an IPv6 client is its /64, however the address is written: one host's 2^64 addresses are one client", () => {
    const key = "2001:db8:abcd:12::/64";
    for (const ip of ["2001:db8:abcd:12::1", "2001:0db8:abcd:0012:ffff:ffff:ffff:ffff", "2001:DB8:ABCD:12:0:0:0:2", "2001:db8:abcd:12:1:2:3.4.5.6", "2001:db8:abcd:12::1%eth0"]) {
      expect(clientKey(ip), ip).toBe(key);
    }
    expect(clientKey("2001:db8:abcd:13::1")).toBe("2001:db8:abcd:13::/64");
    expect(clientKey("::1")).toBe("0:0:0:0::/64");
    expect(clientKey("fe80::1")).toBe("fe80:0:0:0::/64");
  });
});

describe("checkTrustProxy", () => {
  it("takes addresses, CIDRs, netmasks and proxy-addr's range names", () => {
    const ok = ["127.0.0.1", "10.0.0.0/8", "10.0.0.0/255.0.0.0", "::1", "fd00::/8", "loopback", "linklocal", "uniquelocal"];
    expect(checkTrustProxy(ok)).toEqual(ok);
  });

  it("refuses a hop count (Fastify 5.12 trusts no proxy for one), trusting everyone, an empty list and non-addresses", () => {
    for (const bad of [1, true, [], ["proxy.example"], ["10.0.0.0/33"], ["::/129"], ["10.0.0.1/8/1"], ["*"]]) {
      expect(() => checkTrustProxy(bad as never), JSON.stringify(bad)).toThrow(TrustProxyError);
    }
  });
});
