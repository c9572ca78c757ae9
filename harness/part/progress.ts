/** One finished step of bringing a stack up, with how long it took. */
export interface StepEvent {
  step: string;
  detail?: string | undefined;
  ms: number;
}

export type ProgressListener = (event: StepEvent) => void;

/** Runs a step and reports its duration; the step's result may add a detail line. */
export async function timed<T>(
  listener: ProgressListener | undefined,
  step: string,
  run: () => Promise<T>,
  detail?: (result: T) => string | undefined,
): Promise<T> {
  const started = performance.now();
  const result = await run();
  listener?.({ step, detail: detail?.(result), ms: performance.now() - started });
  return result;
}
