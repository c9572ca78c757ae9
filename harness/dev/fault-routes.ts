import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { Problem, ProblemError } from "../../src/problem.ts";
import { DEV_PREFIX, describeDev, type DevDeps } from "./dev-route-kit.ts";

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
export const faultRoutes: FastifyPluginAsyncZod<DevDeps> = async (app, deps) => {
  app.get(`${DEV_PREFIX}/faults`, {
    schema: { ...describeDev("the faults switched on", "What `/api/dev/rpc` and `/api/dev/revert-next` switched on."), response: { 200: FaultState, default: Problem } },
    handler: async () => deps.faults.state(),
  });

  app.post(`${DEV_PREFIX}/rpc`, {
    schema: {
      ...describeDev(
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
      ...describeDev(
        "make the next relay revert on chain",
        "The next relay the runtime broadcasts (a send, withdrawal or action; not a finalize) is mined in a block where the Pool's verifier rejects its proof: the Pool reverts `InvalidProof()` and the operation ends `failed` with reason `reverted`, while its notes stay unspent (the same request can be sent again). Its block is mined at once, even with mining held. `armed: false` disarms.",
      ),
      body: z.strictObject({ armed: z.boolean().default(true) }).default({ armed: true }),
      response: { 200: FaultState, default: Problem },
    },
    handler: async (request) => deps.lock.run(async () => deps.faults.revertNextRelay(request.body.armed)),
  });
};
