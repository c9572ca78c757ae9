import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { AllowedHostError, startDevStack, type DevStack } from "../harness/index.ts";
import { allowedHostsFor, allowedOriginsFor, crossOriginRefusal, hostAllowed, hostnameOf, registerDevRoutes } from "../harness/dev/index.ts";
import { requestWithHost } from "./support/forged-host.ts";
import { rpc } from "./support/rpc.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// DNS rebinding: a page on a domain that resolves to 127.0.0.1 is same-origin with the stack (CORS does
// not apply), but its requests carry its own name in Host. The dev routes answer loopback names, the
// stack's own address and the names the user adds, and nothing else.
let stack: DevStack;
let port: number;
withQueueStack({ options: { allowedHosts: ["devbox.test", ".tunnel.example", "fd00::7"], corsOrigins: ["loopback", "https://app.example.test"] }, client: false, timeout: 120_000 }, async (started) => {
  ({ stack } = started);
  port = Number(new URL(stack.queueUrl).port);
});

/** A request to the stack under a forged Host header, as a rebound page's would be. */
const send = (method: "GET" | "POST", path: string, host: string, body?: unknown) => requestWithHost(`${stack.queueUrl}${path}`, host, { method, body });

describe("the dev routes' Host check", () => {
  it("answers under loopback names, with or without a port, and under the names the user added", async () => {
    for (const host of [
      `127.0.0.1:${port}`, "127.0.0.1", `127.8.9.10:${port}`, `localhost:${port}`, "LOCALHOST", "localhost.", `app.localhost:${port}`,
      `[::1]:${port}`, "[::1]", "[0:0:0:0:0:0:0:1]",
      `devbox.test:${port}`, "DevBox.Test", `tunnel.example:${port}`, "a.b.tunnel.example:443", "[fd00::7]:8080",
    ]) {
      const answer = await send("GET", "/api/dev/faults", host);
      expect(answer.status, host).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ fault: "none" });
    }
  });

  it("refuses any other name with 403 host_not_allowed, reads and controls alike, and changes nothing", async () => {
    const head = async () => Number(await rpc<string>(stack.rpcUrl, "eth_blockNumber"));
    const before = await head();
    for (const host of [
      `evil.example:${port}`, "evil.example", `localhost.evil.example:${port}`, "127.0.0.1.evil.example", "evillocalhost",
      `[::2]:${port}`, "[fe80::1]", "devbox.test.evil.example", "notdevbox.test", "tunnel.example.evil", "eviltunnel.example",
      "evil.example@127.0.0.1", "127.0.0.1:notaport",
    ]) {
      for (const [method, path, body] of [["GET", "/api/dev/faults"], ["GET", "/api/dev/bundle"], ["POST", "/api/dev/mine", { blocks: 3 }], ["POST", "/api/dev/rpc", { fault: "fail" }], ["POST", "/api/dev/reset", {}], ["GET", "/api/dev/dashboard"], ["GET", "/api/dev/events"], ["GET", "/api/dev/dashboard/assets/dashboard.js"]] as const) {
        const answer = await send(method, path, host, body);
        expect(answer.status, `${method} ${path} with Host ${JSON.stringify(host)}`).toBe(403);
        expect(answer.type).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(answer.body)).toMatchObject({ status: 403, code: "host_not_allowed", instance: path });
      }
    }
    expect(await head()).toBe(before);
    expect(stack.faults.state().fault).toBe("none");
    // The refusal says how to allow a name the user means.
    expect(JSON.parse((await send("GET", "/api/dev/faults", `devbox.lan:${port}`)).body).detail).toContain("--allowed-host devbox.lan");
  });

  it("leaves the queue's public routes alone: they answer under any name", async () => {
    expect((await send("GET", "/api/queue/config", `evil.example:${port}`)).status).toBe(200);
  });
});

