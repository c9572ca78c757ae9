/** The chain's head as last seen: its number, and when it was seen (epoch ms). */
export interface ObservedHead {
  number: bigint;
  observedAt: number;
}

/** A head older than this is refreshed in the background the next time someone looks. */
export const HEAD_FRESH_MS = 1_000;

/**
 * The last head the runtime saw, for answers that must not wait on the chain (status, submissions):
 * they count confirmations from it and say how old it is. The engine reports every head it reads;
 * readers start a refresh in the background when it is stale, one at a time.
 */
export class HeadTracker {
  private latest: (ObservedHead & { readStartedAt: number }) | null = null;
  private refreshing = false;
  /** Reads started before the last forget() describe another chain: ignored. */
  private forgottenAt = 0;
  private readonly read: () => Promise<bigint>;

  constructor(read: () => Promise<bigint>) {
    this.read = read;
  }

  /** The last head seen, at once (null before the first one). */
  current(): ObservedHead | null {
    if (this.latest === null || Date.now() - this.latest.observedAt > HEAD_FRESH_MS) this.refresh();
    return this.latest === null ? null : { number: this.latest.number, observedAt: this.latest.observedAt };
  }

  /** A head read that started at `readStartedAt`; a read older than the one already kept is ignored. */
  observe(number: bigint, readStartedAt: number): void {
    if (readStartedAt < this.forgottenAt || (this.latest !== null && readStartedAt < this.latest.readStartedAt)) return;
    this.latest = { number, observedAt: Date.now(), readStartedAt };
  }

  /** Drops the head seen (the chain was reverted under it) and reads it again. */
  forget(): void {
    this.latest = null;
    this.forgottenAt = Date.now();
    this.refreshing = false;
    this.refresh();
  }

  /** Reads the head in the background; a failure keeps the last head (its age tells the reader). */
  refresh(): void {
    if (this.refreshing) return;
    this.refreshing = true;
    const startedAt = Date.now();
    this.read()
      .then((number) => this.observe(number, startedAt))
      .catch(() => {})
      .finally(() => (this.refreshing = false));
  }
}
