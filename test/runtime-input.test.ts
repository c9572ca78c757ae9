import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { readFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import type { FastifyInstance } from "fastify";
import { CIRCUIT_BUILD_DIR } from "../harness/deployment/index.ts";
import type { DevStack } from "../harness/index.ts";
import { createAccountKeys, toRelayRequest } from "../harness/client/index.ts";
import { buildQueueRuntime } from "../src/server.ts";
import { RELAYER_KEY } from "./support/chain.ts";
import { poolFixture } from "./support/pool.ts";
import { installProblemHandlers } from "../src/errors.ts";
import { validatorCompiler } from "../src/validation.ts";
import { HttpRequestError, IntegerOutOfRangeError, InternalRpcError, RpcRequestError, TimeoutError } from "viem";
import { chainUnavailable } from "../src/admission/refusals.ts";
import { createChainClient } from "../src/chain/client.ts";
import { Relayer } from "../src/relay/relayer.ts";
import { relaySettings } from "../src/server.ts";
import { SqliteOperationStore } from "../src/store/store.ts";
import { privateKeyToAccount } from "viem/accounts";
import { ProblemError } from "../src/problem.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { unprovedSend } from "./support/unproved-send.ts";

// Malformed input, from outside: whatever a client sends, the answer is a problem with a stable code
// naming what is wrong, never a 500.
let stack: DevStack;
withQueueStack({ client: false }, (started) => ({ stack } = started));

/** Every leaf of a JSON value with its path. */
function leaves(value: unknown, path: (string | number)[] = []): Array<{ path: (string | number)[]; value: unknown }> {
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, [...path, i]));
  if (value !== null && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
  return [{ path, value }];
}

function withLeaf(body: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  at[path.at(-1) as string | number] = value;
  return copy;
}

const UINT256_LIMIT = (2n ** 256n).toString();
const INT256_HIGH = (2n ** 255n).toString();
const INT256_LOW = (-(2n ** 255n) - 1n).toString();

/** Strings that are not decimal integers (each was a 500 once), and integers out of range. */
const NOT_DECIMAL = [
  "abc", "1e10", "NaN", "Infinity", "-Infinity", "١٢٣", "٣", "0xzz", "0x10", "0b1", "0o7", "", " ", " 1", "1 ", "\t1", "1\n", "+1", "01", "-01", "1.5", "1.", ".5",
  "1_000", "1,000", "-", "--1", "\u0000", "\u00001", "１", "1".repeat(100), "9".repeat(79), "💥",
];
const NOT_A_STRING = [1, -1, 1.5, null, true, [], {}, ["1"]];