describe("allowed hosts", () => {
  it("include the address the stack was bound to", () => {
    for (const [bind, host] of [["0.0.0.0", "0.0.0.0:8700"], ["192.0.2.7", "192.0.2.7"], ["::", "[::]:8700"], ["devbox.lan", "devbox.lan:8700"]] as const) {
      expect(hostAllowed(hostnameOf(host) as string, allowedHostsFor(bind)), `${bind} ${host}`).toBe(true);
      expect(hostAllowed(hostnameOf(host) as string, allowedHostsFor("127.0.0.1")), `127.0.0.1 ${host}`).toBe(false);
    }
  });

  it("must be host names or addresses", async () => {
    for (const bad of ["http://devbox.test", "devbox.test:8080", "*.example", ".", "", "dev box", ".127.0.0.1", "a/b"]) {
      expect(() => allowedHostsFor("127.0.0.1", [bad]), bad).toThrow(AllowedHostError);
      await expect(startDevStack({ allowedHosts: [bad] })).rejects.toThrow(AllowedHostError);
    }
  });
});

/** Every dev route that changes something, as registerDevRoutes registers them (a control added later is listed too). */
async function mutatingDevRoutes(): Promise<Array<{ method: string; url: string }>> {
  const app = Fastify();
  const routes: Array<{ method: string; url: string }> = [];
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) if (!["GET", "HEAD", "OPTIONS"].includes(method)) routes.push({ method, url: route.url });
  });
  // Listed, never called: no handler runs.
  const unused = () => {
    throw new Error("only listing the routes");
  };
  await registerDevRoutes(app, {
    rpcUrl: "http://127.0.0.1:1",
    relayer: "0x0000000000000000000000000000000000000000",
    control: null,
    faults: {} as never,
    deployments: {} as never,
    trace: unused,
    bundle: unused,
    reset: () => undefined,
    lock: { run: unused },
    replayer: { replay: unused, links: unused },
    accounts: [],
    allowedHosts: allowedHostsFor("127.0.0.1"),
    allowedOrigins: allowedOriginsFor(),
  });
  await app.close();
  return routes;
}

