import { ProblemError } from "../problem.ts";

/**
 * Chain work a request waits for, bounded as a whole: past `ms` the request is a 503 chain_unavailable
 * (each call has its own timeout too, but several in a row would add up). The work is not cancelled:
 * it must only read, so that nothing it does after the answer matters.
 */
export async function withinDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ProblemError("chain_unavailable", `the chain did not answer within ${ms} ms; try again`, { headers: { "retry-after": "2" } })),
      ms,
    );
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