describe("integer fields: any malformed value is a 400 invalid_request naming the field", () => {
  const post = (body: unknown) =>
    fetch(`${stack.queueUrl}/api/queue/send-relay`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  it("every integer field of the relay body, every malformed value", async () => {
    const base = unprovedSend(stack);
    const stringInts = leaves(base).filter((l) => typeof l.value === "string" && /^-?[0-9]+$/.test(l.value));
    expect(stringInts.map((l) => l.path.join("."))).toHaveLength(18); // proof 8, public inputs 8, extAmount, fee
    const cases: Array<{ path: (string | number)[]; value: unknown }> = [];
    for (const { path } of stringInts) {
      const outOfRange = path.at(-1) === "extAmount" ? [INT256_HIGH, INT256_LOW] : [UINT256_LIMIT, "-1"];
      for (const value of [...NOT_DECIMAL, ...NOT_A_STRING, ...outOfRange]) cases.push({ path, value });
    }
    // deployment.chainId is a JSON integer.
    for (const value of ["11155111", 11155111.5, 1e300, 2 ** 53, null, true, [], {}]) cases.push({ path: ["deployment", "chainId"], value });

    const failures: string[] = [];
    for (let i = 0; i < cases.length; i += 16) {
      await Promise.all(
        cases.slice(i, i + 16).map(async ({ path, value }) => {
          const response = await post(withLeaf(base, path, value));
          const where = `/${path.join("/")}`;
          const text = await response.text();
          const body = JSON.parse(text) as { code?: string; detail?: string; issues?: Array<{ path: string }> };
          const ok =
            response.status === 400 &&
            /^application\/problem\+json/.test(response.headers.get("content-type") ?? "") &&
            body.code === "invalid_request" &&
            (body.detail ?? "").includes(`body${where}`) &&
            (body.issues ?? []).length > 0 &&
            (body.issues ?? []).every((issue) => issue.path === where);
          if (!ok) failures.push(`${where} = ${JSON.stringify(value)}: ${response.status} ${text.slice(0, 200)}`);
        }),
      );
    }
    expect(failures).toEqual([]);
  });

  it("the quote's amountIn and the finalize's reservationId", async () => {
    const failures: string[] = [];
    const deployment = { chainId: stack.manifest.chainId, poolAddress: stack.manifest.poolAddress, domain: stack.manifest.domain };
    const assets = stack.manifest.assets.map((a) => a.address);
    const cases = [
      ...[...NOT_DECIMAL, ...NOT_A_STRING, "0", (2n ** 248n).toString()].map((value) => ({ path: "/api/queue/quote", where: "/amountIn", body: { deployment, route: `0x${"73".repeat(1)}${"0".repeat(62)}`, assetIn: assets[0], assetOut: assets[1], amountIn: value } })),
      ...[...NOT_DECIMAL, ...NOT_A_STRING, "0x12", `0x${"AB".repeat(32)}`].map((value) => ({ path: "/api/queue/finalize", where: "/reservationId", body: { deployment, reservationId: value } })),
    ];
    for (const { path, where, body } of cases) {
      const response = await fetch(`${stack.queueUrl}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      const text = await response.text();
      const problem = JSON.parse(text) as { code?: string; issues?: Array<{ path: string }> };
      const ok = response.status === 400 && problem.code === "invalid_request" && (problem.issues ?? []).length > 0 && (problem.issues ?? []).every((issue) => issue.path === where);
      if (!ok) failures.push(`${path} ${where} = ${JSON.stringify(body)}: ${response.status} ${text.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });

  it("the integer query parameter (/assets?blockNumber=)", async () => {
    const failures: string[] = [];
    for (const value of [...NOT_DECIMAL, "-1", "99999999999999999"]) {
      const response = await fetch(`${stack.queueUrl}/api/queue/assets?blockNumber=${encodeURIComponent(value)}`);
      const text = await response.text();
      const body = JSON.parse(text) as { code?: string; issues?: Array<{ path: string }> };
      const ok =
        response.status === 400 &&
        /^application\/problem\+json/.test(response.headers.get("content-type") ?? "") &&
        body.code === "invalid_request" &&
        (body.issues ?? []).some((issue) => issue.path === "/blockNumber");
      if (!ok) failures.push(`blockNumber=${JSON.stringify(value)}: ${response.status} ${text.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });
});

describe("an action's deadline is a uint64", () => {
  const post = (body: unknown) => fetch(`${stack.queueUrl}/api/queue/withdraw-relay`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const withDeadline = (deadline: string) => ({
    ...unprovedSend(stack),
    action: { quoteId: `qt_${"ab".repeat(32)}`, routeId: `0x${"73".repeat(32)}`, outputAsset: stack.manifest.assets[1]?.address, minOutput: "1", outputPrecommitment: "1", deadline, finalizeFee: "0", finalizer: `0x${"11".repeat(20)}` },
  });

  it("2^64 or more is a 400 naming action.deadline (it was a 503 chain_unavailable: viem could not encode it); 2^64 - 1 passes the schema", async () => {
    for (const deadline of [(2n ** 64n).toString(), (2n ** 200n).toString(), (2n ** 256n - 1n).toString()]) {
      const answer = await post(withDeadline(deadline));
      const body = (await answer.json()) as { code: string; issues?: Array<{ path: string }> };
      expect({ status: answer.status, code: body.code, paths: body.issues?.map((i) => i.path) }, deadline).toEqual({ status: 400, code: "invalid_request", paths: ["/action/deadline"] });
    }
    // Past the schema, into the checks: refused for what it is, not as an outage.
    const largest = await post(withDeadline((2n ** 64n - 1n).toString()));
    expect(largest.status).toBe(422);
  });

  it("only an error on the way to the node is chain_unavailable; any other error is left as it is (a 500)", () => {
    const code = (error: unknown) => {
      const mapped = chainUnavailable(error);
      return mapped instanceof ProblemError ? mapped.code : "unexpected";
    };
    const http = new HttpRequestError({ url: "http://127.0.0.1:1", status: 503 });
    expect(code(http)).toBe("chain_unavailable");
    expect(code(new TimeoutError({ body: {}, url: "http://127.0.0.1:1" }))).toBe("chain_unavailable");
    expect(code(new InternalRpcError(new RpcRequestError({ body: {}, error: { code: -32603, message: "down" }, url: "http://127.0.0.1:1" })))).toBe("chain_unavailable");
    expect(code(new IntegerOutOfRangeError({ max: "18446744073709551615", min: "0", signed: false, size: 8, value: "18446744073709551616" }))).toBe("unexpected");
    expect(code(new TypeError("a bug"))).toBe("unexpected");
    expect(code(new ProblemError("unknown_root", "x"))).toBe("unknown_root");
  });

  it("a revert the node answers is not chain_unavailable, though viem carries it in an RpcRequestError", async () => {
    const chain = createChainClient(stack.rpcUrl, { timeoutMs: 3_000, retryCount: 0 });
    // The Pool has no such function: the node answers "execution reverted" (a question's fault, not an outage).
    const reverted = await chain.call({ to: stack.manifest.poolAddress as `0x${string}`, data: "0xdeadbeef" }).then(() => null, (error: unknown) => error);
    expect(reverted).not.toBeNull();
    const mapped = chainUnavailable(reverted);
    expect(mapped instanceof ProblemError ? mapped.code : "left as it is").toBe("left as it is");
  });
});

describe("an unexpected error during an admission", () => {
  it("is a 500 internal_error logged with the request's kind, hash and claims, not a 503 chain_unavailable", async () => {
    const logged: Array<{ context: Record<string, unknown>; message: string }> = [];
    const quiet = () => {};
    const log = { level: "info", error: (context: Record<string, unknown>, message: string) => void logged.push({ context, message }), warn: quiet, info: quiet, debug: quiet, trace: quiet, fatal: quiet, silent: quiet, child: () => log };
    const store = new SqliteOperationStore(":memory:");
    const chain = createChainClient(stack.rpcUrl, { timeoutMs: 3_000, retryCount: 0 });
    const relayer = new Relayer({ store, chain, engineChain: chain, account: privateKeyToAccount(RELAYER_KEY), config: stack.manifest, settings: relaySettings(), log: log as never, chainTimeoutMs: 3_000 });
    try {
      // A value past the schema that no check foresaw (as a bug would make one): BigInt() throws a SyntaxError.
      const request = unprovedSend(stack);
      request.publicInputs.extDataHash = "not a number";
      const refusal = await relayer.submit("send", request as never, "key-1").then(() => null, (error: unknown) => error);
      expect(refusal).toBeInstanceOf(ProblemError);
      expect(refusal).toMatchObject({ code: "internal_error", status: 500 });
      expect(logged).toHaveLength(1);
      expect(logged[0]?.message).toBe("admission failed unexpectedly");
      expect(logged[0]?.context).toMatchObject({ kind: "send", idempotencyKey: "key-1", claims: ["11", "12"], requestHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(logged[0]?.context.err).toBeInstanceOf(SyntaxError);
      expect(store.countLive()).toBe(0);
    } finally {
      store.close();
    }
  });
});

describe("the validator compiler", () => {
  it("turns an exception thrown inside a schema into a 400 invalid_request, not a 500", async () => {
    const app = Fastify();
    app.setValidatorCompiler(validatorCompiler);
    installProblemHandlers(app, new Map());
    const Throws = z.strictObject({ n: z.string().refine((v) => BigInt(v) > 0n) });
    app.post("/t", { schema: { body: Throws } }, async () => ({ ok: true }));
    try {
      const thrown = await app.inject({ method: "POST", url: "/t", payload: { n: "abc" } });
      expect(thrown.statusCode).toBe(400);
      expect(thrown.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(thrown.json()).toMatchObject({ code: "invalid_request", issues: [{ path: "/" }] });
      expect(thrown.json().detail).toContain("body");
      // Ordinary failures keep their path.
      const failed = await app.inject({ method: "POST", url: "/t", payload: { n: 1 } });
      expect(failed.statusCode).toBe(400);
      expect(failed.json()).toMatchObject({ code: "invalid_request", issues: [{ path: "/n" }] });
      expect((await app.inject({ method: "POST", url: "/t", payload: { n: "5" } })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe("an asset without a relay-fee entry", () => {
  it("is refused (422 unsupported_asset): its minimum fee is not 0, it is not relayed at all", async () => {
    const pool = await poolFixture(stack);
    // The runtime's manifest lists the asset as a funding asset, but has no relay fee for it.
    const manifest = JSON.parse(await readFile(stack.manifestPath, "utf8"));
    manifest.relayFees.fees = manifest.relayFees.fees.filter((f: { asset: string }) => f.asset.toLowerCase() !== pool.asset.toLowerCase());
    expect(manifest.relayFees.fees.length).toBeGreaterThan(0);
    const app = await buildQueueRuntime({
      manifest: Buffer.from(JSON.stringify(manifest)), rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, store: ":memory:",
    });
    try {
      // A valid proof of nothing: dummy inputs, no outputs, no fee. It would cost the relayer ~1.28M gas.
      const { tree } = await pool.sync();
      const { transaction } = await pool.prove({ tree, keys: createAccountKeys(), inputs: [], outputs: [], fee: 0n, relayer: stack.relayer.address });
      const answer = await app.inject({ method: "POST", url: "/api/queue/send-relay", payload: toRelayRequest(stack.manifest, transaction) });
      expect(answer.statusCode).toBe(422);
      expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(answer.json()).toMatchObject({ code: "unsupported_asset" });
      expect(answer.json().detail).toContain("relay fee");
    } finally {
      await app.close();
    }
  });
});

/** One HTTP response, as read off a raw socket. */
interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function parseResponses(raw: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = raw;
  while (rest.length > 0) {
    const end = rest.indexOf("\r\n\r\n");
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split("\r\n");
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
    const length = Number(headers["content-length"] ?? 0);
    const bodyBytes = Buffer.from(rest.slice(end + 4), "latin1").subarray(0, length);
    responses.push({ status: Number(statusLine?.split(" ")[1]), headers, body: bodyBytes.toString("utf8") });
    rest = Buffer.from(rest.slice(end + 4), "latin1").subarray(length).toString("latin1");
  }
  return responses;
}

/**
 * Talks raw TCP to a listening runtime: `script` writes whatever it likes; everything the server sends
 * until it closes the connection (or `giveUpMs` pass) is parsed into responses.
 */
async function exchange(port: number, script: (socket: Socket) => Promise<void> | void, giveUpMs = 10_000): Promise<RawResponse[]> {
  const socket = connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const chunks: Buffer[] = [];
  socket.on("data", (d: Buffer) => chunks.push(d));
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => {});
  await script(socket);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, giveUpMs)))]);
  clearTimeout(timer);
  socket.destroy();
  return parseResponses(Buffer.concat(chunks).toString("latin1"));
}

function expectProblem(response: RawResponse | undefined, status: number, code: string): void {
  expect(response, `a ${status} ${code} answer`).toBeDefined();
  expect(response?.status).toBe(status);
  expect(response?.headers["content-type"]).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(response?.body ?? "{}");
  expect(body).toMatchObject({ type: `urn:queue-devstack:problem:${code}`, status, code });
  expect(typeof body.title).toBe("string");
  expect(typeof body.detail).toBe("string");
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("errors answered by the HTTP layer itself are problems too", () => {
  let app: FastifyInstance;
  let port: number;
  const TIMEOUT_MS = 500;
  beforeAll(async () => {
    app = await buildQueueRuntime({
      manifest: await readFile(stack.manifestPath), rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, store: ":memory:",
      requestTimeoutMs: TIMEOUT_MS, headersTimeoutMs: TIMEOUT_MS,
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    port = (app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await app?.close();
  });

  it("431 headers_too_large: a 20 KB header", async () => {
    const [answer] = await exchange(port, (s) => void s.write(`GET /api/queue/config HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20 * 1024)}\r\n\r\n`));
    expectProblem(answer, 431, "headers_too_large");
  });

  it("400 invalid_request: a request line of garbage, also after a good request on the same connection", async () => {
    const [garbage] = await exchange(port, (s) => void s.write("GARBAGE\r\n\r\n"));
    expectProblem(garbage, 400, "invalid_request");
    const [ok, after] = await exchange(port, async (s) => {
      s.write("GET /api/queue/networks HTTP/1.1\r\nHost: x\r\n\r\n");
      await pause(200);
      s.write("\x00\x01 nonsense\r\n\r\n");
    });
    expect(ok?.status).toBe(200);
    expectProblem(after, 400, "invalid_request");
  });

  it("408 request_timeout: headers, or a body, that never finish within requestTimeoutMs", async () => {
    const [headers] = await exchange(port, (s) => void s.write("GET /api/queue/config HTTP/1.1\r\nHost: x\r\n"));
    expectProblem(headers, 408, "request_timeout");
    const [body] = await exchange(port, (s) =>
      void s.write("POST /api/queue/send-relay HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"),
    );
    expectProblem(body, 408, "request_timeout");
  });

  it("404, 405, 413 and a malformed URL, over the wire", async () => {
    const send = (request: string) => exchange(port, (s) => void s.write(request)).then((r) => r[0]);
    expectProblem(await send("GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), 404, "route_not_found");
    const notAllowed = await send("DELETE /api/queue/config HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expectProblem(notAllowed, 405, "method_not_allowed");
    expect(notAllowed?.headers.allow).toBe("GET");
    const big = `{"pad":"${"x".repeat(70 * 1024)}"}`;
    expectProblem(await send(`POST /api/queue/send-relay HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n${big}`), 413, "payload_too_large");
    expectProblem(await send("GET /api/queue/artifacts/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), 400, "invalid_request");
    expectProblem(await send(`GET /api/queue/artifacts/${"n".repeat(200)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`), 400, "invalid_request");
  });
});

describe("a request that arrives while the runtime is closing", () => {
  it("is a 503 shutting_down problem with Connection: close, and the security headers of every answer", async () => {
    const app = await buildQueueRuntime({
      manifest: await readFile(stack.manifestPath), rpcUrl: stack.rpcUrl, relayerPrivateKey: RELAYER_KEY, artifactsDir: CIRCUIT_BUILD_DIR, store: ":memory:",
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const port = (app.server.address() as { port: number }).port;
    let closing: Promise<void> | undefined;
    try {
      const [answer] = await exchange(port, async (s) => {
        s.write("GET /api/queue/config HTTP/1.1\r\n"); // a request begun: the connection is not idle, close() waits for it
        await pause(200);
        closing = app.close();
        for (let i = 0; i < 100 && app.server.listening; i++) await pause(20);
        expect(app.server.listening).toBe(false);
        s.write("Host: x\r\n\r\n");
      });
      expectProblem(answer, 503, "shutting_down");
      expect(answer?.headers.connection).toBe("close");
      expect(Number(answer?.headers["retry-after"])).toBeGreaterThan(0);
      expect(answer?.headers["content-security-policy"]).toContain("default-src 'none'");
      expect(answer?.headers["x-content-type-options"]).toBe("nosniff");
    } finally {
      await (closing ?? app.close());
    }
  });
});

describe("status queries, whose validation is kept per id (issue 32, item 3)", () => {
  it("the same id gets the same answer every time; an extra field, a second id or an over-long one is a 400 whether the id was seen or not", async () => {
    const status = async (query: string) => {
      const response = await fetch(`${stack.queueUrl}/api/queue/send-status?${query}`);
      return { status: response.status, code: ((await response.json()) as { code?: string }).code };
    };
    for (let i = 0; i < 3; i++) expect(await status("id=op_kept")).toEqual({ status: 404, code: "operation_not_found" });
    expect(await status("id=op_kept&extra=1")).toEqual({ status: 400, code: "invalid_request" });
    expect(await status("id=op_kept&id=op_other")).toEqual({ status: 400, code: "invalid_request" });
    const long = `op_${"x".repeat(120)}`;
    for (let i = 0; i < 2; i++) expect(await status(`id=${long}`)).toEqual({ status: 400, code: "invalid_request" });
    expect(await status("id=")).toEqual({ status: 400, code: "invalid_request" });
    expect(await status("id=op_kept")).toEqual({ status: 404, code: "operation_not_found" });
  });
});