describe("the dev routes' Origin check (cross-site requests)", () => {
  const head = async () => Number(await rpc<string>(stack.rpcUrl, "eth_blockNumber"));

  it("refuses every control that changes something, with or without a body, from another site's page (403 cross_origin_refused), and changes nothing", async () => {
    const routes = await mutatingDevRoutes();
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining(["mine", "time", "mining", "drop", "reorg", "relayer", "reset", "rpc", "revert-next", "config"].map((name) => `POST /api/dev/${name}`)),
    );
    await rpc(stack.rpcUrl, "anvil_mine", ["0x1"]); // ahead of the clean state: a reset would go back
    const before = { head: await head(), faults: stack.faults.state(), serving: stack.faults.serving() };
    const balance = await rpc<string>(stack.rpcUrl, "eth_getBalance", [stack.relayer.address, "latest"]);
    const evil = { origin: "https://evil.example", "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors" };
    for (const { method, url } of routes) {
      for (const [what, headers, body] of [
        ["Origin, no body", evil, undefined],
        ["Origin, a JSON body", { origin: "https://evil.example" }, { json: {} }],
        ["Origin, a text/plain body (no preflight)", evil, { text: "{}" }],
        ["Origin null (a sandboxed frame)", { origin: "null" }, undefined],
        ["Sec-Fetch-Site: cross-site, no Origin", { "sec-fetch-site": "cross-site" }, undefined],
      ] as const) {
        expect(method, url).toBe("POST");
        const answer = await requestWithHost(`${stack.queueUrl}${url}`, `127.0.0.1:${port}`, { method: "POST", ...(body ?? {}), headers: { ...headers } });
        expect(answer.status, `${url} with ${what}`).toBe(403);
        expect(answer.type).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(answer.body), `${url} with ${what}`).toMatchObject({ status: 403, code: "cross_origin_refused", instance: url });
      }
    }
    expect({ head: await head(), faults: stack.faults.state(), serving: stack.faults.serving() }).toEqual(before);
    expect(await rpc<string>(stack.rpcUrl, "eth_getBalance", [stack.relayer.address, "latest"])).toBe(balance);
    // The same reset from the stack's own page goes through.
    const own = await requestWithHost(`${stack.queueUrl}/api/dev/reset`, `127.0.0.1:${port}`, { method: "POST", headers: { origin: new URL(stack.queueUrl).origin, "sec-fetch-site": "same-origin" } });
    expect(own.status).toBe(200);
    expect(await head()).toBeLessThan(before.head);
  });

  it("takes controls from the stack's own origin, loopback origins, its CORS origins, and clients that send no Origin", async () => {
    const allowed: Array<[string, Record<string, string>, string?]> = [
      ["no header at all (curl, Node)", {}],
      ["Sec-Fetch-Site: same-origin", { "sec-fetch-site": "same-origin" }],
      ["the stack's own origin", { origin: new URL(stack.queueUrl).origin, "sec-fetch-site": "same-origin" }],
      ["a front end on a localhost port", { origin: "http://localhost:5173", "sec-fetch-site": "cross-site" }],
      ["a front end on 127.0.0.1", { origin: "http://127.0.0.1:3000", "sec-fetch-site": "same-site" }],
      ["*.localhost", { origin: "http://app.localhost:5173" }],
      ["[::1]", { origin: "http://[::1]:8080" }],
      ["a CORS origin of the stack's", { origin: "https://app.example.test", "sec-fetch-site": "cross-site" }],
      ["its own origin under an allowed name", { origin: `http://devbox.test:${port}` }, `devbox.test:${port}`],
      ["its own origin under an allowed subdomain", { origin: "https://a.tunnel.example" }, "a.tunnel.example"],
    ];
    for (const [what, headers, host] of allowed) {
      const answer = await requestWithHost(`${stack.queueUrl}/api/dev/mine`, host ?? `127.0.0.1:${port}`, { method: "POST", body: { blocks: 1 }, headers });
      expect(answer.status, what).toBe(200);
    }
    const refused: Array<[string, Record<string, string>, string?]> = [
      ["another page under an allowed subdomain", { origin: "https://evil.tunnel.example" }, "a.tunnel.example"],
      ["an allowed name's page, sent to 127.0.0.1", { origin: "http://devbox.test" }],
      ["a name that starts like a loopback one", { origin: "http://127.0.0.1.evil.example" }],
      ["localhost over another scheme", { origin: "ftp://localhost" }],
      ["a CORS origin's other port", { origin: "https://app.example.test:8443" }],
    ];
    for (const [what, headers, host] of refused) {
      const answer = await requestWithHost(`${stack.queueUrl}/api/dev/mine`, host ?? `127.0.0.1:${port}`, { method: "POST", body: { blocks: 1 }, headers });
      expect(answer.status, what).toBe(403);
      expect(JSON.parse(answer.body).code, what).toBe("cross_origin_refused");
    }
    // Reads are not checked: CORS hides their answers from other sites.
    expect((await requestWithHost(`${stack.queueUrl}/api/dev/faults`, `127.0.0.1:${port}`, { headers: { origin: "https://evil.example" } })).status).toBe(200);
  });

  it("decides on Origin first, Sec-Fetch-Site only without one", () => {
    const allowed = allowedOriginsFor(["loopback", "https://app.example.test"]);
    expect(crossOriginRefusal({ host: "127.0.0.1:1" }, allowed)).toBeNull();
    expect(crossOriginRefusal({ host: "127.0.0.1:1", "sec-fetch-site": "none" }, allowed)).toBeNull();
    expect(crossOriginRefusal({ host: "127.0.0.1:1", "sec-fetch-site": "cross-site" }, allowed)).toContain("Sec-Fetch-Site");
    expect(crossOriginRefusal({ host: "127.0.0.1:1", origin: "http://localhost:5173", "sec-fetch-site": "cross-site" }, allowed)).toBeNull();
    expect(crossOriginRefusal({ host: "127.0.0.1:1", origin: "https://evil.example", "sec-fetch-site": "same-origin" }, allowed)).toContain("https://evil.example");
  });
});
