import type { ObservedHead } from "../chain/head.ts";
import type { ObservedReservation } from "../actions/reservation-tracker.ts";
import { Operation } from "./operation.ts";
import type { OperationRecord } from "./store.ts";
import { operationView } from "./view.ts";

/** What a status answer says, besides the operation: the head it counts from, and its reservation. */
export interface StatusSources {
  head: { current(): ObservedHead | null };
  reservations: { current(id: string): ObservedReservation | null };
  requiredConfirmations: number;
}

interface Serialized {
  /** What the answer was made from: the head seen and, for an action, its reservation as last read. */
  head: { number: bigint; observedAt: number } | null;
  reservation: { state: string; observedAt: number } | null;
  reservationId: string | null;
  terminal: boolean;
  /** The JSON around the head's age, the one part that changes between two polls. */
  beforeAge: string;
  afterAge: string;
}

/**
 * Status answers as JSON. Clients poll the same few operations many times a second, and an answer
 * only changes when the operation, the head seen or its reservation does: it is built, checked against
 * the Operation schema and serialized once per change, and each poll writes only the head's age into it.
 * Records come from the store's peek (frozen, and a new object after every write), so they key the cache.
 */
export class StatusAnswers {
  private readonly answers = new WeakMap<Readonly<OperationRecord>, Serialized>();
  private readonly sources: StatusSources;

  constructor(sources: StatusSources) {
    this.sources = sources;
  }

  answer(op: Readonly<OperationRecord>, now = Date.now()): { json: string; terminal: boolean } {
    const head = this.sources.head.current();
    let serialized = this.answers.get(op);
    if (serialized === undefined || !this.madeFrom(serialized, head)) {
      serialized = this.serialize(op, head);
      this.answers.set(op, serialized);
    }
    const age = head === null ? "" : String(Math.max(0, now - head.observedAt));
    return { json: serialized.beforeAge + age + serialized.afterAge, terminal: serialized.terminal };
  }

  /** Whether the answer was made from this head and its reservation as now read (compared field by field: no key string per poll). */
  private madeFrom(serialized: Serialized, head: ObservedHead | null): boolean {
    const made = serialized.head;
    if (made === null ? head !== null : head === null || made.number !== head.number || made.observedAt !== head.observedAt) return false;
    if (serialized.reservationId === null) return true;
    const now = this.sources.reservations.current(serialized.reservationId);
    const was = serialized.reservation;
    return was === null ? now === null : now !== null && was.state === now.state && was.observedAt === now.observedAt;
  }

  private serialize(op: Readonly<OperationRecord>, head: ObservedHead | null): Serialized {
    // Age 0 marks the spot: the answer is made and checked once, as any other answer would be.
    const view = Operation.parse(operationView(op, head, this.sources.requiredConfirmations, this.sources.reservations, head?.observedAt ?? 0));
    const json = JSON.stringify(view);
    const reservationId = view.action?.reservationId ?? null;
    const reservation = reservationId === null ? null : this.sources.reservations.current(reservationId);
    const made = { head: head && { number: head.number, observedAt: head.observedAt }, reservation: reservation && { state: reservation.state, observedAt: reservation.observedAt }, reservationId };
    if (view.observedHead === null) return { ...made, terminal: view.terminal, beforeAge: json, afterAge: "" };
    // observedHead is a top-level key and ageMs its last field: the first `"observedHead":{` outside a
    // string (a string's quotes are escaped) starts it.
    const start = json.indexOf('"observedHead":{');
    const field = '"ageMs":';
    const at = json.indexOf(`${field}0}`, start);
    if (start < 0 || at < 0) throw new Error("status answer without observedHead.ageMs"); // a change to the view would land here in tests
    return { ...made, terminal: view.terminal, beforeAge: json.slice(0, at + field.length), afterAge: json.slice(at + field.length + 1) };
  }
}
