import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { withQueueStack } from "./support/queue-stack.ts";

// A delay fault's held answers end with the fault. Before the fix, a call already waiting out its
// delayMs (up to ten minutes) kept waiting after the fault was switched off or a reset cleared it: the
// runtime's reads stayed that late, and a reset waited on the engine's read for its whole timeout.
let stack: DevStack;
withQueueStack({ options: { store: ":memory:" }, client: false }, (s) => ({ stack } = s));

const blockNumber = () =>
  fetch(stack.faults.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }) }).then(
    async (response) => ((await response.json()) as { result?: string }).result,
  );
/** What `answer` gave within `ms`, or "still waiting" (the fault's delay is far longer). */
const within = <T>(answer: Promise<T>, ms: number) => Promise.race([answer, new Promise<"still waiting">((resolve) => setTimeout(() => resolve("still waiting"), ms).unref())]);

describe("a delay fault ends for the calls it holds", () => {
  it("switched off: a call waiting out its delay is answered at once", async () => {
    stack.faults.rpc({ kind: "delay", delayMs: 600_000 });
    const answer = blockNumber();
    await new Promise((resolve) => setTimeout(resolve, 200));
    stack.faults.rpc(null);
    expect(await within(answer, 5_000)).toMatch(/^0x/);
  });

  it("a reset clears it: the reset and the calls held are answered, not held for the delay", async () => {
    stack.faults.rpc({ kind: "delay", delayMs: 600_000 });
    const answer = blockNumber();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await within(stack.reset().then(() => "reset"), 8_000)).toBe("reset");
    expect(await within(answer, 5_000)).toMatch(/^0x/);
    expect(stack.faults.state().fault).toBe("none");
  });
});
