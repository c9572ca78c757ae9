import { createHash, randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { LocalAccount, PublicClient } from "viem";
import { withinDeadline } from "../chain/deadline.ts";
import { HeadTracker } from "../chain/head.ts";
import type { DeploymentConfig } from "../config/deployment-config.ts";
import { ProblemError } from "../problem.ts";
import { chainUnavailable, checkCapacity, checkInFlight, checkProof, checkRelayerReady, checkRequest, checkRootAndNullifiers, nullifierInFlight, simulate, type CheckContext } from "./checks.ts";
import { RelayEngine } from "./engine.ts";
import type { OperationKind } from "./operation.ts";
import type { RelayRequest } from "./request.ts";
import type { RelaySettings } from "./settings.ts";
import type { OperationRecord, OperationStore } from "./store.ts";

/** What the relay routes talk to: admission (checks + atomic insert) and the engine behind it. */
export class Relayer {
  readonly store: OperationStore;
  readonly settings: RelaySettings;
  readonly checks: CheckContext;
  readonly engine: RelayEngine;
  /** The last head seen, for answers that must not wait on the chain. */
  readonly head: HeadTracker;
  private readonly chainTimeoutMs: number;

  constructor(args: {
    store: OperationStore;
    /** For requests: short timeouts, no retry. */
    chain: PublicClient;
    /** For the engine: its own client and timeouts, so a slow chain stalls the engine, not the routes. */
    engineChain: PublicClient;
    account: LocalAccount;
    config: DeploymentConfig;
    settings: RelaySettings;
    log: FastifyBaseLogger;
    /** A submission's chain checks, as a whole, answer within this (else 503). */
    chainTimeoutMs: number;
  }) {
    this.store = args.store;
    this.settings = args.settings;
    this.chainTimeoutMs = args.chainTimeoutMs;
    this.head = new HeadTracker(() => args.chain.getBlockNumber());
    this.checks = { config: args.config, chain: args.chain, relayer: args.account.address, settings: args.settings };
    this.engine = new RelayEngine({
      store: args.store,
      chain: args.engineChain,
      account: args.account,
      checks: { ...this.checks, chain: args.engineChain },
      settings: args.settings,
      log: args.log,
      head: this.head,
    });
  }

  /**
   * request → validate (schema, done by the route) → decide (checks) → store → hand to the engine.
   * Returns the new operation, or the one an idempotent retry refers to.
   */
  async submit(kind: OperationKind, request: RelayRequest, idempotencyKey: string | undefined): Promise<OperationRecord> {
    const requestHash = createHash("sha256").update(canonicalJson({ kind, request })).digest("hex");
    if (idempotencyKey !== undefined) {
      const replay = this.replay(idempotencyKey, requestHash);
      if (replay) return replay;
    }
    try {
      checkRequest(kind, request, this.checks);
      checkCapacity(this.store, this.settings);
      await withinDeadline(this.checkOnChain(request), this.chainTimeoutMs);
    } catch (error) {
      // A concurrent retry with the same key may have been stored while we checked: that is a replay.
      const replay = idempotencyKey === undefined ? undefined : this.replay(idempotencyKey, requestHash);
      if (replay) return replay;
      throw chainUnavailable(error);
    }

    const now = new Date().toISOString();
    const op: OperationRecord = {
      id: `op_${randomUUID().replaceAll("-", "")}`,
      kind,
      state: "accepted",
      idempotencyKey: idempotencyKey ?? null,
      requestHash,
      request,
      nullifiers: [...request.publicInputs.inputNullifiers],
      reason: null,
      attempts: [],
      minedHash: null,
      block: null,
      history: [{ state: "accepted", at: now }],
      createdAt: now,
      updatedAt: now,
    };
    // The checks above awaited the chain: a concurrent twin may have been stored meanwhile. The insert
    // is the atomic decision.
    const inserted = this.store.insert(op);
    if (!inserted.ok) {
      if (inserted.conflict === "nullifier") throw nullifierInFlight(inserted.nullifier, inserted.operationId);
      if (inserted.existing.requestHash !== requestHash) throw this.keyReused(idempotencyKey as string, inserted.existing);
      return inserted.existing;
    }
    this.engine.enqueue(op.id);
    return op;
  }

  /** The checks that read the chain. Reads only: past the deadline they run on, and nothing comes of them. */
  private async checkOnChain(request: RelayRequest): Promise<void> {
    await checkRelayerReady(this.checks);
    await checkProof(this.checks, request);
    await checkRootAndNullifiers(this.checks, request);
    checkInFlight(this.store, request);
    await simulate(this.checks, request);
  }

  /** The operation stored under this key (same body), if any; another body under it is a 422. */
  private replay(key: string, requestHash: string): OperationRecord | undefined {
    const existing = this.store.byIdempotencyKey(key);
    if (existing && existing.requestHash !== requestHash) throw this.keyReused(key, existing);
    return existing;
  }

  private keyReused(key: string, existing: OperationRecord): ProblemError {
    return new ProblemError("idempotency_key_reused", `Idempotency-Key ${key} was used for another request (operation ${existing.id})`, {
      extensions: { operationId: existing.id },
    });
  }
}

/** JSON with sorted keys: the same request always hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}
