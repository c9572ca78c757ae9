import type { FastifyBaseLogger } from "fastify";
import { formatTransactionReceipt, keccak256, numberToHex, TransactionReceiptNotFoundError, type Address, type Hex, type LocalAccount, type PublicClient, type TransactionReceipt } from "viem";
import type { HeadTracker } from "../chain/head.ts";
import { poolAbi } from "../chain/pool-abi.ts";
import { ProblemError } from "../problem.ts";
import { checkRelayerReady, isTransportError, poolCall, transactCalldata, type CheckContext } from "./checks.ts";
import { simulateChecked, simulateRelay } from "../actions/check-action.ts";
import { checkFinalizeFee, checkReservation } from "../actions/finalize.ts";
import { bumpedFees, currentFees, type Fees } from "./fees.ts";
import { TERMINAL_STATES, type FailureReason, type OperationState } from "./operation.ts";
import { revertReason } from "./revert.ts";
import type { RelaySettings } from "./settings.ts";
import type { OperationRecord, OperationStore, StoredAttempt } from "./store.ts";

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

interface Prepared {
  ready: PromiseSettledResult<Fees>;
  fresh: PromiseSettledResult<void>;
  /** The node's pending transaction count for the relayer. */
  pending: PromiseSettledResult<number>;
  /** When the checks it relies on read the chain (epoch ms): the admission's, or these. */
  checkedAt: number;
}

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
  /** When each newly admitted operation's admission read the chain (epoch ms): taken by its first prepare. */
  private readonly checkedAt = new Map<string, number>();
  /**
   * When each signed operation was last checked (root, nullifiers, simulation; epoch ms): a fee bump signs
   * again, so one not checked within resimulateAfterMs is checked first. Empty after a restart, a load or
   * a pause: an operation picked up from the store is always checked before it is bumped.
   */
  private readonly lastChecked = new Map<string, number>();
  /** Operations whose fee bump was withheld (the call would now revert), noted once in their history. */
  private readonly withheld = new Set<string>();
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
  /** The node refused eth_getBlockReceipts: operations are found by nonce only. */
  private noBlockReceipts = false;

  constructor(deps: EngineDeps) {
    this.deps = deps;
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
    this.pendingRead = undefined;
    clearTimeout(this.timer);
    await this.ticking;
    await this.writer.catch(() => {});
    await Promise.all(this.sending);
    this.queued.clear();
    this.suspects.clear();
    this.checkedAt.clear(); // the chain may be reverted: read it again
    this.lastChecked.clear();
    this.withheld.clear();
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
    if (checkedAt !== undefined) this.checkedAt.set(id, checkedAt);
    this.queued.add(id);
    // The checks run outside the writer, side by side with other operations' steps; only nonce, signing,
    // persisting and broadcasting are one at a time.
    const generation = this.generation;
    void this.prepare(id).catch(() => null).then((prepared) =>
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

  /** The re-checks that can go stale and the relayer's readiness, read side by side, before the writer's turn. */
  private async prepare(id: string): Promise<Prepared | null> {
    const { store, checks } = this.deps;
    // Once: a later prepare of it (not ready yet, say) reads the chain again.
    const checkedAt = this.checkedAt.get(id);
    this.checkedAt.delete(id);
    const op = store.get(id);
    if (!op || TERMINAL_STATES.has(op.state) || op.attempts.length > 0) return null;
    // Measured from the admission's reads, not from its acceptance: an admission held between the two
    // (a busy process) may have read the chain before a twin of it was mined.
    const recent = checkedAt !== undefined && Date.now() - checkedAt < this.deps.settings.resimulateAfterMs;
    const readAt = Date.now();
    const [ready, fresh, pending] = await Promise.allSettled([
      checkRelayerReady(checks),
      // Its admission read root, nullifiers and simulation moments ago.
      recent ? undefined : this.recheck(op),
      this.pendingCount(),
    ]);
    return { ready, fresh, pending, checkedAt: recent ? checkedAt : readAt };
  }

  /** The relayer's pending transaction count being read, if one is. */
  private pendingRead: Promise<number> | undefined;

  /**
   * The node's pending transaction count for the relayer. Operations prepared at the same moment (a burst)
   * share one read, started no earlier than one round trip before it asked: another user's transaction
   * sent meanwhile is as likely missed by a read of its own (the writer takes the larger of this and the
   * store's next nonce, and a nonce taken anyway is found by the watcher).
   */
  private pendingCount(): Promise<number> {
    if (!this.pendingRead) {
      const read: Promise<number> = this.deps.chain.getTransactionCount({ address: this.deps.account.address, blockTag: "pending" }).finally(() => {
        if (this.pendingRead === read) this.pendingRead = undefined;
      });
      this.pendingRead = read;
    }
    return this.pendingRead;
  }

  /**
   * The checks that can go stale: the Pool's simulation, which decides the root and nullifiers too (read on
   * their own when it fails: simulateRelay); a finalize's reservation, and whether its fee is still surely
   * this relayer's (a finalizer's window closes), then its simulation.
   */
  private async recheck(op: OperationRecord): Promise<void> {
    const { checks, store } = this.deps;
    const request = op.request;
    if (!("reservationId" in request)) return simulateRelay(checks, request);
    await checkFinalizeFee(checks, request, await checkReservation(checks, request), store);
    await simulateChecked(checks, request);
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
    const attempt = await this.sign(op, nonce, fees);
    op.attempts.push(attempt);
    this.lastChecked.set(op.id, prepared.checkedAt);
    this.transition(op, "submitted", `nonce ${nonce}, ${attempt.hash}`, { attempt }); // stored, then broadcast
    // The writer goes on to the next operation while this one is sent and mined: broadcasts leave in
    // nonce order (each after the store's sync, which finish in order), and the node takes them in any.
    this.sent(this.broadcast(attempt, op.id).then(() => this.poke())); // mined at once (automine), or soon: look now
  }

  private async sign(op: OperationRecord, nonce: number, fees: Fees): Promise<StoredAttempt> {
    const { account, checks, settings } = this.deps;
    const raw = await account.signTransaction({
      type: "eip1559",
      chainId: checks.config.chainId,
      nonce,
      to: checks.config.poolAddress as Address,
      data: transactCalldata(op.request),
      value: 0n,
      gas: settings.gasLimit,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    return {
      hash: keccak256(raw),
      nonce,
      raw,
      maxFeePerGas: fees.maxFeePerGas.toString(),
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
      createdAt: new Date().toISOString(),
    };
  }

  /** Broadcasts stored bytes. Node answers that need no action here are recognised by name. */
  private async broadcast(attempt: StoredAttempt, operation: string): Promise<void> {
    await this.deps.store.flush(); // never sent before it is on disk: a power loss must not forget a sent nonce
    try {
      await this.deps.chain.request({ method: "eth_sendRawTransaction", params: [attempt.raw] });
    } catch (error) {
      const message = `${(error as { details?: string }).details ?? ""} ${(error as Error).message}`.toLowerCase();
      // already known: it is in the pool. nonce too low: one of our attempts was mined (or the nonce
      // was taken; the watcher tells which). underpriced: the watcher's next bump outbids. insufficient
      // funds: kept and re-broadcast once the relayer is refunded.
      const kind = /already known|known transaction|already imported/.test(message)
        ? "already-known"
        : /nonce too low/.test(message)
          ? "nonce-too-low"
          : /underpriced/.test(message)
            ? "underpriced"
            : /insufficient funds/.test(message)
              ? "insufficient-funds"
              : "other";
      if (kind !== "already-known") this.deps.log.warn({ operation, hash: attempt.hash, kind }, "broadcast refused");
    }
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
      this.blockReceipts(announced),
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
    for (const [id, receipt] of await Promise.all(unseen.map(async (op) => [op.id, await this.findReceipt(op)] as const))) receipts.set(id, receipt);
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
        if (this.suspects.has(op.id) && !(await this.findReceipt(op))) {
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
        await this.broadcast(latest, op.id); // dropped (restart, reorg, refused while unfunded): the same bytes again
      } else if (latest.nonce === minedNonce && Date.now() - Date.parse(latest.createdAt) > settings.stuckAfterMs) {
        // Known to the node and next in line, yet not mined: outbid with a fee bump, if it still holds.
        const check = await this.checkBeforeBump(op);
        if (check !== "chain unavailable") await this.exclusive(() => this.bump(op.id, check));
      }
    }
  }

  /**
   * The receipts of these blocks, by transaction hash (lowercase). A block the node cannot answer for (no
   * eth_getBlockReceipts, an outage) gives none: its operations are looked up by nonce, as without a
   * subscription.
   */
  private async blockReceipts(blocks: bigint[]): Promise<Map<string, TransactionReceipt>> {
    const byHash = new Map<string, TransactionReceipt>();
    if (this.noBlockReceipts) return byHash;
    const answers = await Promise.all(
      blocks.map(
        (n) =>
          this.deps.chain.request({ method: "eth_getBlockReceipts", params: [numberToHex(n)] } as never).catch((error: unknown) => {
            // Refused rather than unanswered: a node without the method is not asked again.
            if (!isTransportError(error)) this.noBlockReceipts = true;
            return null;
          }) as Promise<unknown[] | null>,
      ),
    );
    for (const receipt of answers.flatMap((a) => (Array.isArray(a) ? a : []))) {
      const formatted = formatTransactionReceipt(receipt as never) as TransactionReceipt;
      byHash.set(formatted.transactionHash.toLowerCase(), formatted);
    }
    return byHash;
  }

  private async findReceipt(op: OperationRecord): Promise<TransactionReceipt | undefined> {
    for (const attempt of [...op.attempts].reverse()) {
      try {
        return await this.deps.chain.getTransactionReceipt({ hash: attempt.hash as Hex });
      } catch (error) {
        // Only "no receipt" means not mined; any other failure aborts this tick (decided on the next).
        if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
      }
    }
    return undefined;
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
      this.fail(op, "reverted", await this.minedRevertReason(op, receipt));
    }
  }

  /**
   * Why a mined transaction reverted: the same call replayed on the state after its block (which holds
   * what an earlier transaction of that block changed, the usual cause), then on the state before it.
   */
  private async minedRevertReason(op: OperationRecord, receipt: TransactionReceipt): Promise<FailureReason> {
    for (const blockNumber of [receipt.blockNumber, receipt.blockNumber - 1n]) {
      try {
        await this.deps.chain.simulateContract({
          account: this.deps.account.address,
          address: this.deps.checks.config.poolAddress as Address,
          abi: poolAbi,
          ...poolCall(op.request),
          gas: this.deps.settings.gasLimit,
          blockNumber,
        } as never);
      } catch (error) {
        return revertReason("reverted", error);
      }
    }
    return { code: "reverted", detail: `${receipt.transactionHash} was mined with status 0` };
  }

  /**
   * A fee bump signs the operation's call again: checked again first (outside the writer, as before its
   * first signature) unless that was within resimulateAfterMs. "ok", the problem that would make it revert
   * now, or "chain unavailable" (decided on a later tick).
   */
  private async checkBeforeBump(op: OperationRecord): Promise<"ok" | "chain unavailable" | ProblemError> {
    const checkedAt = this.lastChecked.get(op.id);
    if (checkedAt !== undefined && Date.now() - checkedAt < this.deps.settings.resimulateAfterMs) return "ok";
    const readAt = Date.now();
    try {
      await this.recheck(op);
    } catch (error) {
      return error instanceof ProblemError && error.code !== "chain_unavailable" ? error : "chain unavailable";
    }
    this.lastChecked.set(op.id, readAt);
    this.withheld.delete(op.id);
    return "ok";
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
      if (this.withheld.has(id)) return;
      this.withheld.add(id);
      this.deps.log.warn({ operation: id, code: check.code }, "fee bump withheld: the call would now revert");
      return this.transition(op, "submitted", `fee bump withheld: ${check.code}: ${check.message}; ${latest.hash} stays as broadcast (it may still be mined)`);
    }
    const fees = bumpedFees({ maxFeePerGas: BigInt(latest.maxFeePerGas), maxPriorityFeePerGas: BigInt(latest.maxPriorityFeePerGas) }, await currentFees(chain), settings.feeBumpPercent);
    if (fees.maxFeePerGas > settings.maxFeePerGasCap) {
      this.deps.log.warn({ operation: id }, "fee bump would exceed the cap; waiting");
      return;
    }
    const attempt = await this.sign(op, latest.nonce, fees);
    op.attempts.push(attempt);
    this.deps.events?.feeBump(op);
    this.transition(op, "submitted", `fee bump: ${attempt.hash} replaces ${latest.hash} (maxFeePerGas ${latest.maxFeePerGas} -> ${attempt.maxFeePerGas})`, { attempt });
    await this.broadcast(attempt, op.id);
  }

  private fail(op: OperationRecord, state: OperationState, reason: FailureReason): void {
    op.reason = reason;
    this.transition(op, state, reason.detail); // frees its nullifiers (a failed state)
  }

  /** `deferWrite`: the next transition, made at once in the same step, writes this one with it. */
  private transition(op: OperationRecord, state: OperationState, detail?: string, changes?: { attempt?: StoredAttempt; deferWrite?: boolean }): void {
    if (TERMINAL_STATES.has(state)) {
      this.lastChecked.delete(op.id);
      this.withheld.delete(op.id);
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
