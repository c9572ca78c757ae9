import { readFile } from "node:fs/promises";
import { execa } from "execa";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTION_ROUTES, type DevStack } from "../harness/index.ts";
import { CIRCUIT_BUILD_DIR } from "../harness/deployment/index.ts";
import { buildQueueRuntime } from "../src/server.ts";
import { RELAYER_KEY } from "./support/chain.ts";
import { postFrom, startForwardingProxy } from "./support/forwarding-proxy.ts";
import { builtRuntime } from "./support/runtime-process.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// Exposure: security headers on every answer, a per-client rate limit on mutating routes (an operator's
// runtime only), and a non-loopback bind that must be asked for.
let stack: DevStack;
withQueueStack({ client: false, timeout: 120_000 }, (started) => ({ stack } = started));

const post = (base: string, path: string) => fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });

describe("security headers", () => {
  it("on API answers and problems: a strict CSP, no sniffing, no framing; the docs page has its own CSP and loads", async () => {
    for (const response of [await fetch(`${stack.queueUrl}/api/queue/config`), await fetch(`${stack.queueUrl}/api/queue/nope`), await post(stack.queueUrl, "/api/queue/send-relay")]) {
      expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("x-frame-options")).toBe("SAMEORIGIN");
      expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    }
    const docs = await fetch(`${stack.queueUrl}/api/queue/docs/`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get("x-content-type-options")).toBe("nosniff");
    expect(docs.headers.get("content-security-policy")).toContain("script-src");
  });
});

describe("rate limit", () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = await buildQueueRuntime({
      manifest: await readFile(stack.manifestPath), rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, store: ":memory:",
      rateLimit: { max: 3, timeWindowMs: 60_000 },
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app?.close();
  });

  it("an operator's runtime answers 429 rate_limited, with Retry-After, past the limit on mutating routes; reads are never limited", async () => {
    for (let i = 0; i < 3; i++) expect((await post(base, "/api/queue/send-relay")).status).toBe(400);
    const limited = await post(base, "/api/queue/withdraw-relay");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("content-type")).toContain("application/problem+json");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await limited.json()) as { code: string }).code).toBe("rate_limited");
    for (let i = 0; i < 10; i++) expect((await fetch(`${base}/api/queue/config`)).status).toBe(200);
  });

  it("a dev stack has none: a test suite never trips it", async () => {
    for (let i = 0; i < 70; i++) expect((await post(stack.queueUrl, "/api/queue/quote")).status).toBe(400);
  });
});

