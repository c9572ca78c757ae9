/**
 * A part of a stack (the chain, its deployment, the runtime, the dev tools...), started and stopped
 * through this one small interface: prool's instance, reduced to what a stack needs. The stack lists
 * its parts in order (harness/stack.ts); a new capability is a folder with its part, and one line there.
 */
export interface StackPart<T> {
  readonly name: string;
  /** Starts the part; what it returns is what the parts after it, and the stack, use. */
  start(): Promise<T>;
  /**
   * Undoes what start() did, last step first, also after a start that failed halfway; never throws.
   * `failedStart`: the stack's start failed, and undoFailedStart() follows once every part has stopped.
   */
  stop(options?: { failedStart?: boolean }): Promise<void>;
  /** After a failed start, once every part has stopped: removes what start() wrote, last first; never throws. */
  undoFailedStart(): Promise<void>;
}

type Undo = () => Promise<unknown>;

/** What a part's start function registers its undos with. */
export interface PartUndos {
  /** Undoes a step when the part stops (stop()), whether the stack's start failed or not. */
  onStop(undo: Undo): void;
  /**
   * Undoes a step only when the stack's start failed, after every part has stopped (its processes are
   * gone): what the start wrote, which a stack that started keeps.
   */
  onFailedStart(undo: Undo): void;
  /**
   * Undoes a step last of all: when the part stops, or, after a failed start, once its onFailedStart
   * undos have run (what the part holds until the state it wrote is undone).
   */
  onReleased(undo: Undo): void;
}

/**
 * A part from its start function, which registers what undoes each step as it takes it (`onStop`, also
 * later, from a function the part returned): stop() runs those in reverse, each one's failure ignored.
 * A failed start's undos (`onFailedStart`) run after every part stopped, and `onReleased` ones last.
 */
export function definePart<T>(name: string, start: (onStop: PartUndos["onStop"], undos: PartUndos) => Promise<T>): StackPart<T> {
  const stops: Undo[] = [];
  const failedStarts: Undo[] = [];
  const releases: Undo[] = [];
  const runAll = async (undos: Undo[]) => {
    for (const undo of undos.splice(0).reverse()) await undo().catch(() => {});
  };
  const undos: PartUndos = {
    onStop: (undo) => void stops.push(undo),
    onFailedStart: (undo) => void failedStarts.push(undo),
    onReleased: (undo) => void releases.push(undo),
  };
  return {
    name,
    start: () => start(undos.onStop, undos),
    async stop({ failedStart = false } = {}) {
      await runAll(stops);
      if (failedStart) return; // undoFailedStart() follows
      failedStarts.splice(0);
      await runAll(releases);
    },
    async undoFailedStart() {
      await runAll(failedStarts);
      await runAll(releases);
    },
  };
}

/** A stack's parts in the order they started, stopped in reverse: the last started stops first. */
export class StackParts {
  private readonly started: Array<StackPart<unknown>> = [];

  /** Starts a part; one whose start fails halfway is stopped with the others by stop() or failedStart(). */
  start<T>(part: StackPart<T>): Promise<T> {
    this.started.push(part);
    return part.start();
  }

  async stop(): Promise<void> {
    for (const part of this.started.splice(0).reverse()) await part.stop();
  }

  /**
   * After a failed start: every part stopped (in reverse), so that no process uses what was written;
   * then what each wrote undone, in the same order (the state dir, the first part, last).
   */
  async failedStart(): Promise<void> {
    const parts = this.started.splice(0).reverse();
    for (const part of parts) await part.stop({ failedStart: true });
    for (const part of parts) await part.undoFailedStart();
  }
}
