import { expect, test } from "../harness/vitest/index.ts";
import { poolFixture } from "./support/pool.ts";
import { headOf, relayState } from "./support/dev-controls.ts";

// Issue 40, item 1, through the vitest fixtures as a client developer's suite uses them: a test that
// reorgs right after its reset replaced the clean snapshot's own block, and before the fix every later
// test of the worker failed in its reset (503 reset_failed, then "this snapshot is lost").
let start: { number: string; hash: string } | undefined;
// A client's view of the worker's Pool (its prover), made once: the stack is the same in every test.
let pool: Awaited<ReturnType<typeof poolFixture>> | undefined;

test("a test that reorgs depth 1 right after its reset", async ({ stack }) => {
  start = await headOf(stack);
  const response = await fetch(`${stack.queueUrl}/api/dev/reorg`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ depth: 1 }) });
  expect(response.status).toBe(200);
  expect((await headOf(stack)).hash).not.toBe(start.hash);
});

for (let i = 0; i < 20; i++) {
  test(`then test ${i + 1} of 20 starts at the clean head and relays`, async ({ stack, queue }) => {
    expect(await headOf(stack)).toMatchObject({ number: start?.number, hash: start?.hash });
    pool ??= await poolFixture(stack);
    expect(await relayState(stack, pool, queue, 2 + (i % 7))).toBe("confirmed");
  });
}