// Issue 30, item 15: behind a reverse proxy every request comes from the proxy. With trustProxy naming
// it, the client it names in X-Forwarded-For is the one each per-client limit counts.
describe("behind a reverse proxy", () => {
  const A = "127.0.0.2";
  const B = "127.0.0.3";
  const apps: FastifyInstance[] = [];
  const proxies: Array<{ close: () => Promise<void> }> = [];
  afterAll(async () => {
    for (const proxy of proxies) await proxy.close();
    for (const app of apps) await app.close();
  });

  /** A runtime with small limits (5 mutating requests a minute, 2 live quotes per client), and a proxy in front of it. */
  async function proxiedRuntime(trustProxy?: string[]): Promise<string> {
    const app = await buildQueueRuntime({
      manifest: await readFile(stack.manifestPath), rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, store: ":memory:",
      rateLimit: { max: 5, timeWindowMs: 60_000 }, quotes: { maxLivePerClient: 2 }, ...(trustProxy ? { trustProxy } : {}),
    });
    apps.push(app);
    const proxy = await startForwardingProxy(await app.listen({ host: "127.0.0.1", port: 0 }));
    proxies.push(proxy);
    return proxy.url;
  }

  const quoteBody = () => {
    const [usdc, weth] = [6, 18].map((d) => stack.manifest.assets.find((a) => a.decimals === d)?.address);
    const deployment = { chainId: stack.manifest.chainId, poolAddress: stack.manifest.poolAddress, domain: stack.manifest.domain };
    return { deployment, route: ACTION_ROUTES.swap, assetIn: usdc, assetOut: weth, amountIn: "30000000" };
  };

  /** Client A uses up its quotes and its rate limit; what client B is answered then. */
  async function afterAUsesItsLimits(url: string) {
    const quote = (from: string, headers?: Record<string, string>) => postFrom(from, `${url}/api/queue/quote`, quoteBody(), headers);
    expect((await quote(A)).status).toBe(200);
    expect((await quote(A)).status).toBe(200);
    expect((await quote(A)).body.code).toBe("too_many_quotes");
    const bQuote = await quote(B);
    // A client naming another in its own X-Forwarded-For is still itself: the proxy appends where it came from.
    const forged = await quote("127.0.0.4", { "x-forwarded-for": A });
    let junk = 0;
    while ((await postFrom(A, `${url}/api/queue/send-relay`, {})).status !== 429) expect(++junk).toBeLessThan(10);
    const bFinalize = await postFrom(B, `${url}/api/queue/finalize`, {});
    const bWithdraw = await postFrom(B, `${url}/api/queue/withdraw-relay`, {});
    return { bQuote: bQuote.body.code ?? bQuote.status, forged: forged.body.code ?? forged.status, bFinalize: bFinalize.body.code, bWithdraw: bWithdraw.body.code };
  }

  it("with trustProxy naming the proxy, one client's quota and rate limit no longer block another's", async () => {
    const url = await proxiedRuntime(["127.0.0.1"]);
    // 400: the junk bodies are refused for what they are, not for A's requests.
    expect(await afterAUsesItsLimits(url)).toEqual({ bQuote: 200, forged: 200, bFinalize: "invalid_request", bWithdraw: "invalid_request" });
  });

  it("without it, every client behind the proxy is the proxy: one client's quotes and junk POSTs block the others (429)", async () => {
    const url = await proxiedRuntime();
    expect(await afterAUsesItsLimits(url)).toEqual({ bQuote: "too_many_quotes", forged: "too_many_quotes", bFinalize: "rate_limited", bWithdraw: "rate_limited" });
  });
});

describe("binding", () => {
  it("the operator's runtime refuses a non-loopback --host without --expose, and warns with it", async () => {
    const args = [...builtRuntime(), "--manifest", stack.manifestPath, "--artifacts", CIRCUIT_BUILD_DIR, "--port", "0", "--host", "0.0.0.0"];
    const refused = await execa(process.execPath, args, { env: { QUEUE_RPC_URL: stack.rpcUrl }, reject: false });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain("--expose");
    const exposed = execa(process.execPath, [...args, "--expose", "--store", ":memory:"], { env: { QUEUE_RPC_URL: stack.rpcUrl, QUEUE_RELAYER_KEY: RELAYER_KEY }, reject: false });
    const warned = await new Promise<string>((resolve) => {
      let err = "";
      exposed.stderr?.on("data", (d: Buffer) => ((err += d.toString()), err.includes("WARNING") && resolve(err)));
      void exposed.then((r) => resolve(r.stderr));
    });
    exposed.kill("SIGTERM");
    await exposed;
    expect(warned).toContain("WARNING: listening on 0.0.0.0");
  });

  it("--trust-proxy takes proxy addresses and CIDRs; a hop count or a non-address is refused before anything starts", async () => {
    const args = [...builtRuntime(), "--manifest", stack.manifestPath, "--port", "0"];
    for (const value of ["1", "127.0.0.1,proxy.example"]) {
      const refused = await execa(process.execPath, [...args, "--trust-proxy", value], { env: { QUEUE_RPC_URL: stack.rpcUrl }, reject: false });
      expect(refused.exitCode).toBe(2);
      expect(refused.stderr).toContain("--trust-proxy");
    }
  });

  it("a negative number flag is named with the range it takes, not as a missing value (issue 40, item 10)", async () => {
    const refused = await execa(process.execPath, [...builtRuntime(), "--manifest", stack.manifestPath, "--port", "-1"], { env: { QUEUE_RPC_URL: stack.rpcUrl }, reject: false });
    expect({ exitCode: refused.exitCode, stderr: refused.stderr }).toEqual({ exitCode: 2, stderr: "queue-runtime: --port takes a whole number from 0 to 65535" });
  });
});
