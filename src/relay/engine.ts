import type { FastifyBaseLogger } from "fastify";
import type { Address, Hex, LocalAccount, PublicClient, TransactionReceipt } from "viem";
import type { CheckContext } from "../admission/check-context.ts";
import { bumpedFees, currentFees, type Fees } from "../chain/fees.ts";
import type { HeadTracker } from "../chain/head.ts";
import { minedRevertReason } from "../chain/revert.ts";
import type { RelaySettings } from "../config/relay-settings.ts";
import { ProblemError } from "../problem.ts";
import { TERMINAL_STATES, type FailureReason, type OperationState } from "../schemas/operation.ts";
import type { OperationRecord, OperationStore, StoredAttempt } from "../store/types.ts";
import { signAttempt } from "./attempt.ts";
import { broadcast } from "./broadcast.ts";
import { ReceiptFinder } from "./receipts.ts";
import { StaleChecks, type Prepared } from "./stale-checks.ts";

export interface EngineDeps {
  store: OperationStore;
  chain: PublicClient;
  account: LocalAccount;
  checks: CheckContext;
  settings: RelaySettings;
  log: FastifyBaseLogger;
  /** Told every head the watcher reads: status answers count confirmations from it without waiting. */
  head: HeadTracker;
  /** Told every state change and fee bump (metrics). */
  events?: EngineEvents;
}

/** An unmined attempt is asked after (and broadcast again if the node lost it) once it is this many polls old. */
const REBROADCAST_AFTER_POLLS = 5;

/** Blocks announced between two ticks whose receipts a tick reads; past this, the rest are looked up by nonce. */
const MAX_ANNOUNCED_BLOCKS = 64;

export interface EngineEvents {
  transition(op: OperationRecord, from: OperationState): void;
  feeBump(op: OperationRecord): void;
}

/**
 * The relayer. One writer per relayer key: nonce assignment, signing, persisting and broadcasting run
 * one at a time (`exclusive`). Every attempt is stored before it is broadcast, so a restart finds it
 * and re-broadcasts the same bytes instead of sending the operation again. A watcher polls every
 * attempt's receipt: whichever is mined is the real one.
 */
export class RelayEngine {
  private readonly deps: EngineDeps;
  private writer: Promise<unknown> = Promise.resolve();
  private readonly queued = new Set<string>();
  /** What each operation's checks read and when: read again before a signature once stale. */
  private readonly stale: StaleChecks;
  /** Operations whose nonce looked used by another transaction on the last tick. */
  private readonly suspects = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  /** When the watcher last finished a tick without error (epoch ms): how far behind the engine is. */
  private lastTickAt = Date.now();
  /** A watcher tick is running; a poke meanwhile makes the next one start at once. */
  private inTick = false;
  private pokeAgain = false;
  /** Bumped by pause(): a step prepared before it is dropped (the chain and store may have been reverted). */
  private generation = 0;
  /** Paused by `pause()`: nothing is processed, signed, broadcast or watched until `resume()`. */
  private paused = false;
  /** Blocks the head subscription announced since the last tick: the next one reads their receipts. */
  private announced = new Set<bigint>();
  /** Finds mined attempts: by the announced blocks' receipts, or one attempt at a time. */
  private readonly receipts: ReceiptFinder;

  constructor(deps: EngineDeps) {
    this.deps = deps;
    this.receipts = new ReceiptFinder(deps.chain);
    this.stale = new StaleChecks(deps);
  }

