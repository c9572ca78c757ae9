import type { FastifyInstance } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { Problem, ProblemError } from "../src/problem.ts";
import type { RelayControl } from "../src/relay/control.ts";
import { JsonRpcError, jsonRpc } from "./json-rpc.ts";

/** The dev controls' prefix: present in a dev stack only, never in an operator's runtime (src/ has none). */
export const DEV_PREFIX = "/api/dev";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

interface DevDeps {
  rpcUrl: string;
  relayer: `0x${string}`;
  control: RelayControl | null;
  /** The stack's repro bundle, taken now (stack.save's bytes). */
  bundle: () => Promise<Buffer>;
}

/** anvil's refusal of a control is the chain's answer, not a bug: a 503 problem, not a 500. */
const rpc = <T>(url: string, method: string, params: unknown[] = []) =>
  jsonRpc<T>(url, method, params).catch((error: unknown) => {
    throw error instanceof JsonRpcError ? new ProblemError("chain_unavailable", error.message) : error;
  });

const head = async (url: string) => {
  const block = await rpc<{ number: string; timestamp: string }>(url, "eth_getBlockByNumber", ["latest", false]);
  return { number: Number(block.number), timestamp: Number(block.timestamp) };
};
const Head = z.strictObject({ number: z.int(), timestamp: z.int() }).meta({ description: "the chain's head after the control" });
const dev = (summary: string, description: string) => ({ tags: ["development only"], summary: `Development only: ${summary}`, description: `${description} Present in a dev stack only (never in an operator's runtime), and only for loopback clients.` });

/**
 * Dev controls over HTTP, for client developers testing what their code does when the chain or the
 * relayer misbehaves: mine, move time, hold and release mining, pause the relayer, set its balance.
 */
const devRoutes: FastifyPluginAsyncZod<DevDeps> = async (app, deps) => {
  // Not for anyone who can reach a non-loopback bind: they see no such routes.
  app.addHook("onRequest", async (request) => {
    if (!LOOPBACK.test(request.ip)) throw new ProblemError("route_not_found", `no route ${request.method} ${request.url.split("?")[0]}`);
  });

  app.post(`${DEV_PREFIX}/mine`, {
    schema: { ...dev("mine blocks", "Mines `blocks` empty blocks at once (default 1)."), body: z.strictObject({ blocks: z.int().min(1).max(10_000).default(1) }).default({ blocks: 1 }), response: { 200: Head, default: Problem } },
    handler: async (request) => {
      await rpc(deps.rpcUrl, "anvil_mine", [`0x${request.body.blocks.toString(16)}`]);
      return head(deps.rpcUrl);
    },
  });

  app.post(`${DEV_PREFIX}/time`, {
    schema: { ...dev("move time", "Moves chain time forward by `seconds` and mines a block with it (deadlines and quotes lapse)."), body: z.strictObject({ seconds: z.int().min(1).max(10 * 365 * 86_400) }), response: { 200: Head, default: Problem } },
    handler: async (request) => {
      await rpc(deps.rpcUrl, "evm_increaseTime", [request.body.seconds]);
      await rpc(deps.rpcUrl, "evm_mine");
      return head(deps.rpcUrl);
    },
  });

  app.post(`${DEV_PREFIX}/mining`, {
    schema: {
      ...dev("hold or release mining", "`hold`: no block is mined (transactions wait in the mempool: operations stay `submitted`). `auto`: a block per transaction again, and one is mined at once with whatever waited."),
      body: z.strictObject({ mode: z.enum(["hold", "auto"]) }),
      response: { 200: z.strictObject({ mode: z.enum(["hold", "auto"]), head: Head }), default: Problem },
    },
    handler: async (request) => {
      await rpc(deps.rpcUrl, "evm_setAutomine", [request.body.mode === "auto"]);
      if (request.body.mode === "auto") await rpc(deps.rpcUrl, "evm_mine");
      return { mode: request.body.mode, head: await head(deps.rpcUrl) };
    },
  });

  app.post(`${DEV_PREFIX}/drop`, {
    schema: {
      ...dev("drop an operation's transaction from the mempool", "Removes the operation's broadcast transaction from anvil's mempool, as a node that lost it would. The relayer notices the transaction is gone and broadcasts the same signed bytes again (hold mining first to see it: the operation stays `submitted`)."),
      body: z.strictObject({ operationId: z.string().min(1).max(100) }),
      response: { 200: z.strictObject({ dropped: z.string().regex(/^0x[0-9a-f]{64}$/) }), default: Problem },
    },
    handler: async (request) => {
      const op = deps.control?.operation(request.body.operationId);
      if (!op) throw new ProblemError("operation_not_found", `no operation ${request.body.operationId}`);
      const attempt = op.attempts.at(-1);
      if (!attempt || op.minedHash) throw new ProblemError("wrong_route", `operation ${op.id} has no transaction waiting in the mempool (${op.state})`);
      await rpc(deps.rpcUrl, "anvil_dropTransaction", [attempt.hash]);
      return { dropped: attempt.hash };
    },
  });

  app.get(`${DEV_PREFIX}/bundle`, {
    schema: {
      ...dev("a repro bundle of the stack", "The stack's repro bundle as it is now (`application/gzip`): chain, manifest and operations, no key or credential. `queue-devstack save <file>` writes it; `--load <file>` starts from it. Local stacks only."),
      response: { 200: z.any().meta({ description: "the bundle (application/gzip)" }), default: Problem },
    },
    handler: async (_request, reply) => {
      let bytes: Buffer;
      try {
        bytes = await deps.bundle();
      } catch (error) {
        throw new ProblemError("not_implemented", (error as Error).message);
      }
      return reply.type("application/gzip").send(bytes);
    },
  });

  app.post(`${DEV_PREFIX}/relayer`, {
    schema: {
      ...dev("pause the relayer, or set its balance", "`engine: \"paused\"` stops the relay engine at a step boundary: accepted operations wait, nothing is signed or broadcast; `\"running\"` resumes it. `balanceWei` sets the relayer's ETH balance (0: submissions answer 503 relayer_unfunded)."),
      body: z.strictObject({ engine: z.enum(["paused", "running"]).optional(), balanceWei: z.string().regex(/^(0|[1-9][0-9]{0,40})$/).optional() }),
      response: { 200: z.strictObject({ engine: z.enum(["paused", "running"]), balanceWei: z.string() }), default: Problem },
    },
    handler: async (request) => {
      const { control } = deps;
      if (!control) throw new ProblemError("not_implemented", "this stack's runtime has no relayer");
      if (request.body.engine === "paused") await control.pause("dev");
      if (request.body.engine === "running") control.resume("dev");
      if (request.body.balanceWei !== undefined) await rpc(deps.rpcUrl, "anvil_setBalance", [deps.relayer, `0x${BigInt(request.body.balanceWei).toString(16)}`]);
      const balance = await rpc<string>(deps.rpcUrl, "eth_getBalance", [deps.relayer, "latest"]);
      return { engine: control.paused() ? ("paused" as const) : ("running" as const), balanceWei: BigInt(balance).toString() };
    },
  });
};

export async function registerDevRoutes(app: FastifyInstance, deps: DevDeps): Promise<void> {
  await app.register(devRoutes as never, deps);
}
