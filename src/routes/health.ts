import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { RuntimeContext } from "../context.ts";
import { withinDeadline } from "../chain/deadline.ts";
import { HEALTH_PATH } from "../paths.ts";
import { Problem, ProblemError } from "../problem.ts";
import { checkRelayerReady } from "../admission/chain-checks.ts";
import type { ProofSystemName } from "../chain/dev-proof.ts";
import { PatchedContract } from "../code-change.ts";

/** The engine is behind when its watcher has not finished a tick for this many poll intervals (at least 10 s). */
const STALL_POLLS = 20;

export const HealthChecks = z
  .strictObject({
    chain: z.strictObject({
      reachable: z.boolean().meta({ description: "the chain answered eth_blockNumber within the chain timeout just now" }),
      head: z.int().nullable(),
      observedAgeMs: z.int().nullable().meta({ description: "age of the last head the relayer saw (status answers count confirmations from it)" }),
    }),
    relayer: z
      .strictObject({
        address: z.string(),
        ready: z.boolean().meta({ description: "funded for a relay at today's fees, under its fee cap" }),
        detail: z.string().nullable(),
      })
      .nullable()
      .meta({ description: "null: a runtime without a relayer key" }),
    queue: z.strictObject({ depth: z.int().meta({ description: "operations not yet terminal" }), capacity: z.int() }).nullable(),
    store: z
      .strictObject({ writable: z.boolean(), detail: z.string().nullable().meta({ description: "why the last write failed (a full disk, a read-only file)" }) })
      .nullable()
      .meta({ description: "the operation store: not writable since a write failed, until one succeeds" }),
    engine: z.strictObject({ state: z.enum(["running", "paused", "stopped"]), lagMs: z.int().meta({ description: "since the watcher's last good tick" }) }).nullable(),
    proofs: z
      .strictObject({ system: z.enum(["groth16", "dev"]), detail: z.string() })
      .meta({ description: "what the Pool's verifier expects (the manifest's queue.proof.system): dev proofs prove nothing, a development stack only" }),
    patched: z
      .array(PatchedContract)
      .optional()
      .meta({ description: "present only on a development stack whose contracts were patched in place (their code replaced, storage kept): which, and with what" }),
  })
  .meta({ id: "HealthChecks" });

const storeCheck = (error: string | null) => ({ writable: error === null, detail: error });

const proofsCheck = (system: ProofSystemName) => ({
  system,
  detail: system === "dev" ? "dev proofs: the Pool's verifier is DevVerifier, which checks no proof (development only)" : "real Groth16 proofs",
});

const Health = z.strictObject({ status: z.literal("ready"), checks: HealthChecks });

/** GET /api/queue/health: 200 while the runtime can take relays, 503 not_ready (with the same checks) when not. */
export const healthRoutes: FastifyPluginAsyncZod<{ context: RuntimeContext }> = async (app, { context }) => {
  app.get(HEALTH_PATH, {
    schema: {
      summary: "Readiness",
      description:
        "Whether the runtime can take relays now, and why not: the chain answered within the chain timeout, the relayer is funded under its fee cap, the queue has room, the operation store can be written, and the relay engine is running and not behind. 200 `ready`, or a 503 problem `not_ready` carrying the same `checks` (and Retry-After). Never cached.",
      response: { 200: Health, default: Problem },
    },
    handler: async (_request, reply) => {
      reply.header("cache-control", "no-store");
      const relayer = context.relayer;
      const [head, ready] = await Promise.all([
        withinDeadline(context.chain.getBlockNumber(), context.chainTimeoutMs).then(
          (n) => Number(n),
          () => null,
        ),
        relayer
          ? withinDeadline(checkRelayerReady(relayer.checks), context.chainTimeoutMs).then(
              () => null,
              (error: unknown) => (error instanceof Error ? error.message : String(error)),
            )
          : Promise.resolve(null),
      ]);
      const observed = relayer?.head.current() ?? null;
      const engine = relayer?.engine.status() ?? null;
      const checks: z.output<typeof HealthChecks> = {
        chain: { reachable: head !== null, head, observedAgeMs: observed ? Date.now() - observed.observedAt : null },
        relayer: relayer ? { address: relayer.checks.relayer, ready: head !== null && ready === null, detail: head === null ? "the chain did not answer" : ready } : null,
        queue: relayer ? { depth: relayer.store.countLive(), capacity: relayer.settings.maxLiveOperations } : null,
        store: relayer ? storeCheck(relayer.store.checkWritable()) : null,
        engine,
        proofs: proofsCheck(context.config.queue.proof.system),
        ...(context.patched.length > 0 ? { patched: context.patched } : {}),
      };
      const stallMs = Math.max(10_000, STALL_POLLS * (relayer?.settings.pollIntervalMs ?? 0));
      const problems = [
        !checks.chain.reachable && "the chain did not answer",
        // Its detail when the chain did not answer says that again: said once.
        checks.relayer && !checks.relayer.ready && checks.chain.reachable && `the relayer is not ready: ${checks.relayer.detail}`,
        checks.queue && checks.queue.depth >= checks.queue.capacity && "the queue is full",
        checks.store && !checks.store.writable && checks.store.detail,
        engine && engine.state !== "running" && `the relay engine is ${engine.state}`,
        engine && engine.state === "running" && engine.lagMs > stallMs && `the relay engine is ${engine.lagMs} ms behind`,
      ].filter((p): p is string => typeof p === "string");
      if (problems.length > 0) throw new ProblemError("not_ready", problems.join("; "), { extensions: { checks }, headers: { "retry-after": "5" } });
      return { status: "ready" as const, checks };
    },
  });
};
