import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { LocalAccount, PublicClient } from "viem";
import { HeadTracker } from "../chain/head.ts";
import { ReservationTracker } from "../chain/reservation-tracker.ts";
import type { DeploymentConfig } from "../config/deployment-config.ts";
import type { RelaySettings } from "../config/relay-settings.ts";
import { ProblemError } from "../problem.ts";
import { simulateChecked } from "../admission/action-checks.ts";
import { simulate } from "../admission/chain-checks.ts";
import type { CheckContext } from "../admission/check-context.ts";
import { decideFinalize, decideRelay, type Admission } from "../admission/decide.ts";
import { reservationClaim } from "../admission/finalize-checks.ts";
import { alreadyFinalized, chainUnavailable, isChainRefusal, NAMES_ANOTHER_OPERATION, nullifierInFlight, nullifierSpent, provenOrSimulationError, quoteUsed } from "../admission/refusals.ts";
import { TERMINAL_STATES, type FailureReason, type OperationKind } from "../schemas/operation.ts";
import type { FinalizeRequest, RelayRequest } from "../schemas/request.ts";
import type { OperationRecord, OperationStore } from "../store/types.ts";
import { RelayEngine, type EngineEvents } from "./engine.ts";
import { hashRequest } from "./request-hash.ts";

/** What the relay routes talk to: admission (checks + atomic insert) and the engine behind it. */
export class Relayer {
  readonly store: OperationStore;
  readonly settings: RelaySettings;
  readonly checks: CheckContext;
  readonly engine: RelayEngine;
  /** The last head seen, for answers that must not wait on the chain. */
  readonly head: HeadTracker;
  /** The last state of each action's reservation, for status answers. */
  readonly reservations: ReservationTracker;
  /** What the admission checks read besides the chain. */
  private readonly admission: Admission;
  private readonly log: FastifyBaseLogger;
  /** Holds of admissions (see holdAdmissions), and how many were ever taken: an admission that saw one begin is refused. */
  private admissionHolds = { held: 0, taken: 0 };

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
    /** Told every state change and fee bump (metrics). */
    events?: EngineEvents;
  }) {
    this.store = args.store;
    this.settings = args.settings;
    this.admission = { store: args.store, chainTimeoutMs: args.chainTimeoutMs };
    this.log = args.log;
    this.head = new HeadTracker(() => args.chain.getBlockNumber());
    this.reservations = new ReservationTracker({ chain: args.chain, pool: args.config.poolAddress as `0x${string}` });
    this.checks = { config: args.config, chain: args.chain, relayer: args.account.address, settings: args.settings, spender: (n) => args.store.spender(n) };
    this.engine = new RelayEngine({
      store: args.store,
      chain: args.engineChain,
      account: args.account,
      checks: { ...this.checks, chain: args.engineChain },
      settings: args.settings,
      log: args.log,
      head: this.head,
      ...(args.events ? { events: args.events } : {}),
    });
  }

  /**
   * request → validate (schema, done by the route) → decide (checks) → store → hand to the engine.
   * Returns the new operation, or the stored one a keyed request refers to.
   */
  /** `client`: who submits (the request's IP), for its share of the in-flight limit. */
  async submit(kind: Exclude<OperationKind, "finalize">, request: RelayRequest, idempotencyKey: string | undefined, client?: string): Promise<OperationRecord> {
    return this.admit(kind, request, [...request.publicInputs.inputNullifiers], idempotencyKey, client, {
      decide: () => decideRelay(this.admission, kind, request, this.checks, Math.floor(Date.now() / 1000), client),
      explain: (error) => this.explained(error, request),
      spentBy: nullifierSpent,
    });
  }

  /** POST /finalize: the same pipeline; the reservation is claimed as a nullifier, so one finalize runs at a time. */
  async submitFinalize(request: FinalizeRequest, idempotencyKey: string | undefined, client?: string): Promise<OperationRecord> {
    return this.admit("finalize", request, [reservationClaim(request.reservationId)], idempotencyKey, client, {
      decide: () => decideFinalize(this.admission, request, this.checks, client),
      explain: (error) => this.finalizeRefusal(error, request),
      spentBy: (_claim, operationId) => alreadyFinalized(request, operationId),
    });
  }

  /**
   * What submit (or submitFinalize) would answer this request now, storing nothing: `admission`, the
   * refusal as a client would hear it (null: it would be accepted), and `simulation`, the Pool's
   * simulation alone (null: it would not revert). A dev replay asks it with `view.chain` reading another
   * block, and `view.nowSeconds` the time a quote's expiry is judged at (default: now).
   */
  async judge(
    kind: OperationKind,
    request: RelayRequest | FinalizeRequest,
    view: { chain?: PublicClient; nowSeconds?: number } = {},
  ): Promise<{ admission: ProblemError | null; simulation: ProblemError | null }> {
    const checks = view.chain ? { ...this.checks, chain: view.chain } : this.checks;
    const nowSeconds = view.nowSeconds ?? Math.floor(Date.now() / 1000);
    const refusal = (explain: (error: unknown) => unknown) => (error: unknown) => {
      const explained = explain(error);
      if (explained instanceof ProblemError) return explained;
      throw explained;
    };
    const finalize = "reservationId" in request;
    const [admission, simulation] = await Promise.all([
      (finalize ? decideFinalize(this.admission, request, checks) : decideRelay(this.admission, kind as Exclude<OperationKind, "finalize">, request, checks, nowSeconds)).then(
        () => null,
        refusal((error) => (finalize ? this.finalizeRefusal(error, request) : this.explained(error, request))),
      ),
      (finalize ? simulate(checks, request) : simulateChecked(checks, request)).then(() => null, refusal((error) => provenOrSimulationError(chainUnavailable(error)))),
    ]);
    return { admission, simulation };
  }

  /** A finalize's refusal as the client should hear it: finalized by one of ours is named, as a spent nullifier is. */
  private finalizeRefusal(error: unknown, request: FinalizeRequest): unknown {
    const ours = error instanceof ProblemError && error.code === "already_finalized" ? this.store.claim(reservationClaim(request.reservationId)) : undefined;
    return ours ? alreadyFinalized(request, ours.operationId) : chainUnavailable(error);
  }

  /** See RelayControl.holdAdmissions. */
  holdAdmissions(): () => void {
    const holds = this.admissionHolds;
    holds.held++;
    holds.taken++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      holds.held--;
    };
  }

  private async admit(
    kind: OperationKind,
    request: RelayRequest | FinalizeRequest,
    claims: string[],
    idempotencyKey: string | undefined,
    client: string | undefined,
    steps: {
      decide: () => Promise<void>;
      /** The refusal a check's error means; anything but a ProblemError is unexpected (a 500). */
      explain: (error: unknown) => unknown;
      /** The refusal when one of our operations has spent a claim (mined it, confirmed). */
      spentBy: (claim: string, operationId: string) => ProblemError;
    },
  ): Promise<OperationRecord> {
    const holds = this.admissionHolds;
    const holdsBefore = holds.taken;
    // Retryable: the chain and store are being put back, and will take this request in a moment.
    const reverting = () => holds.held > 0 || holds.taken !== holdsBefore;
    const refuseWhileReverting = () => {
      if (reverting()) throw new ProblemError("chain_reverting", `the chain and the operation store are being reverted (a dev stack's reset or revert); nothing was accepted: send this ${kind} request again`, { headers: { "retry-after": "1" } });
    };
    refuseWhileReverting();
    const requestHash = hashRequest(kind, request);
    const stored = () => (idempotencyKey === undefined ? undefined : this.storedFor(idempotencyKey, requestHash));
    const before = stored();
    if (before) return before;
    // No later than the checks' chain reads: the engine measures their age from here.
    const checkedAt = Date.now();
    try {
      await steps.decide();
    } catch (error) {
      // Checked against a chain being reverted: its answer says nothing of the chain to come.
      refuseWhileReverting();
      // An identical request may have been stored while we checked (the checks then found its nullifiers
      // in flight or spent): a keyed request answers it.
      const meanwhile = stored();
      if (meanwhile) return meanwhile;
      const explained = steps.explain(error);
      if (explained instanceof ProblemError) throw await this.keptRefusal(explained, { kind, request, claims, requestHash, client }, reverting);
      // Not the client's fault nor the chain's: logged with what was being admitted, answered as a 500.
      this.log.error({ err: error, kind, requestHash, idempotencyKey, claims }, "admission failed unexpectedly");
      throw new ProblemError("internal_error", `the runtime failed to check this ${kind} request; nothing was accepted`);
    }
    if (admissionHooks.afterChecks) await admissionHooks.afterChecks();
    refuseWhileReverting(); // the insert below is synchronous: no revert begins between this and it

    const now = new Date().toISOString();
    const op: OperationRecord = {
      id: `op_${randomUUID().replaceAll("-", "")}`,
      kind,
      state: "accepted",
      idempotencyKey: idempotencyKey ?? null,
      requestHash,
      request,
      nullifiers: claims,
      reason: null,
      attempts: [],
      minedHash: null,
      block: null,
      history: [{ state: "accepted", at: now }],
      createdAt: now,
      updatedAt: now,
      ...(client === undefined ? {} : { client }),
    };
    // The checks above awaited the chain: a concurrent twin may have been stored meanwhile, and even
    // mined and confirmed (its claims outlive it). The insert is the atomic decision.
    const inserted = this.store.insert(op);
    if (!inserted.ok) {
      if (inserted.conflict === "nullifier") {
        const twin = stored(); // a keyed copy that lost the race to an identical one answers the winner
        if (twin) return twin;
        if (TERMINAL_STATES.has(inserted.state)) throw steps.spentBy(inserted.nullifier, inserted.operationId);
        throw nullifierInFlight(inserted.nullifier, inserted.operationId);
      }
      if (inserted.conflict === "quote") {
        if (inserted.operationId === null) throw new ProblemError("quote_mismatch", `no quote ${inserted.quoteId} from this relayer (deleted after its expiry): ask POST quote for one`);
        throw quoteUsed(inserted.quoteId, inserted.operationId);
      }
      if (inserted.existing.requestHash !== requestHash) throw this.keyReused(idempotencyKey as string, inserted.existing);
      return inserted.existing;
    }
    // Handed to the engine at once, with its checks' time: a watcher tick during the sync below would
    // otherwise find it unqueued and check it all again (a second simulation). Nothing of it is broadcast
    // before that sync: every broadcast syncs the store first.
    this.engine.enqueue(op.id, checkedAt);
    await this.store.flush(); // a 202 is a promise: on disk before it is made
    return op;
  }

  /**
   * A refusal, named by the rejected operation it is kept as (`operationId`) when the relayer keeps them
   * (a dev stack) and the chain refused it: what a developer replays, traces and saves. Its history
   * says the head it was refused on (read just after: a trace replays its call there). Not kept when a
   * revert began meanwhile (the chain it was judged on is going), nor when the store cannot keep it: the
   * refusal is answered as it was.
   */
  private async keptRefusal(
    refusal: ProblemError,
    submission: { kind: OperationKind; request: RelayRequest | FinalizeRequest; claims: string[]; requestHash: string; client: string | undefined },
    reverting: () => boolean,
  ): Promise<ProblemError> {
    if (this.settings.keepRejected === 0 || !isChainRefusal(refusal) || NAMES_ANOTHER_OPERATION.has(refusal.code)) return refusal;
    const head = await this.checks.chain.request({ method: "eth_blockNumber" }).then(Number, () => undefined);
    if (reverting()) return refusal; // the insert below is synchronous: no revert begins between this and it
    const now = new Date().toISOString();
    const revert = refusal.extensions.revert as FailureReason["revert"] | undefined;
    const op: OperationRecord = {
      id: `op_${randomUUID().replaceAll("-", "")}`,
      kind: submission.kind,
      state: "rejected",
      idempotencyKey: null,
      requestHash: submission.requestHash,
      request: submission.request,
      nullifiers: submission.claims,
      reason: { code: refusal.code, detail: refusal.message, ...(revert ? { revert } : {}) },
      attempts: [],
      minedHash: null,
      block: null,
      history: [{ state: "rejected", at: now, detail: `refused at admission (${refusal.code}): kept to replay, nothing was queued`, ...(head === undefined ? {} : { block: head }) }],
      createdAt: now,
      updatedAt: now,
      ...(submission.client === undefined ? {} : { client: submission.client }),
    };
    try {
      this.store.insertRefused(op, this.settings.keepRejected);
    } catch (error) {
      this.log.warn({ err: error, code: refusal.code }, "a refused submission could not be kept");
      return refusal;
    }
    return new ProblemError(refusal.code, refusal.message, { extensions: { ...refusal.extensions, operationId: op.id }, headers: refusal.headers });
  }

  /**
   * A refusal as the client should hear it. A twin of ours stored and mined while this request was
   * checked makes the chain say "spent" (or the simulation revert): while it is live, the request's
   * nullifiers are in flight with it; once confirmed, they were spent by it. Either way it is named.
   */
  private explained(error: unknown, request: RelayRequest): unknown {
    const raced =
      error instanceof ProblemError &&
      (error.code === "nullifier_spent" || (error.code === "simulation_failed" && (error.extensions.revert as { name?: string } | undefined)?.name === "NullifierSpent"));
    if (!raced) return chainUnavailable(error);
    const claims = request.publicInputs.inputNullifiers.flatMap((nullifier) => {
      const claim = this.store.claim(nullifier);
      return claim ? [{ nullifier, ...claim }] : [];
    });
    const live = claims.find((c) => !TERMINAL_STATES.has(c.state));
    if (live) return nullifierInFlight(live.nullifier, live.operationId);
    const [spent] = claims;
    return spent ? nullifierSpent(spent.nullifier, spent.operationId) : error;
  }

  /**
   * What a keyed request already has in the store: the operation its key names (another body under the
   * key is a 422), else the operation of an identical request, which the key is then bound to. Only one
   * that has not failed: a rejected, expired or reverted operation may be retried, and the retry is a
   * new operation (a key that already names a failed one keeps naming it).
   */
  private storedFor(key: string, requestHash: string): OperationRecord | undefined {
    const named = this.store.byIdempotencyKey(key);
    if (named) {
      if (named.requestHash !== requestHash) throw this.keyReused(key, named);
      return named;
    }
    const twin = this.store.twin(requestHash);
    if (!twin) return undefined;
    const bound = this.store.bindIdempotencyKey(key, twin.id); // a concurrent request may have bound it first
    if (bound.requestHash !== requestHash) throw this.keyReused(key, bound);
    return bound;
  }

  private keyReused(key: string, existing: OperationRecord): ProblemError {
    return new ProblemError("idempotency_key_reused", `Idempotency-Key ${key} was used for another request (operation ${existing.id})`, {
      extensions: { operationId: existing.id },
    });
  }
}

/**
 * Tests only: awaited, when set, by every admission between its chain checks and its insert (a test
 * holds one there while a twin of it is mined). Never set by the runtime itself.
 */
export const admissionHooks: { afterChecks?: () => Promise<void> } = {};

