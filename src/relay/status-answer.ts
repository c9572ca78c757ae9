import type { ObservedHead } from "../chain/head.ts";
import type { ObservedReservation } from "../chain/reservation-tracker.ts";
import { Operation } from "../schemas/operation.ts";
import type { OperationRecord } from "../store/types.ts";
import { confirmationsOf, operationView } from "./view.ts";

/** What a status answer says, besides the operation: the head it counts from, and its reservation. */
export interface StatusSources {
  head: { current(): ObservedHead | null };
  reservations: { current(id: string): ObservedReservation | null };
  requiredConfirmations: number;
}

interface Serialized {
  /** What the answer was made from besides the operation: an action's reservation as last read. */
  reservation: { state: string; observedAt: number } | null;
  reservationId: string | null;
  terminal: boolean;
  /** The block the operation was mined in, if any: its confirmations are counted from the head of each answer. */
  block: number | null;
  /**
   * The JSON around the two parts that follow the head: the confirmations count, and the head itself (its
   * number, when it was seen, its age). A new block changes only these.
   */
  beforeConfirmations: string;
  betweenConfirmationsAndHead: string;
  afterHead: string;
}

/**
 * Status answers as JSON. Clients poll the same few operations many times a second, and an answer
 * only changes when the operation, the head seen or its reservation does: it is built, checked against
 * the Operation schema and serialized once per change of the operation or its reservation, and each poll
 * writes only the confirmations and the head into it (during a burst a block comes every few ms: the whole
 * answer made again for each would be most of a poll's cost). Records come from the store's peek (frozen,
 * and a new object after every write), so they key the cache.
 */
export class StatusAnswers {
  private readonly answers = new WeakMap<Readonly<OperationRecord>, Serialized>();
  private readonly sources: StatusSources;
  /** The last head's observedAt as ISO 8601: the same head is answered by many polls. */
  private seen: { at: number; iso: string } = { at: Number.NaN, iso: "" };

  constructor(sources: StatusSources) {
    this.sources = sources;
  }

  answer(op: Readonly<OperationRecord>, now = Date.now()): { json: string; terminal: boolean } {
    const head = this.sources.head.current();
    let serialized = this.answers.get(op);
    if (serialized === undefined || !this.sameReservation(serialized)) {
      serialized = this.serialize(op, head);
      this.answers.set(op, serialized);
    }
    const confirmations = confirmationsOf(serialized.block, head);
    const json = serialized.beforeConfirmations + confirmations + serialized.betweenConfirmationsAndHead + this.headJson(head, now) + serialized.afterHead;
    return { json, terminal: serialized.terminal };
  }

  /** observedHead as operationView makes it, as JSON. */
  private headJson(head: ObservedHead | null, now: number): string {
    if (head === null) return "null";
    if (this.seen.at !== head.observedAt) this.seen = { at: head.observedAt, iso: new Date(head.observedAt).toISOString() };
    return `{"number":${Number(head.number)},"observedAt":"${this.seen.iso}","ageMs":${Math.max(0, now - head.observedAt)}}`;
  }

  /** Whether an action's answer was made from its reservation as now read (compared field by field: no key string per poll). */
  private sameReservation(serialized: Serialized): boolean {
    if (serialized.reservationId === null) return true;
    const now = this.sources.reservations.current(serialized.reservationId);
    const was = serialized.reservation;
    return was === null ? now === null : now !== null && was.state === now.state && was.observedAt === now.observedAt;
  }

  private serialize(op: Readonly<OperationRecord>, head: ObservedHead | null): Serialized {
    const view = Operation.parse(operationView(op, head, this.sources.requiredConfirmations, this.sources.reservations));
    const json = JSON.stringify(view);
    const reservationId = view.action?.reservationId ?? null;
    const reservation = reservationId === null ? null : this.sources.reservations.current(reservationId);
    // Top-level keys, in the view's order: "confirmations", "requiredConfirmations", then "observedHead",
    // whose value ends at the first "}" after it (or is null), followed by "createdAt". A key in the JSON
    // is an unescaped quote pair, which no string value holds, and no nested object has these keys.
    const confirmations = json.indexOf('"confirmations":');
    const required = json.indexOf(',"requiredConfirmations":', confirmations);
    const observed = json.indexOf('"observedHead":', required);
    const after = json.indexOf(',"createdAt":', observed);
    if (confirmations < 0 || required < 0 || observed < 0 || after < 0) throw new Error("status answer without confirmations and observedHead in their place"); // a change to the view would land here in tests
    return {
      reservation: reservation && { state: reservation.state, observedAt: reservation.observedAt },
      reservationId,
      terminal: view.terminal,
      block: view.block?.number ?? null,
      beforeConfirmations: json.slice(0, confirmations + '"confirmations":'.length),
      betweenConfirmationsAndHead: json.slice(required, observed + '"observedHead":'.length),
      afterHead: json.slice(after),
    };
  }
}
