import type { FastifyInstance } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { Problem, ProblemError } from "../../src/problem.ts";
import { chainUnavailable } from "../../src/relay/checks.ts";
import type { RelayControl } from "../../src/relay/control.ts";
import { JsonRpcError, jsonRpc } from "../chain/index.ts";
import type { RpcFaultProxy } from "../chain/index.ts";
import type { DeploymentSwitch } from "./deployment-switch.ts";
import type { Trace } from "../trace/index.ts";
import { hostAllowed, hostnameOf, type AllowedHosts } from "./allowed-hosts.ts";
import { registerDashboard } from "../dashboard/index.ts";
import { refuseCrossOrigin, type AllowedOrigins } from "./cross-origin.ts";
import type { ControlLock } from "./control-lock.ts";
import { SnapshotError } from "./snapshot.ts";
import { DEV_PROBLEMS, devProblem } from "./problems/index.ts";
import { documentProblems } from "../../src/openapi.ts";
import { replayRoutes, type Replayer } from "../replay/index.ts";

/** The dev controls' prefix: present in a dev stack only, never in an operator's runtime (src/ has none). */
export const DEV_PREFIX = "/api/dev";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

interface DevDeps {
  /** The dev controls one at a time (with the stack's own snapshot, revert, reset, save and serve). */
  lock: ControlLock;
  rpcUrl: string;
  relayer: `0x${string}`;
  control: RelayControl | null;
  /** The proxy between the runtime and anvil that injects RPC faults. */
  faults: RpcFaultProxy;
  /** An operation's call trace (stack.trace), or undefined for an unknown id. */
  trace: (operationId: string) => Promise<Trace | undefined>;
  /** Which deployment the queue URL serves. */
  deployments: DeploymentSwitch;
  /** The stack's repro bundle, taken now (stack.save's bytes). */
  bundle: () => Promise<Uint8Array>;
  /** The dev accounts (stack.accounts), for the dashboard's balances. */
  accounts: ReadonlyArray<{ address: `0x${string}`; anvilIndex: number }>;
  /** Replays of stored operations (stack.replay). */
  replayer: Replayer;
  /** Back to the stack's clean state (stack.reset); undefined until the stack's snapshots are ready. */
  reset: () => (() => Promise<void>) | undefined;
}

/** anvil's refusal of a control is the chain's answer, not a bug: a 503 problem, not a 500. */
const rpc = <T>(url: string, method: string, params: unknown[] = []) =>
  jsonRpc<T>(url, method, params).catch((error: unknown) => {
    throw error instanceof JsonRpcError ? new ProblemError("chain_unavailable", error.message) : error;
  });

const head = async (url: string) => {
  const block = await rpc<{ number: string; timestamp: string } | null>(url, "eth_getBlockByNumber", ["latest", false]);
  // anvil answers no head after a failed revert to a snapshot whose block a reorg replaced, until a block is mined.
  if (!block) throw new ProblemError("chain_unavailable", "anvil has no head block right now (a revert to a lost snapshot leaves it so): mine a block or reset the stack", { headers: { "retry-after": "1" } });
  return { number: Number(block.number), timestamp: Number(block.timestamp) };
};
const Head = z.strictObject({ number: z.int(), timestamp: z.int() }).meta({ description: "the chain's head after the control" });
const dev = (summary: string, description: string) => ({ tags: ["development only"], summary: `Development only: ${summary}`, description: `${description} Present in a dev stack only (never in an operator's runtime), and only for loopback clients under a loopback or allowed Host name (403 host_not_allowed otherwise); a change asked from another site's page is refused (403 cross_origin_refused).` });

/**
 * Dev controls over HTTP, for client developers testing what their code does when the chain or the
 * relayer misbehaves: mine, move time, hold and release mining, pause the relayer, set its balance.
 */
