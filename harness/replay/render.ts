import type { FailureReason } from "../../src/schemas/operation.ts";
import { printable } from "../../src/printable.ts";
import type { ReplayAnswer } from "./schemas.ts";
import { describeChange } from "./trace-diff.ts";

const why = (reason: FailureReason | null) => (reason ? ` (${reason.code}: ${reason.detail})` : "");
type Traced = ReplayAnswer["before"]["trace"];
const source = (trace: NonNullable<Traced>) =>
  trace.source === "transaction" ? `transaction ${trace.transactionHash}${trace.block === null ? "" : ` in block ${trace.block}`}` : `its call on the state of block ${trace.block}`;

/**
 * A replay's answer as lines for a terminal: the outcome before and after, the verdict, then the traces
 * diffed (the first difference in words, the rest as the merged tree). Every line is escaped: operation
 * data, names and revert text come from the store and the chain (a loaded bundle's, say).
 */
export function renderReplay(answer: Omit<ReplayAnswer, "text">): string {
  const { before, after, verdict } = answer;
  const lines = [
    `replay of ${answer.operation} (${answer.kind}) on block ${answer.block.number}${answer.block.head ? " (the head)" : ""}`,
    `before: ${before.state}${why(before.reason)}`,
    `after:  ${after.admitted ? "admitted" : `refused${why(after.refusal)}`}`,
    `        simulation ${after.simulation.ok ? "succeeds" : `reverts${why(after.simulation.reason)}`}`,
  ];
  const { sent } = after;
  if (sent) lines.push(sent.id ? `sent:   ${sent.id}, a replay of ${sent.replayOf}: ${sent.state}${why(sent.reason)}${sent.transactionHash ? `, transaction ${sent.transactionHash}` : ""}` : `sent:   refused${why(sent.reason)}`);
  const outcome = verdict.matched === null ? `cannot be judged yet (it is still ${after.state})` : verdict.matched ? "as expected" : "not as expected";
  lines.push(`verdict: ${after.state}, expected ${verdict.expected}: ${outcome} (exit ${verdict.exitCode})`, "");
  if (!before.trace || !after.trace || !answer.diff) {
    lines.push(`no trace diff: ${before.traceUnavailable ?? after.traceUnavailable ?? "a trace is missing"}`);
    const shown = after.trace ?? before.trace;
    if (!shown) return lines.map(printable).join("\n");
    lines.push(`${shown === after.trace ? "replay" : "original"}: ${source(shown)}`);
    return `${lines.map(printable).join("\n")}\n${shown.text}`; // a trace's text is escaped line by line already
  }
  const { diff } = answer;
  if (diff.identical) lines.push("traces: identical (gas aside)");
  else {
    lines.push(`first difference: ${diff.first ? describeChange(diff.first) : ""}`);
    const more = diff.changes.length - 1;
    lines.push(more > 0 ? `then ${more} more difference${more === 1 ? "" : "s"}, in the trees below` : "no other difference");
  }
  lines.push(`--- original: ${source(before.trace)}`, `+++ replay:   ${source(after.trace)}`);
  // The diff's lines are escaped already; each header above goes through printable here.
  return `${lines.map(printable).join("\n")}\n${diff.text}`;
}
