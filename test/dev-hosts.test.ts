import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AllowedHostError, startDevStack, type DevStack } from "../harness/index.ts";
import { allowedHostsFor, hostAllowed, hostnameOf } from "../harness/dev/index.ts";
import { requestWithHost } from "./support/forged-host.ts";
import { rpc } from "./support/rpc.ts";

// DNS rebinding: a page on a domain that resolves to 127.0.0.1 is same-origin with the stack (CORS does
// not apply), but its requests carry its own name in Host. The dev routes answer loopback names, the
// stack's own address and the names the user adds, and nothing else.
let stack: DevStack;
let port: number;
beforeAll(async () => {
  stack = await startDevStack({ allowedHosts: ["devbox.test", ".tunnel.example", "fd00::7"] });
  port = Number(new URL(stack.queueUrl).port);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
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