const devRoutes: FastifyPluginAsyncZod<DevDeps> = async (app, deps) => {
  app.post(`${DEV_PREFIX}/mine`, {
    schema: { ...dev("mine blocks", "Mines `blocks` empty blocks at once (default 1)."), body: z.strictObject({ blocks: z.int().min(1).max(10_000).default(1) }).default({ blocks: 1 }), response: { 200: Head, default: Problem } },
    handler: async (request) =>
      deps.lock.run(async () => {
        await rpc(deps.rpcUrl, "anvil_mine", [`0x${request.body.blocks.toString(16)}`]);
        return head(deps.rpcUrl);
      }),
  });

  app.post(`${DEV_PREFIX}/time`, {
    schema: { ...dev("move time", "Moves chain time forward by `seconds` and mines a block with it (deadlines and quotes lapse)."), body: z.strictObject({ seconds: z.int().min(1).max(10 * 365 * 86_400) }), response: { 200: Head, default: Problem } },
    handler: async (request) =>
      deps.lock.run(async () => {
        await rpc(deps.rpcUrl, "evm_increaseTime", [request.body.seconds]);
        await rpc(deps.rpcUrl, "evm_mine");
        return head(deps.rpcUrl);
      }),
  });

  app.post(`${DEV_PREFIX}/mining`, {
    schema: {
      ...dev("hold or release mining", "`hold`: no block is mined (transactions wait in the mempool: operations stay `submitted`). `auto`: a block per transaction again, and one is mined at once with whatever waited."),
      body: z.strictObject({ mode: z.enum(["hold", "auto"]) }),
      response: { 200: z.strictObject({ mode: z.enum(["hold", "auto"]), head: Head }), default: Problem },
    },
    handler: async (request) =>
      deps.lock.run(async () => {
        await rpc(deps.rpcUrl, "evm_setAutomine", [request.body.mode === "auto"]);
        // anvil's evm_setAutomine(false) leaves interval mining on: held means no block at all.
        if (request.body.mode === "hold") await rpc(deps.rpcUrl, "evm_setIntervalMining", [0]);
        if (request.body.mode === "auto") await rpc(deps.rpcUrl, "evm_mine");
        return { mode: request.body.mode, head: await head(deps.rpcUrl) };
      }),
  });

  app.post(`${DEV_PREFIX}/drop`, {
    schema: {
      ...dev("drop an operation's transaction from the mempool", "Removes the operation's broadcast transaction from anvil's mempool, as a node that lost it would. The relayer notices the transaction is gone and broadcasts the same signed bytes again (hold mining first to see it: the operation stays `submitted`)."),
      body: z.strictObject({ operationId: z.string().min(1).max(100) }),
      response: { 200: z.strictObject({ dropped: z.string().regex(/^0x[0-9a-f]{64}$/) }), default: Problem },
    },
    handler: async (request) =>
      deps.lock.run(async () => {
        const op = deps.control?.operation(request.body.operationId);
        if (!op) throw new ProblemError("operation_not_found", `no operation ${request.body.operationId}`);
        const attempt = op.attempts.at(-1);
        if (!attempt || op.minedHash) throw new ProblemError("wrong_route", `operation ${op.id} has no transaction waiting in the mempool (${op.state})`);
        await rpc(deps.rpcUrl, "anvil_dropTransaction", [attempt.hash]);
        return { dropped: attempt.hash };
      }),
  });

  app.post(`${DEV_PREFIX}/reorg`, {
    schema: {
      ...dev(
        "reorg the last blocks",
        "Replaces the last `depth` blocks with empty ones (same height, new hashes) and sends their transactions again, as a node does after a reorg: with automine they are mined at once in new blocks (an operation is `included` in another block), with mining held they wait in the mempool (an operation goes back to `submitted`). An operation already `confirmed` stays so: start the stack with more `--confirmations` to see its reorg. It cannot go deeper than the chain's history (a chain loaded without its past states keeps none below the block it was loaded at).",
      ),
      body: z.strictObject({ depth: z.int().min(1).max(64).default(1) }).default({ depth: 1 }),
      response: {
        200: z.strictObject({ depth: z.int(), head: Head, resent: z.array(z.string()).meta({ description: "the reorged blocks' transactions, sent again in order" }), mined: z.boolean().meta({ description: "whether they were mined again at once (automine)" }) }),
        default: Problem,
      },
    },
    handler: async (request) =>
      deps.lock.run(async () => {
        const { depth } = request.body;
        const top = (await head(deps.rpcUrl)).number;
        if (depth > top) throw new ProblemError("wrong_route", `the chain has only ${top} blocks`);
        const raws: Array<{ hash: string; raw: string }> = [];
        for (let n = top - depth + 1; n <= top; n++) {
          const block = await rpc<{ transactions: string[] } | null>(deps.rpcUrl, "eth_getBlockByNumber", [`0x${n.toString(16)}`, false]);
          // A block anvil cannot answer for below its head (one being mined, or a chain a failed revert left headless): try again.
          if (!block) throw new ProblemError("chain_unavailable", `anvil has no block ${n} below its head ${top} right now; try again`, { headers: { "retry-after": "1" } });
          for (const hash of block.transactions) raws.push({ hash, raw: await rpc<string>(deps.rpcUrl, "eth_getRawTransactionByHash", [hash]) });
        }
        // anvil_reorg drops the transactions of the blocks it replaces; a real node puts them back in its pool.
        await jsonRpc(deps.rpcUrl, "anvil_reorg", [depth, []]).catch((error: unknown) => {
          throw error instanceof JsonRpcError
            ? new ProblemError("wrong_route", `anvil cannot reorg ${depth} block(s) here (${error.message}): it keeps no state below the block its chain was loaded at`)
            : error;
        });
        for (const { raw } of raws) {
          // The relayer may have re-broadcast its own bytes already: "already known" is the same transaction.
          await jsonRpc(deps.rpcUrl, "eth_sendRawTransaction", [raw]).catch(() => {});
        }
        const mined = await rpc<boolean>(deps.rpcUrl, "anvil_getAutomine");
        // With automine, anvil mines them one block each after it answers: the answer waits for that (at
        // most 2 s), so it says the head they were mined to, and the next control meets a still chain.
        for (const started = performance.now(); mined && raws.length > 0 && performance.now() - started < 2_000; ) {
          if (Number((await rpc<{ pending: string }>(deps.rpcUrl, "txpool_status")).pending) === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        return { depth, head: await head(deps.rpcUrl), resent: raws.map((r) => r.hash), mined };
      }),
  });

  app.get(`${DEV_PREFIX}/trace`, {
    schema: {
      ...dev(
        "an operation's call trace",
        "The call tree of an operation's mined transaction (`debug_traceTransaction`), or, for one never mined (a refusal the stack kept, say), the relayer's call of it on the block it failed at: every contract named from the manifest, every function from the fixtures' ABIs, each revert's custom error decoded (`error`: `\"InvalidProof()\"`). `queue-devstack trace <id>` prints `text`.",
      ),
      querystring: z.strictObject({ id: z.string().min(1).max(100) }),
      response: {
        200: z.strictObject({
          transactionHash: z.string().nullable().meta({ description: "the transaction traced, or null for a call replayed" }),
          block: z.int().nullable().meta({ description: "the block whose state a call replayed was run on (the one it failed at); null for a transaction" }),
          error: z.string().nullable().meta({ description: "the outermost decoded error, if it reverted" }),
          text: z.string().meta({ description: "the tree as indented lines" }),
          root: z.unknown().meta({ description: "the call tree: { type, from, to, contract, function, gasUsed, error, calls: [ …the same… ] }" }),
        }),
        default: Problem,
      },
    },
    handler: async (request) => {
      // A trace is chain reads only: a failure is the node's (gone, or without debug_trace*), never a 500.
      const trace = await deps.trace(request.query.id).catch((error: unknown) => {
        throw new ProblemError("chain_unavailable", `the node could not trace operation ${request.query.id}: ${((error as { shortMessage?: string }).shortMessage ?? (error as Error).message).split("\n")[0]}`, { headers: { "retry-after": "2" } });
      });
      if (!trace) throw new ProblemError("operation_not_found", `no operation ${request.query.id}`);
      return trace;
    },
  });

  app.get(`${DEV_PREFIX}/bundle`, {
    schema: {
      ...dev("a repro bundle of the stack", "The stack's repro bundle as it is now (`application/gzip`): chain, manifest and operations, no key or credential. `queue-devstack save <file>` writes it; `--load <file>` starts from it. A fork stack's bundle carries the forked state it touched and loads without the upstream."),
      response: { 200: z.any().meta({ description: "the bundle (application/gzip)" }), default: Problem },
    },
    handler: async (_request, reply) =>
      deps.lock.run(async () => {
        let bytes: Uint8Array;
        try {
          bytes = await deps.bundle();
        } catch (error) {
          throw new ProblemError("not_implemented", (error as Error).message);
        }
        return reply.type("application/gzip").send(bytes);
      }),
  });

  app.post(`${DEV_PREFIX}/relayer`, {
    schema: {
      ...dev("pause the relayer, or set its balance", "`engine: \"paused\"` stops the relay engine at a step boundary: accepted operations wait, nothing is signed or broadcast; `\"running\"` resumes it. `balanceWei` sets the relayer's ETH balance (0: submissions answer 503 relayer_unfunded)."),
      body: z.strictObject({ engine: z.enum(["paused", "running"]).optional(), balanceWei: z.string().regex(/^(0|[1-9][0-9]{0,40})$/).optional() }),
      response: { 200: z.strictObject({ engine: z.enum(["paused", "running"]), balanceWei: z.string() }), default: Problem },
    },
    handler: async (request) =>
      deps.lock.run(async () => {
        const { control } = deps;
        if (!control) throw new ProblemError("not_implemented", "this stack's runtime has no relayer");
        if (request.body.engine === "paused") await control.pause("dev");
        if (request.body.engine === "running") control.resume("dev");
        if (request.body.balanceWei !== undefined) await rpc(deps.rpcUrl, "anvil_setBalance", [deps.relayer, `0x${BigInt(request.body.balanceWei).toString(16)}`]);
        const balance = await rpc<string>(deps.rpcUrl, "eth_getBalance", [deps.relayer, "latest"]);
        return { engine: control.paused() ? ("paused" as const) : ("running" as const), balanceWei: BigInt(balance).toString() };
      }),
  });
};

/** The whole stack back to its clean state, as stack.reset() does. */
const resetRoutes: FastifyPluginAsyncZod<DevDeps> = async (app, deps) => {
  app.post(`${DEV_PREFIX}/reset`, {
    schema: {
      ...dev("reset the stack", "Back to the clean state the stack started in, as `stack.reset()`: the chain and the operation store reverted together, the faults off, the original deployment served."),
      // No body, or {}: nothing else (an unknown field is refused, as by every control).
      body: z.strictObject({}).nullish(),
      response: { 200: z.strictObject({ reset: z.literal(true) }), default: Problem },
    },
    // The reset takes the dev controls' lock itself (as stack.reset() does).
    handler: async () => {
      const reset = deps.reset();
      if (!reset) throw new ProblemError("not_implemented", "this stack is still starting: no clean state to go back to yet");
      try {
        await reset();
      } catch (error) {
        if (error instanceof ProblemError) throw error;
        // Why, in words: the chain's refusal, or a revert that did not take (the stack stays resettable unless this says its snapshot is lost).
        const why = error instanceof SnapshotError || error instanceof JsonRpcError ? error.message : `${(error as Error).name}: ${(error as Error).message}`;
        throw devProblem("reset_failed", `the reset did not complete: ${why}`, { headers: { "retry-after": "1" } });
      }
      return { reset: true as const };
    },
  });
};

const FaultState = z
  .strictObject({
    fault: z.enum(["none", "fail", "timeout", "delay", "drop-logs", "unsupported"]),
    delayMs: z.int().nullable(),
    methods: z.array(z.string()).nullable(),
    endsAt: z.string().nullable().meta({ description: "when the fault ends by itself (ISO 8601), or null: when switched off" }),
    revertNextRelay: z.boolean(),
  })
  .meta({ description: "the faults switched on" });

/** Faults between the runtime and anvil: the RPC misbehaving, and a relay that reverts on chain. */
const faultRoutes: FastifyPluginAsyncZod<DevDeps> = async (app, deps) => {
  app.get(`${DEV_PREFIX}/faults`, {
    schema: { ...dev("the faults switched on", "What `/api/dev/rpc` and `/api/dev/revert-next` switched on."), response: { 200: FaultState, default: Problem } },
    handler: async () => deps.faults.state(),
  });

  app.post(`${DEV_PREFIX}/rpc`, {
    schema: {
      ...dev(
        "make the runtime's RPC misbehave",
        "Between the runtime and anvil: `fail` answers every call 503, `timeout` never answers, `delay` answers `delayMs` late, `drop-logs` answers eth_getLogs with [] and receipts without logs, `unsupported` answers the `methods` given as a node without them does (JSON-RPC error -32601); `none` ends it. `methods` limits it to some JSON-RPC methods, `forMs` ends it by itself. Clients and wallets reach anvil directly, unaffected, unless they use the stack's fault RPC URL (stack.json `faultRpcUrl`).",
      ),
      body: z.strictObject({
        fault: z.enum(["none", "fail", "timeout", "delay", "drop-logs", "unsupported"]),
        delayMs: z.int().min(1).max(600_000).optional(),
        methods: z.array(z.string().regex(/^[a-z]+_[A-Za-z]+$/)).min(1).max(50).optional(),
        forMs: z.int().min(1).max(86_400_000).optional(),
      }),
      response: { 200: FaultState, default: Problem },
    },
    handler: async (request) =>
      deps.lock.run(async () => {
        const { fault, ...rest } = request.body;
        if (rest.delayMs !== undefined && fault !== "delay") throw new ProblemError("invalid_request", "delayMs is for the delay fault");
        if (fault === "unsupported" && rest.methods === undefined) throw new ProblemError("invalid_request", "the unsupported fault needs methods: the JSON-RPC methods the node lacks");
        return deps.faults.set(fault === "none" ? null : { kind: fault, ...rest });
      }),
  });

  app.post(`${DEV_PREFIX}/revert-next`, {
    schema: {
      ...dev(
        "make the next relay revert on chain",
        "The next relay the runtime broadcasts (a send, withdrawal or action; not a finalize) is mined in a block where the Pool's verifier rejects its proof: the Pool reverts `InvalidProof()` and the operation ends `failed` with reason `reverted`, while its notes stay unspent (the same request can be sent again). Its block is mined at once, even with mining held. `armed: false` disarms.",
      ),
      body: z.strictObject({ armed: z.boolean().default(true) }).default({ armed: true }),
      response: { 200: FaultState, default: Problem },
    },
    handler: async (request) => deps.lock.run(async () => deps.faults.revertNextRelay(request.body.armed)),
  });
};

/** The served configuration changing mid-flight (spec rules 7 and 8), and back. */
const configRoutes: FastifyPluginAsyncZod<DevDeps> = async (app, deps) => {
  const Served = z.strictObject({ serving: z.enum(["original", "alternate"]), poolAddress: z.string() });
  app.post(`${DEV_PREFIX}/config`, {
    schema: {
      ...dev(
        "change the served configuration",
        "`alternate`: the queue URL serves another deployment (a second copy of the fixtures: a new Pool, tokens and relayer, deployed on first use), as after an operator's redeploy. GET /config answers the new configuration (a new ETag); a request for the old deployment is a 422 deployment_mismatch; an operation the old deployment accepted is still relayed by it, and its status still answered. `original`: back. A snapshot revert or a reset goes back to the original too.",
      ),
      body: z.strictObject({ serve: z.enum(["original", "alternate"]) }),
      response: { 200: Served, default: Problem },
    },
    handler: async (request) =>
      deps.lock.run(async () =>
        // The alternate's runtime checks its deployment through the runtime's RPC (a dev RPC fault on, say): 503, try again.
        deps.deployments.serve(request.body.serve).catch((error: unknown) => {
          throw chainUnavailable(error);
        }),
      ),
  });
};

/**
 * The scope every dev-only route is registered in (the controls below, and any dev page): loopback
 * clients only, and only under an allowed Host name. Hooks of an encapsulated plugin run for the
 * routes registered inside it, whatever their path.
 */
export async function registerDevOnly(app: FastifyInstance, hosts: AllowedHosts, origins: AllowedOrigins, routes: (dev: FastifyInstance) => Promise<void>): Promise<void> {
  await app.register(async (dev: FastifyInstance) => {
    dev.addHook("onRequest", async (request) => {
      // Not for anyone who can reach a non-loopback bind: they see no such routes.
      if (!LOOPBACK.test(request.ip)) throw new ProblemError("route_not_found", `no route ${request.method} ${request.url.split("?")[0]}`);
      // A loopback client under a name it does not own: a page on a domain rebound to 127.0.0.1.
      const hostname = hostnameOf(request.headers.host);
      if (hostname === undefined || !hostAllowed(hostname, hosts)) {
        throw devProblem(
          "host_not_allowed",
          `the dev routes answer only under localhost, a loopback address or the stack's own address (DNS rebinding protection)${hostname === undefined ? "" : `; to allow ${hostname}, start the stack with --allowed-host ${hostname} (allowedHosts)`}`,
        );
      }
    });
    // A change asked by another site's page (a no-cors POST needs no preflight): 403 cross_origin_refused.
    refuseCrossOrigin(dev, origins);
    await routes(dev);
  });
}

export async function registerDevRoutes(app: FastifyInstance, deps: DevDeps & { allowedHosts: AllowedHosts; allowedOrigins: AllowedOrigins }): Promise<void> {
  const describe = dev;
  documentProblems(app, DEV_PROBLEMS);
  await registerDevOnly(app, deps.allowedHosts, deps.allowedOrigins, async (dev) => {
    await dev.register(devRoutes as never, deps);
    await dev.register(faultRoutes as never, deps);
    await dev.register(configRoutes as never, deps);
    await dev.register(resetRoutes as never, deps);
    await dev.register(replayRoutes as never, { devPrefix: DEV_PREFIX, replayer: deps.replayer, describe });
    // The page is in this scope too: loopback clients and Host names only, like every control it calls.
    await registerDashboard(dev, { prefix: DEV_PREFIX, rpcUrl: deps.rpcUrl, relayer: deps.relayer, control: deps.control, faults: deps.faults, deployments: deps.deployments, trace: deps.trace, replay: (id) => deps.replayer.replay(id), accounts: deps.accounts });
  });
}
