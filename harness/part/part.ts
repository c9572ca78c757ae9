/**
 * A part of a stack (the chain, its deployment, the runtime, the dev tools...), started and stopped
 * through this one small interface: prool's instance, reduced to what a stack needs. The stack lists
 * its parts in order (harness/stack.ts); a new capability is a folder with its part, and one line there.
 */
export interface StackPart<T> {
  readonly name: string;
  /** Starts the part; what it returns is what the parts after it, and the stack, use. */
  start(): Promise<T>;
  /** Undoes what start() did, last step first, also after a start that failed halfway; never throws. */
  stop(): Promise<void>;
}

/**
 * A part from its start function, which registers what undoes each step as it takes it (`onStop`, also
 * later, from a function the part returned): stop() runs those in reverse, each one's failure ignored.
 */
export function definePart<T>(name: string, start: (onStop: (undo: () => Promise<unknown>) => void) => Promise<T>): StackPart<T> {
  const undos: Array<() => Promise<unknown>> = [];
  return {
    name,
    start: () => start((undo) => void undos.push(undo)),
    async stop() {
      for (const undo of undos.splice(0).reverse()) await undo().catch(() => {});
    },
  };
}

/** A stack's parts in the order they started, stopped in reverse: the last started stops first. */
export class StackParts {
  private readonly started: Array<StackPart<unknown>> = [];

  /** Starts a part; one whose start fails halfway is stopped with the others by stop(). */
  start<T>(part: StackPart<T>): Promise<T> {
    this.started.push(part);
    return part.start();
  }

  async stop(): Promise<void> {
    for (const part of this.started.splice(0).reverse()) await part.stop();
  }
}
