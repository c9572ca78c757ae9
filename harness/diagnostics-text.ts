import type { StackDiagnostics } from "./dev-stack.ts";

/**
 * A failing test's report of the stack's side, as the test runners' integrations print or attach it:
 * the operations the test relayed, and the last lines of anvil's and the runtime's logs.
 */
export function diagnosticsText({ operations, anvil, runtime }: StackDiagnostics): string {
  const relayed = operations.length === 0 ? ["  none"] : operations.map((op) => `  ${op.id} ${op.kind} ${op.state}${op.reason ? ` (${op.reason})` : ""}${op.transactionHash ? ` ${op.transactionHash}` : ""}`);
  return ["queue-devstack: operations this test relayed:", ...relayed, "anvil's last lines:", ...anvil.map((l) => `  ${l}`), "the queue runtime's last lines:", ...runtime.map((l) => `  ${l}`)].join("\n");
}
