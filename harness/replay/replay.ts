import type { FastifyInstance } from "fastify";
import type { Address, Hex } from "viem";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { QUEUE_PATHS } from "../../src/paths.ts";
import { PROBLEM_STATUS, ProblemError, type ProblemCode } from "../../src/problem.ts";
import { transactCalldata } from "../../src/chain/pool-call.ts";
import type { RelayControl } from "../../src/relay/control.ts";
import { TERMINAL_STATES, type FailureReason, type OperationState } from "../../src/schemas/operation.ts";
import { FinalizeRequest, RelayRequest } from "../../src/schemas/request.ts";
import type { OperationRecord } from "../../src/store/types.ts";
import { jsonRpc, JsonRpcError } from "../chain/index.ts";
import type { CompiledFixtures } from "../deployment/index.ts";
import { operationTrace, traceOf, type Trace } from "../trace/index.ts";
import { pinnedChain } from "./pinned-chain.ts";
import { renderReplay } from "./render.ts";
import { DRY_STATES, ReplayOptions, type ReplayAnswer, type ReplayLinks } from "./schemas.ts";
import { diffTraces } from "./trace-diff.ts";
import { devProblem } from "../dev/problems/index.ts";

export interface ReplayDeps {
  /** anvil's own URL: a replay judges the chain, not the faults a developer switched on between it and the runtime. */
  rpcUrl: string;
  config: DeploymentConfig;
  fixtures: CompiledFixtures;
  relayer: Address;
  control: RelayControl | null;
  /** The stack's own runtime: `send` relays through its route, as a client's request goes. */
  runtime: FastifyInstance;
  /** The dev controls' lock: a replay reads one state, never a reset's half-reverted one. */
  lock: { run<T>(work: () => Promise<T>): Promise<T> };
}

export interface Replayer {
  /** Replays a stored operation (see DevStack.replay); rejects with a ProblemError when it cannot be judged. */
  replay(operationId: string, options?: ReplayOptions): Promise<ReplayAnswer>;
  /** Which operation a replay was sent for, and which replays an operation has; null for an unknown operation. */
  links(operationId: string): ReplayLinks | null;
}

/** How long a sent replay is waited for by default: a relay on a dev chain ends in a second or two. */
const DEFAULT_WAIT_MS = 60_000;

const RELAY_PATHS = { send: QUEUE_PATHS.sendRelay, withdraw: QUEUE_PATHS.withdrawRelay, finalize: QUEUE_PATHS.finalize } as const;

/** A refusal as the failure reason an operation would carry. */
const reasonOf = (error: ProblemError): FailureReason => {
  const revert = error.extensions.revert as FailureReason["revert"] | undefined;
  return revert ? { code: error.code, detail: error.message, revert } : { code: error.code, detail: error.message };
};
const revertText = (reason: FailureReason | null | undefined) => (reason?.revert ? `${reason.revert.name}(${reason.revert.args.join(", ")})` : null);
const hex = (n: bigint | number) => `0x${n.toString(16)}`;
/** A refusal's status that says the stack cannot take any relay now (503, 429, a 500), not that this one is refused: it cannot be judged. */
const notAVerdict = (status: number) => status >= 500 || status === 429;

/**
 * The replays of a dev stack: a stored operation's exact request, judged again by the relayer's own
 * admission checks and simulation on the chain as it is now (or at a block), its call traced and diffed
 * against the original's, and, when asked, relayed again for real. The links between an operation and
 * its sent replays live here, for as long as the stack runs.
 */
