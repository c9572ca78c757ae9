import { verifyTypedData, type Address, type Hex } from "viem";
import { Quote, typedDataForSigning } from "../../src/schemas/quote.ts";
import type { PreparedAction } from "./actions.ts";
import { z } from "zod";
import { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { Address as AddressSchema } from "../../src/config/primitives.ts";
import type { Operation, OperationKind } from "../../src/schemas/operation.ts";
import type { RelayRequest } from "../../src/schemas/request.ts";
import { artifactOf, fetchProofFiles, type ProofFiles } from "./proof-files.ts";
import type { PreparedTransaction } from "./transaction.ts";
import { sameOriginUrl } from "./same-origin.ts";
import { ProofSystemMismatchError } from "./prover.ts";
import { QueueDevstackError } from "../../src/errors/index.ts";

const Hash = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected 0x followed by 64 hex digits");

/**
 * What the client's developers reviewed and pinned in their app (spec rule 6): the deployment (chain,
 * Pool, its proof domain and code, the verifier and its code) and the sha256 of every proof file. All
 * required: an unpinned value would be taken from the server being checked.
 */
export const ReviewedDeployment = z.strictObject({
  chainId: z.int().positive(),
  poolAddress: AddressSchema,
  domain: Hash,
  poolRuntimeCodeHash: Hash,
  verifier: z.strictObject({ address: AddressSchema, runtimeCodeHash: Hash }),
  verificationKeySha256: Hash,
  wasmSha256: Hash,
  zkeySha256: Hash,
  /** What the reviewed Pool's verifier expects: real Groth16 proofs (the default) or "dev" proofs (a dev stack only). */
  proofSystem: z.enum(["groth16", "dev"]).optional(),
});
export type ReviewedDeployment = z.output<typeof ReviewedDeployment>;

/** Reviewed data that is incomplete or malformed: nothing can be checked against it. */
export class ReviewedDeploymentError extends QueueDevstackError {
  override name = "ReviewedDeploymentError";
  readonly code = "reviewed_deployment_invalid";
}

export class ConfigMismatchError extends QueueDevstackError {
  override name = "ConfigMismatchError";
  readonly code = "config_mismatch";
  readonly differences: string[];
  constructor(differences: string[]) {
    super(`the served configuration differs from the reviewed deployment: ${differences.join("; ")}`);
    this.differences = differences;
  }
}

/** A problem+json answer from the queue. */
export class QueueProblemError extends QueueDevstackError {
  override name = "QueueProblemError";
  readonly status: number;
  /** The problem's own `code` (docs/error-codes.md). */
  readonly code: string;
  readonly problem: Record<string, unknown>;
  constructor(status: number, problem: Record<string, unknown>) {
    super(`${status} ${String(problem.code)}: ${String(problem.detail)}`);
    this.status = status;
    this.code = String(problem.code);
    this.problem = problem;
  }
}

/** A quote whose signature or terms do not hold up: never prove against it. */
export class QuoteVerificationError extends QueueDevstackError {
  override name = "QuoteVerificationError";
  readonly code = "quote_not_verified";
}

export class PendingOperationError extends QueueDevstackError {
  override name = "PendingOperationError";
  readonly code = "operation_pending";
}

/** An operation id with the deployment it belongs to (spec rule 8). */
export interface JournalEntry {
  id: string;
  kind: OperationKind;
  chainId: number;
  poolAddress: Address;
  state: string;
  terminal: boolean;
}

/** Where the client keeps its operation ids. In memory by default; an app persists it (IndexedDB, a file). */
export interface OperationJournal {
  put(entry: JournalEntry): void | Promise<void>;
  list(): JournalEntry[] | Promise<JournalEntry[]>;
}

export function memoryJournal(): OperationJournal {
  const entries = new Map<string, JournalEntry>();
  return { put: (e) => void entries.set(e.id, e), list: () => [...entries.values()] };
}

/** The wire form of a prepared transaction: proof and public fields, integers as decimal strings. */
export function toRelayRequest(config: DeploymentConfig, tx: PreparedTransaction): RelayRequest {
  const s = (x: bigint) => x.toString();
  const pair = (p: readonly [bigint, bigint]) => [s(p[0]), s(p[1])] as [string, string];
  return {
    deployment: { chainId: config.chainId, poolAddress: config.poolAddress, domain: config.domain },
    proof: { a: pair(tx.proof.a), b: [pair(tx.proof.b[0]), pair(tx.proof.b[1])], c: pair(tx.proof.c) },
    publicInputs: {
      root: s(tx.publicInputs.root),
      publicAmount: s(tx.publicInputs.publicAmount),
      extDataHash: s(tx.publicInputs.extDataHash),
      asset: tx.publicInputs.asset,
      domain: s(tx.publicInputs.domain),
      inputNullifiers: pair(tx.publicInputs.inputNullifiers),
      outputCommitments: pair(tx.publicInputs.outputCommitments),
    },
    extData: {
      recipient: tx.extData.recipient,
      extAmount: s(tx.extData.extAmount),
      relayer: tx.extData.relayer,
      fee: s(tx.extData.fee),
      encryptedOutput1: tx.extData.encryptedOutput1,
      encryptedOutput2: tx.extData.encryptedOutput2,
    },
  };
}

/**
 * A typed client of the queue runtime that follows spec rules 6 to 8: it checks the served config
 * against reviewed deployment data before anything is prepared, keeps chain id and Pool address with
 * every operation id, and when the config changed while an operation was pending, settles that
 * operation before it lets another be prepared.
 */
export function createQueueClient(options: { baseUrl: string; reviewed: ReviewedDeployment; journal?: OperationJournal; fetch?: typeof fetch }) {
  const fetchFn = options.fetch ?? fetch;
  const journal = options.journal ?? memoryJournal();
  const parsed = ReviewedDeployment.safeParse(options.reviewed);
  if (!parsed.success) throw new ReviewedDeploymentError(`the reviewed deployment data is incomplete: ${z.prettifyError(parsed.error)}`);
  const reviewed = parsed.data;

  async function request<T>(path: string, init?: RequestInit): Promise<{ body: T; response: Response }> {
    const response = await fetchFn(sameOriginUrl(path, options.baseUrl), { ...init, headers: { accept: "application/json", ...init?.headers } });
    const body = (await response.json()) as T;
    if (!response.ok) throw new QueueProblemError(response.status, body as Record<string, unknown>);
    return { body, response };
  }

  async function verifiedConfig(): Promise<DeploymentConfig> {
    const config = DeploymentConfig.parse((await request<unknown>("/api/queue/config")).body);
    // First, and alone: a client of the other proof system has nothing else worth comparing.
    const expected = reviewed.proofSystem ?? "groth16";
    if (config.queue.proof.system !== expected) throw new ProofSystemMismatchError(expected, config.queue.proof.system, `the queue at ${options.baseUrl}`);
    const differences: string[] = [];
    const differ = (what: string, served: unknown, expected: unknown) => {
      if (String(served).toLowerCase() !== String(expected).toLowerCase()) differences.push(`${what}: served ${served}, reviewed ${expected}`);
    };
    differ("chainId", config.chainId, reviewed.chainId);
    differ("poolAddress", config.poolAddress, reviewed.poolAddress);
    differ("domain", config.domain, reviewed.domain);
    differ("poolRuntimeCodeHash", config.poolRuntimeCodeHash, reviewed.poolRuntimeCodeHash);
    differ("verifier.address", config.queue.proof.verifier.address, reviewed.verifier.address);
    differ("verifier.runtimeCodeHash", config.queue.proof.verifier.runtimeCodeHash, reviewed.verifier.runtimeCodeHash);
    differ("verificationKeySha256", config.queue.proof.verificationKeySha256, reviewed.verificationKeySha256);
    // The proof files too: a witness generator or proving key of the server's choosing could leak secrets.
    const pinned = [
      ["wasm", "wasmSha256", reviewed.wasmSha256],
      ["zkey", "zkeySha256", reviewed.zkeySha256],
      ["verificationKey", "verificationKeySha256 (artifact)", reviewed.verificationKeySha256],
    ] as const;
    for (const [role, what, pin] of pinned) {
      const listed = config.queue.proof.artifacts.filter((a) => a.role === role);
      if (listed.length === 1) differ(what, listed[0]?.sha256, pin);
      else differences.push(`${what}: ${listed.length} ${role} files listed, reviewed one`);
    }
    if (differences.length > 0) throw new ConfigMismatchError(differences);
    return config;
  }

  async function status(kind: OperationKind, id: string): Promise<Operation> {
    const path = kind === "send" ? "/api/queue/send-status" : "/api/queue/withdraw-status";
    const { body } = await request<Operation>(`${path}?id=${encodeURIComponent(id)}`);
    return body;
  }

  async function remember(op: Operation): Promise<void> {
    await journal.put({ id: op.id, kind: op.kind, chainId: op.deployment.chainId, poolAddress: op.deployment.poolAddress, state: op.state, terminal: op.terminal });
  }

  return {
    journal,
    /**
     * Call before preparing a request: verifies the config (rule 6), and settles any pending operation
     * that belongs to another deployment (rule 8). Returns the verified config to prepare against.
     */
    async beforePrepare(): Promise<DeploymentConfig> {
      const config = await verifiedConfig();
      for (const entry of await journal.list()) {
        if (entry.terminal) continue;
        const sameDeployment = entry.chainId === config.chainId && entry.poolAddress.toLowerCase() === config.poolAddress.toLowerCase();
        if (sameDeployment) continue;
        let op: Operation;
        try {
          op = await status(entry.kind, entry.id);
        } catch (error) {
          throw new PendingOperationError(
            `operation ${entry.id} (chain ${entry.chainId}, Pool ${entry.poolAddress}) is pending under the previous configuration and its status is unavailable (${(error as Error).message}); check whether it reached the chain before preparing another`,
          );
        }
        await remember(op);
        if (!op.terminal) {
          throw new PendingOperationError(`operation ${entry.id} made for the previous configuration is still ${op.state}; wait for it before preparing another`);
        }
      }
      return config;
    },

    /** The proof files of a verified config, each checked against the reviewed pins (pass them to createProver with `reviewed`). */
    proofFiles(config: DeploymentConfig): Promise<ProofFiles> {
      return fetchProofFiles(options.baseUrl, config, reviewed, fetchFn);
    },

    reviewed,

    async submit(kind: OperationKind, config: DeploymentConfig, tx: PreparedTransaction, opts: { idempotencyKey?: string } = {}): Promise<Operation> {
      const path = kind === "send" ? "/api/queue/send-relay" : "/api/queue/withdraw-relay";
      const { body } = await request<Operation>(path, {
        method: "POST",
        headers: { "content-type": "application/json", ...(opts.idempotencyKey ? { "idempotency-key": opts.idempotencyKey } : {}) },
        body: JSON.stringify(toRelayRequest(config, tx)),
      });
      await remember(body);
      return body;
    },

    /**
     * A quote of an external action, verified before it is returned: the relayer's EIP-712 signature
     * over the typed data, which must name this deployment (chain id, Pool, proof domain) and carry the
     * very terms of the answer.
     */
    async quote(config: DeploymentConfig, terms: { route: string; assetIn: string; assetOut: string; amountIn: bigint }): Promise<Quote> {
      const { body } = await request<unknown>("/api/queue/quote", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ deployment: { chainId: config.chainId, poolAddress: config.poolAddress, domain: config.domain }, ...terms, amountIn: terms.amountIn.toString() }),
      });
      const parsed = Quote.safeParse(body);
      if (!parsed.success) throw new QuoteVerificationError(`the quote is malformed: ${z.prettifyError(parsed.error)}`);
      const q = parsed.data;
      const m = q.typedData.message;
      const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
      const checks: Array<[string, boolean]> = [
        ["domain.chainId", q.typedData.domain.chainId === config.chainId],
        ["domain.verifyingContract", same(q.typedData.domain.verifyingContract, config.poolAddress)],
        ["configDomain", m.configDomain === config.domain],
        ["relayer", config.relayFees.relayer !== null && same(m.relayer, config.relayFees.relayer) && same(q.relayer, m.relayer)],
        ["quoteId", m.quoteId === `0x${q.quoteId.slice(3)}`],
        ["terms", m.route === q.route && same(m.assetIn, q.assetIn) && same(m.assetOut, q.assetOut) && m.amountIn === q.amountIn && m.minOutput === q.minOutput && m.expectedOutput === q.expectedOutput],
        ["fees", m.actionFee === q.fees.action && m.finalizeFee === q.fees.finalize && m.deadline === q.deadline],
        ["request", m.route === terms.route.toLowerCase() && same(m.assetIn, terms.assetIn) && same(m.assetOut, terms.assetOut) && m.amountIn === terms.amountIn.toString()],
      ];
      const failed = checks.filter(([, ok]) => !ok).map(([what]) => what);
      if (failed.length > 0) throw new QuoteVerificationError(`the quote does not match this deployment or request: ${failed.join(", ")}`);
      if (!(await verifyTypedData({ address: m.relayer as Address, signature: q.signature as Hex, ...typedDataForSigning(q) }))) {
        throw new QuoteVerificationError("the quote's signature is not the relayer's");
      }
      return q;
    },

    /** Submits a prepared action (withdraw-relay with its terms); poll it with status("withdraw", id). */
    async submitAction(config: DeploymentConfig, prepared: PreparedAction, opts: { idempotencyKey?: string } = {}): Promise<Operation> {
      const s = (x: bigint) => x.toString();
      const { action } = prepared;
      const { body } = await request<Operation>("/api/queue/withdraw-relay", {
        method: "POST",
        headers: { "content-type": "application/json", ...(opts.idempotencyKey ? { "idempotency-key": opts.idempotencyKey } : {}) },
        body: JSON.stringify({
          ...toRelayRequest(config, prepared.transaction),
          action: { quoteId: action.quoteId, routeId: action.routeId, outputAsset: action.outputAsset, minOutput: s(action.minOutput), outputPrecommitment: s(action.outputPrecommitment), deadline: s(action.deadline), finalizeFee: s(action.finalizeFee), finalizer: action.finalizer },
        }),
      });
      await remember(body);
      return body;
    },

    /** Finalizes a reservation (POST finalize); poll it with status("withdraw", id). */
    async finalize(config: DeploymentConfig, reservationId: string, opts: { idempotencyKey?: string } = {}): Promise<Operation> {
      const { body } = await request<Operation>("/api/queue/finalize", {
        method: "POST",
        headers: { "content-type": "application/json", ...(opts.idempotencyKey ? { "idempotency-key": opts.idempotencyKey } : {}) },
        body: JSON.stringify({ deployment: { chainId: config.chainId, poolAddress: config.poolAddress, domain: config.domain }, reservationId }),
      });
      await remember(body);
      return body;
    },

    async status(kind: OperationKind, id: string): Promise<Operation> {
      const op = await status(kind, id);
      await remember(op);
      return op;
    },

    /** Polls until the operation is terminal (or the timeout), honouring Retry-After up to a cap. */
    async waitFor(kind: OperationKind, id: string, opts: { timeoutMs?: number; intervalMs?: number } = {}): Promise<Operation> {
      const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
      for (;;) {
        const op = await this.status(kind, id);
        if (op.terminal || Date.now() > deadline) return op;
        await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
      }
    },
  };
}

export type QueueClient = ReturnType<typeof createQueueClient>;

/**
 * Reviewed deployment data taken from a config: what an app would pin after reviewing a deployment
 * (for the proof files, the hashes are also in the circuit build's manifest.json).
 */
export function reviewedFrom(config: DeploymentConfig): ReviewedDeployment {
  return {
    chainId: config.chainId,
    poolAddress: config.poolAddress,
    domain: config.domain,
    poolRuntimeCodeHash: config.poolRuntimeCodeHash,
    verifier: { address: config.queue.proof.verifier.address, runtimeCodeHash: config.queue.proof.verifier.runtimeCodeHash },
    verificationKeySha256: config.queue.proof.verificationKeySha256,
    wasmSha256: artifactOf(config, "wasm").sha256,
    zkeySha256: artifactOf(config, "zkey").sha256,
    proofSystem: config.queue.proof.system,
  };
}