  /** Picks up where a previous process left off (the first tick re-queues or watches every live operation). */
  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
    await this.writer.catch(() => {});
    await Promise.all(this.sending);
  }

  /**
   * Stops at a step boundary: the watcher's tick and the writer's step in progress finish, none starts.
   * What the engine was chasing is forgotten: `resume()` starts over from the store, as a restart
   * would (a test harness pauses it, reverts chain and store to the same moment, and resumes it).
   */
  async pause(): Promise<void> {
    this.paused = true;
    this.generation++;
    // A read started before the pause counts a chain that may be reverted: none after it shares it.
    this.stale.dropPendingRead();
    clearTimeout(this.timer);
    await this.ticking;
    await this.writer.catch(() => {});
    await Promise.all(this.sending);
    this.queued.clear();
    this.suspects.clear();
    this.stale.forget(); // the chain may be reverted: read it again
    this.announced.clear();
  }

  /** What the health route reports: running, paused or stopped, and ms since the last good watcher tick. */
  status(): { state: "running" | "paused" | "stopped"; lagMs: number } {
    return { state: this.stopped ? "stopped" : this.paused ? "paused" : "running", lagMs: this.paused ? 0 : Date.now() - this.lastTickAt };
  }

  resume(): void {
    if (!this.paused || this.stopped) return;
    this.paused = false;
    this.lastTickAt = Date.now();
    this.schedule(0);
  }

  /**
   * `checkedAt` (epoch ms): no later than the admission's reads of root, nullifiers and simulation. While
   * they are younger than resimulateAfterMs they are not read again; an operation enqueued without it
   * (by the watcher, after a restart or a pause) is always checked again.
   */
  enqueue(id: string, checkedAt?: number): void {
    // While paused, an accepted operation waits in the store: the first tick after resume() finds it.
    if (this.queued.has(id) || this.stopped || this.paused) return;
    if (checkedAt !== undefined) this.stale.admitted(id, checkedAt);
    this.queued.add(id);
    // The checks run outside the writer, side by side with other operations' steps; only nonce, signing,
    // persisting and broadcasting are one at a time.
    const generation = this.generation;
    void this.stale.prepare(id).catch(() => null).then((prepared) =>
      this.exclusive(async () => {
        if (generation !== this.generation) return; // paused meanwhile: the first tick after resume() starts it over
        this.queued.delete(id);
        if (!this.paused) await this.process(id, prepared);
      }),
    );
  }

  /**
   * A new block, from the head subscription: the next tick, at once, reads its receipts beside the head
   * (one round trip finds every operation it holds, instead of a look-up per operation after the head).
   */
  newHead(number: bigint): void {
    if (this.stopped || this.paused) return;
    if (this.announced.size < MAX_ANNOUNCED_BLOCKS) this.announced.add(number);
    this.poke();
  }

  /** Look again at once (a transaction was just broadcast, a new head arrived) instead of at the next poll. */
  poke(): void {
    if (this.stopped || this.paused) return;
    if (this.inTick) {
      this.pokeAgain = true;
      return;
    }
    this.schedule(0);
  }

  /** Broadcasts not yet answered: stop() and pause() wait for them. */
  private readonly sending = new Set<Promise<void>>();

  private sent(broadcast: Promise<void>): void {
    const tracked = broadcast.catch((error: unknown) => this.deps.log.warn({ err: error }, "broadcast failed")).finally(() => this.sending.delete(tracked));
    this.sending.add(tracked);
  }

  /** Runs one writer step at a time; a failure is logged and does not stop the next. */
  private exclusive<T>(step: () => Promise<T>): Promise<T | undefined> {
    const run = this.writer.then(step).catch((error: unknown) => {
      this.deps.log.error({ err: error }, "relay writer step failed");
      return undefined;
    });
    this.writer = run;
    return run;
  }

  private schedule(delay = this.deps.settings.pollIntervalMs): void {
    if (this.stopped || this.paused) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.inTick = true;
      this.ticking = this.tick()
        .then(() => void (this.lastTickAt = Date.now()))
        .catch((error: unknown) => this.deps.log.warn({ err: error }, "relay watcher tick failed"))
        .finally(() => {
          this.inTick = false;
          const again = this.pokeAgain;
          this.pokeAgain = false;
          this.schedule(again ? 0 : undefined);
        });
    }, delay);
  }

  // accepted → processing → (stale checks, prepared) → (nonce, sign, persist) → submitted → broadcast
  private async process(id: string, prepared: Prepared | null): Promise<void> {
    const { store, settings } = this.deps;
    const op = store.get(id);
    if (!op || TERMINAL_STATES.has(op.state) || op.attempts.length > 0) return;
    // Decided here, in the writer, on a fresh read: nothing can be signed for it afterwards.
    if (Date.now() - Date.parse(op.createdAt) >= settings.maxWaitMs) {
      return this.fail(op, "expired", { code: "expired", detail: `not broadcast within ${settings.maxWaitMs} ms of acceptance` });
    }
    // "processing" is written with what comes of this step (signed: in the same write as its attempt),
    // one write instead of two; a step that stops short writes it on its own (finally).
    const picked = op.state === "accepted";
    if (picked) this.transition(op, "processing", undefined, { deferWrite: true });
    try {
      await this.processPicked(op, prepared);
    } finally {
      if (picked && op.state === "processing") this.deps.store.save(op);
    }
  }

  private async processPicked(op: OperationRecord, prepared: Prepared | null): Promise<void> {
    const { store } = this.deps;
    if (!prepared) return; // read before it was stored? The next tick prepares it again.
    const { ready, fresh, pending } = prepared;
    if (fresh.status === "rejected") {
      const error = fresh.reason as unknown;
      if (error instanceof ProblemError && error.code !== "chain_unavailable") return this.fail(op, "rejected", failureOf(error));
      return; // the chain did not answer: try again on the next tick
    }
    // Not ready (unfunded, gas too dear): the watcher re-queues it; past maxWaitMs it expires, nothing sent.
    if (ready.status === "rejected") return;
    const fees: Fees = ready.value;
    if (pending.status === "rejected") return; // the chain did not answer: the next tick
    // The node's count, read beforehand, covers other users of the key; the store covers our own since.
    const stored = store.maxNonce();
    const nonce = Math.max(pending.value, stored === undefined ? 0 : stored + 1);
    const attempt = await signAttempt(this.deps, op.request, nonce, fees);
    op.attempts.push(attempt);
    this.stale.signed(op.id, prepared.checkedAt);
    this.transition(op, "submitted", `nonce ${nonce}, ${attempt.hash}`, { attempt }); // stored, then broadcast
    // The writer goes on to the next operation while this one is sent and mined: broadcasts leave in
    // nonce order (each after the store's sync, which finish in order), and the node takes them in any.
    this.sent(broadcast(this.deps, attempt, op.id).then(() => this.poke())); // mined at once (automine), or soon: look now
  }

  // The watcher: receipts, confirmations, reorgs, stuck transactions, retries and expiry.
  private async tick(): Promise<void> {
    const { chain, store, settings, account } = this.deps;
    const announced = [...this.announced];
    this.announced.clear();
    const live = store.nonTerminal();
    if (live.length === 0) return;
    const readStartedAt = Date.now();
    const [head, minedNonce, inBlocks] = await Promise.all([
      chain.getBlockNumber(),
      chain.getTransactionCount({ address: account.address, blockTag: "latest" }),
      this.receipts.inBlocks(announced),
    ]);
    this.deps.head.observe(head, readStartedAt);
    // The receipts of the announced blocks, read with the head, find what they hold. Of the operations
    // that can have been mined besides (an attempt's nonce below the relayer's mined count), receipts are
    // read side by side (one round trip, not one per operation). The others are not looked up (a burst of
    // N would cost N² lookups); an included one among them left the chain (a reorg).
    const receipts = new Map<string, TransactionReceipt | undefined>();
    for (const op of live) {
      const found = op.attempts.findLast((a) => inBlocks.has(a.hash.toLowerCase()));
      if (found) receipts.set(op.id, inBlocks.get(found.hash.toLowerCase()));
    }
    const unseen = live.filter((op) => op.attempts.length > 0 && !receipts.has(op.id) && Math.min(...op.attempts.map((a) => a.nonce)) < minedNonce);
    for (const [id, receipt] of await Promise.all(unseen.map(async (op) => [op.id, await this.receipts.of(op)] as const))) receipts.set(id, receipt);
    for (const op of live) {
      if (this.stopped || this.paused) return;
      if (op.attempts.length === 0) {
        this.enqueue(op.id); // the writer processes it, or expires it
        continue;
      }
      const receipt = receipts.get(op.id);
      if (receipt) {
        await this.onMined(op, receipt, head);
        continue;
      }
      if (op.state === "included") {
        const gone = op.block;
        op.block = null;
        op.minedHash = null;
        this.transition(op, "submitted", `reorg: block ${gone?.number} (${gone?.hash}) left the canonical chain`);
      }
      const latest = op.attempts.at(-1) as StoredAttempt;
      if (latest.nonce < minedNonce) {
        // The nonce is used, and by none of our attempts (no receipt)? Decide only if it holds on two
        // consecutive ticks, with a fresh look for a receipt: a lagging RPC must not end an operation.
        if (this.suspects.has(op.id) && !(await this.receipts.of(op))) {
          this.suspects.delete(op.id);
          this.fail(op, "expired", { code: "nonce_consumed", detail: `nonce ${latest.nonce} was used by another transaction from the relayer key; no attempt of this operation was mined` });
        } else {
          this.suspects.add(op.id);
        }
        continue;
      }
      this.suspects.delete(op.id);
      // Just broadcast: it is in the node's pool, or its refusal was logged; dropped ones are found a few polls on.
      if (Date.now() - Date.parse(latest.createdAt) < REBROADCAST_AFTER_POLLS * settings.pollIntervalMs) continue;
      const known = (await chain.request({ method: "eth_getTransactionByHash", params: [latest.hash as Hex] })) !== null;
      if (!known) {
        await broadcast(this.deps, latest, op.id); // dropped (restart, reorg, refused while unfunded): the same bytes again
      } else if (latest.nonce === minedNonce && Date.now() - Date.parse(latest.createdAt) > settings.stuckAfterMs) {
        // Known to the node and next in line, yet not mined: outbid with a fee bump, if it still holds.
        const check = await this.stale.beforeBump(op);
        if (check !== "chain unavailable") await this.exclusive(() => this.bump(op.id, check));
      }
    }
  }

  private async onMined(op: OperationRecord, receipt: TransactionReceipt, head: bigint): Promise<void> {
    if (op.state === "included" && op.block !== null && op.block.hash !== receipt.blockHash) {
      // Re-mined in another block between two looks: the old block still left the chain.
      this.transition(op, "submitted", `reorg: block ${op.block.number} (${op.block.hash}) left the canonical chain`);
    }
    const final = head - receipt.blockNumber + 1n >= BigInt(this.deps.settings.requiredConfirmations);
    if (op.state !== "included" || op.block?.hash !== receipt.blockHash) {
      op.minedHash = receipt.transactionHash;
      op.block = { number: Number(receipt.blockNumber), hash: receipt.blockHash };
      // Confirmed at once (enough blocks on it): written with "confirmed", one write instead of two.
      this.transition(op, "included", `${receipt.transactionHash} in block ${receipt.blockNumber}${receipt.status === "success" ? "" : " (status 0)"}`, { deferWrite: final && receipt.status === "success" });
    }
    if (!final) return;
    if (receipt.status === "success") {
      this.transition(op, "confirmed"); // its nullifiers stay claimed: it spent them
    } else {
      this.fail(op, "reverted", await minedRevertReason(this.deps.chain, { from: this.deps.account.address, pool: this.deps.checks.config.poolAddress as Address, gas: this.deps.settings.gasLimit }, op.request, receipt));
    }
  }

  /**
   * Replaces a stuck attempt: same nonce, both fees raised. Not when its check found the call would now
   * revert: then its transaction stays as broadcast, unbumped, and the operation is not failed either (that
   * transaction may still be mined, and a failure is never reported while it could be); its history says
   * why, once.
   */
  private async bump(id: string, check: "ok" | ProblemError): Promise<void> {
    const { store, chain, settings } = this.deps;
    const op = store.get(id); // fresh: the writer's copy is the only one that changes it now
    if (!op || TERMINAL_STATES.has(op.state) || op.state === "included" || op.attempts.length === 0) return;
    const latest = op.attempts.at(-1) as StoredAttempt;
    if (Date.now() - Date.parse(latest.createdAt) <= settings.stuckAfterMs) return;
    if (check !== "ok") {
      if (!this.stale.withhold(id)) return;
      this.deps.log.warn({ operation: id, code: check.code }, "fee bump withheld: the call would now revert");
      return this.transition(op, "submitted", `fee bump withheld: ${check.code}: ${check.message}; ${latest.hash} stays as broadcast (it may still be mined)`);
    }
    const fees = bumpedFees({ maxFeePerGas: BigInt(latest.maxFeePerGas), maxPriorityFeePerGas: BigInt(latest.maxPriorityFeePerGas) }, await currentFees(chain), settings.feeBumpPercent);
    if (fees.maxFeePerGas > settings.maxFeePerGasCap) {
      this.deps.log.warn({ operation: id }, "fee bump would exceed the cap; waiting");
      return;
    }
    const attempt = await signAttempt(this.deps, op.request, latest.nonce, fees);
    op.attempts.push(attempt);
    this.deps.events?.feeBump(op);
    this.transition(op, "submitted", `fee bump: ${attempt.hash} replaces ${latest.hash} (maxFeePerGas ${latest.maxFeePerGas} -> ${attempt.maxFeePerGas})`, { attempt });
    await broadcast(this.deps, attempt, op.id);
  }

  private fail(op: OperationRecord, state: OperationState, reason: FailureReason): void {
    op.reason = reason;
    this.transition(op, state, reason.detail); // frees its nullifiers (a failed state)
  }

  /** `deferWrite`: the next transition, made at once in the same step, writes this one with it. */
  private transition(op: OperationRecord, state: OperationState, detail?: string, changes?: { attempt?: StoredAttempt; deferWrite?: boolean }): void {
    if (TERMINAL_STATES.has(state)) {
      this.stale.ended(op.id);
    }
    const at = new Date().toISOString();
    const from = op.state;
    op.state = state;
    op.updatedAt = at;
    op.history.push(detail === undefined ? { state, at } : { state, at, detail });
    if (!changes?.deferWrite) this.deps.store.save(op, changes?.attempt ? { attempt: changes.attempt } : {});
    this.deps.log.info({ operation: op.id, kind: op.kind, from, state, ...(detail === undefined ? {} : { detail }) }, "operation state");
    this.deps.events?.transition(op, from);
  }
}

function failureOf(error: ProblemError): FailureReason {
  const revert = error.extensions.revert as FailureReason["revert"] | undefined;
  return revert ? { code: error.code, detail: error.message, revert } : { code: error.code, detail: error.message };
}