export function replayer(deps: ReplayDeps): Replayer {
  const replayOf = new Map<string, string>();
  const rpc = <T>(method: string, params: unknown[]) =>
    jsonRpc<T>(deps.rpcUrl, method, params).catch((error: unknown) => {
      throw new ProblemError("chain_unavailable", `the chain did not answer ${method}: ${(error as Error).message}`, { headers: { "retry-after": "2" } });
    });

  type Traced = { trace: Trace; source: "transaction" | "call"; block: number | null };

  /** The original's trace (stack.trace's): its mined transaction, or its call at the block it failed at. */
  async function originalTrace(op: OperationRecord, gas: bigint): Promise<Traced> {
    const trace = await operationTrace({ rpcUrl: deps.rpcUrl, config: deps.config, fixtures: deps.fixtures, relayer: deps.relayer, gas }, op);
    return trace.transactionHash ? { trace, source: "transaction", block: op.block?.number ?? null } : { trace, source: "call", block: trace.block };
  }

  const view = (traced: Traced) => ({
    source: traced.source,
    transactionHash: traced.trace.transactionHash,
    block: traced.block,
    error: traced.trace.error,
    text: traced.trace.text,
    root: traced.trace.root,
  });
  const untraced = (error: unknown) => (error instanceof JsonRpcError ? `the node could not trace it: ${error.message}` : `${(error as Error).name}: ${(error as Error).message}`);

  /** The request as stored, checked again: a bundle's store is a file from elsewhere. */
  function storedRequest(op: OperationRecord): RelayRequest | FinalizeRequest {
    const parsed = (op.kind === "finalize" ? FinalizeRequest : RelayRequest).safeParse(op.request);
    if (!parsed.success) throw devProblem("not_replayable", `operation ${op.id}'s stored request cannot be rebuilt: ${parsed.error.issues[0]?.message ?? "it fails its schema"}`);
    return parsed.data;
  }

  /** Relays the request again through the runtime's own route; the new operation, or the refusal. */
  async function send(op: OperationRecord, request: RelayRequest | FinalizeRequest) {
    const response = await deps.runtime.inject({ method: "POST", url: RELAY_PATHS[op.kind], payload: request as object });
    let body: { id?: string; code?: string; detail?: string } = {};
    try {
      body = response.json();
    } catch {}
    if (response.statusCode === 202 && body.id) {
      replayOf.set(body.id, op.id);
      return { id: body.id as string | null, replayOf: op.id, state: "accepted" as OperationState, reason: null as FailureReason | null, transactionHash: null as Hex | null };
    }
    const reason: FailureReason = { code: body.code ?? `http_${response.statusCode}`, detail: body.detail ?? response.body.slice(0, 500) };
    if (notAVerdict(response.statusCode)) {
      const code = (reason.code in PROBLEM_STATUS ? reason.code : "chain_unavailable") as ProblemCode;
      throw new ProblemError(code, `the replay could not be sent: ${reason.detail}`, { headers: { "retry-after": String(response.headers["retry-after"] ?? "2") } });
    }
    return { id: null as string | null, replayOf: op.id, state: "rejected" as OperationState, reason: reason as FailureReason | null, transactionHash: null as Hex | null };
  }

  /** Until the sent operation ends, or `waitMs` passes; a reset that takes it away cannot be judged. */
  async function settled(control: RelayControl, id: string, waitMs: number): Promise<OperationRecord> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const op = control.operation(id);
      if (!op) throw new ProblemError("chain_reverting", `the replay ${id} is gone: the stack was reset or reverted while it ran`, { headers: { "retry-after": "1" } });
      if (TERMINAL_STATES.has(op.state) || Date.now() >= deadline) return op;
      await new Promise<void>((resolve) => {
        const stop = control.onChange((changed) => {
          if (changed !== null && changed !== id) return;
          stop();
          clearTimeout(timer);
          resolve();
        });
        const timer = setTimeout(() => {
          stop();
          resolve();
        }, Math.min(1_000, Math.max(0, deadline - Date.now())));
      });
    }
  }

  return {
    links(operationId) {
      if (!deps.control?.operation(operationId)) return null;
      const replays = [...replayOf].filter(([id, of]) => of === operationId && deps.control?.operation(id)).map(([id]) => id);
      return { operation: operationId, replayOf: replayOf.get(operationId) ?? null, replays };
    },

    async replay(operationId, input = {}) {
      const parsed = ReplayOptions.safeParse(input);
      if (!parsed.success) throw new ProblemError("invalid_request", `replay options: ${parsed.error.issues.map((i) => `${i.path.join(".") || "options"}: ${i.message}`).join("; ")}`);
      const options = parsed.data;
      const expected: OperationState = options.expect ?? (options.send ? "confirmed" : "accepted");
      if (!options.send && !DRY_STATES.has(expected)) {
        throw new ProblemError("invalid_request", `without send, a replay ends at the admission, accepted or rejected: it cannot be ${expected} (send it to see that)`);
      }
      const control = deps.control;
      if (!control) throw new ProblemError("not_implemented", "this stack's runtime has no relayer: it keeps no operations");

      const judged = await deps.lock.run(async () => {
        const op = control.operation(operationId);
        if (!op) throw new ProblemError("operation_not_found", `no operation ${operationId} in this stack's store`);
        if (!TERMINAL_STATES.has(op.state)) {
          throw devProblem("operation_live", `operation ${op.id} is still ${op.state}: replay it once it has ended (ctl drop, or mine)`, { extensions: { state: op.state } });
        }
        const request = storedRequest(op);
        const head = BigInt(await rpc<Hex>("eth_blockNumber", []));
        const block = options.at === undefined ? head : BigInt(options.at);
        if (block > head) throw new ProblemError("block_not_found", `block ${block} is not mined yet: the head is ${head}`);
        const { timestamp } = await rpc<{ timestamp: Hex }>("eth_getBlockByNumber", [hex(block), false]);
        // A block whose state the node no longer keeps cannot be replayed on: said, not guessed.
        await jsonRpc(deps.rpcUrl, "eth_getBalance", [deps.relayer, hex(block)]).catch((error: unknown) => {
          if (!(error instanceof JsonRpcError)) throw new ProblemError("chain_unavailable", `the chain did not answer: ${(error as Error).message}`, { headers: { "retry-after": "2" } });
          throw devProblem("not_replayable", `the node keeps no state of block ${block}: ${error.message}`);
        });
        const call = { from: deps.relayer, to: deps.config.poolAddress as Address, data: transactCalldata(request), gas: control.gasLimit() };
        const [verdict, after, before] = await Promise.all([
          control.judge(op.kind, request, { chain: pinnedChain(deps.rpcUrl, block), nowSeconds: options.at === undefined ? Math.floor(Date.now() / 1000) : Number(timestamp) }).catch((error: unknown) => {
            // Not a verdict on the request (the checks' own failure on this block): said, never a 500.
            throw error instanceof ProblemError ? error : devProblem("not_replayable", `the relayer's checks could not run on block ${block}: ${(error as Error).message.split("\n")[0]}`);
          }),
          traceOf({ rpcUrl: deps.rpcUrl, config: deps.config, fixtures: deps.fixtures, call, block }).then(
            (trace): Traced => ({ trace, source: "call", block: Number(block) }),
            (error: unknown) => new Error(untraced(error)),
          ),
          originalTrace(op, call.gas).catch((error: unknown) => new Error(untraced(error))),
        ]);
        // A refusal of any relay now (the chain, the relayer's funds or fee cap, a full queue) is no verdict on this one.
        for (const problem of [verdict.admission, verdict.simulation]) if (problem && notAVerdict(problem.status)) throw problem;
        const sent = options.send ? await send(op, request) : null;
        return { op, block, head, verdict, after, before, sent };
      });

      const { op, block, head, verdict, before } = judged;
      let { after, sent } = judged;
      // The sent replay is waited for outside the lock: the controls (mine, say) may be what ends it.
      if (sent?.id) {
        const done = await settled(control, sent.id, options.waitMs ?? DEFAULT_WAIT_MS);
        sent = { ...sent, state: done.state, reason: done.reason, transactionHash: done.minedHash };
        if (done.minedHash) {
          const minedHash = done.minedHash;
          after = await traceOf({ rpcUrl: deps.rpcUrl, config: deps.config, fixtures: deps.fixtures, transactionHash: minedHash }).then(
            (trace): Traced => ({ trace, source: "transaction", block: done.block?.number ?? null }),
            (error: unknown) => new Error(untraced(error)),
          );
        }
      }
      const state: OperationState = sent ? sent.state : verdict.admission ? "rejected" : "accepted";
      const matched = sent?.id && !TERMINAL_STATES.has(sent.state) ? null : state === expected;
      const traced = <T>(side: T | Error) => (side instanceof Error ? null : side);
      const beforeTrace = traced(before);
      const afterTrace = traced(after);
      const answer: Omit<ReplayAnswer, "text"> = {
        operation: op.id,
        kind: op.kind,
        block: { number: Number(block), head: block === head },
        before: {
          state: op.state,
          reason: op.reason,
          error: revertText(op.reason) ?? beforeTrace?.trace.error ?? null,
          trace: beforeTrace ? view(beforeTrace) : null,
          traceUnavailable: before instanceof Error ? before.message : null,
        },
        after: {
          state,
          admitted: verdict.admission === null,
          refusal: verdict.admission ? reasonOf(verdict.admission) : null,
          simulation: { ok: verdict.simulation === null, reason: verdict.simulation ? reasonOf(verdict.simulation) : null },
          error: revertText(sent?.reason) ?? (verdict.simulation && !sent ? revertText(reasonOf(verdict.simulation)) : null) ?? afterTrace?.trace.error ?? null,
          trace: afterTrace ? view(afterTrace) : null,
          traceUnavailable: after instanceof Error ? after.message : null,
          sent,
        },
        diff: beforeTrace && afterTrace ? diffTraces(beforeTrace.trace.root, afterTrace.trace.root) : null,
        verdict: { expected, matched, exitCode: matched === null ? 125 : matched ? 0 : 1 },
      };
      return { ...answer, text: renderReplay(answer) };
    },
  };
}
