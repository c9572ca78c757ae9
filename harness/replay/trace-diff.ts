import { printable } from "../../src/printable.ts";
import type { TracedCall } from "../trace/index.ts";
import type { DiffFrame, FrameChange, TraceDiff } from "./schemas.ts";

const label = (call: TracedCall) => `${call.contract}.${call.function}`;
const frameOf = (call: TracedCall): DiffFrame => ({ contract: call.contract, function: call.function, args: call.args, returned: call.returned, error: call.error, gasUsed: call.gasUsed });

/** The longest a line's arguments are shown. */
const ARGS_CHARS = 160;

/** A frame as one line of text (escaped: names, arguments and revert text come from the chain). */
function line(marker: string, depth: number, call: TracedCall, gas = `${call.gasUsed}`): string {
  const args = call.args === null ? "" : call.args.join(", ");
  const shown = args.length <= ARGS_CHARS ? args : `${args.slice(0, ARGS_CHARS - 1)}…`;
  const end = call.error ? `  <- reverted: ${call.error}` : call.returned !== null ? `  -> ${call.returned}` : "";
  return printable(`${marker}${"  ".repeat(depth)}${label(call)}(${shown})  [${gas} gas]${end}`);
}

/** Pairs two lists of calls in order, by contract and function (a longest common subsequence): an inserted call is one addition, not a shift. */
function align(before: TracedCall[], after: TracedCall[]): Array<[TracedCall | null, TracedCall | null]> {
  const n = before.length;
  const m = after.length;
  const lcs = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = label(before[i]!) === label(after[j]!) ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const pairs: Array<[TracedCall | null, TracedCall | null]> = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && label(before[i]!) === label(after[j]!)) pairs.push([before[i++]!, after[j++]!]);
    else if (j < m && (i === n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) pairs.push([null, after[j++]!]);
    else pairs.push([before[i++]!, null]);
  }
  return pairs;
}

/**
 * The original's call trace against the replay's: walked together in execution order (a frame's call,
 * then its calls, then its return), so `first` is where the two runs part. Gas is shown, not compared:
 * a call replayed costs other gas than a mined transaction did for the same work.
 */
export function diffTraces(before: TracedCall, after: TracedCall): TraceDiff {
  const changes: FrameChange[] = [];
  const lines: string[] = [];
  const subtree = (marker: string, call: TracedCall, depth: number) => {
    lines.push(line(marker, depth, call));
    for (const inner of call.calls) subtree(marker, inner, depth + 1);
  };
  const walk = (a: TracedCall, b: TracedCall, path: string[], depth: number) => {
    const here = [...path, label(b)];
    // A revert's data is its error: a return compared only when both end alike.
    const fields = [a.input !== b.input && "input", a.error === b.error && a.output !== b.output && "output", a.error !== b.error && "error"].filter((f): f is FrameChange["fields"][number] => f !== false);
    const change: FrameChange = { change: "changed", path: here, fields, before: frameOf(a), after: frameOf(b) };
    // Called differently: it differs as it is entered; else a different return or revert shows as it ends.
    if (fields.includes("input")) changes.push(change);
    if (fields.length > 0) lines.push(line("- ", depth, a), line("+ ", depth, b));
    else lines.push(line("  ", depth, b, a.gasUsed === b.gasUsed ? `${b.gasUsed}` : `${a.gasUsed} -> ${b.gasUsed}`));
    const pairs = align(a.calls, b.calls);
    for (let i = 0; i < pairs.length; i++) {
      const [x, y] = pairs[i] as [TracedCall | null, TracedCall | null];
      if (x && y) {
        walk(x, y, here, depth + 1);
        continue;
      }
      const [call, marker] = x ? [x, "- "] : [y as TracedCall, "+ "];
      const one = (c: TracedCall): FrameChange => ({ change: x ? "removed" : "added", path: [...here, label(c)], fields: [], before: x ? frameOf(c) : null, after: x ? null : frameOf(c) });
      changes.push(one(call));
      subtree(marker, call, depth + 1);
      // A run of the same leaf call on one side (a hasher called for each tree level) is one line and a count.
      let run = 0;
      for (let next = pairs[i + 1]; next && !next[0] === !x && !next[1] === !y && call.calls.length === 0; next = pairs[i + 1]) {
        const same = (next[0] ?? next[1]) as TracedCall;
        if (label(same) !== label(call) || same.calls.length > 0) break;
        changes.push(one(same));
        run++;
        i++;
      }
      if (run > 0) lines.push(printable(`${marker}${"  ".repeat(depth + 1)}… and ${run} more call${run === 1 ? "" : "s"} of ${label(call)}`));
    }
    if (fields.length > 0 && !fields.includes("input")) changes.push(change);
  };
  walk(before, after, [], 0);
  return { identical: changes.length === 0, first: changes[0] ?? null, changes, text: lines.join("\n") };
}

/** A change in words, on one line (escaped): where, and what differs. */
export function describeChange(change: FrameChange): string {
  const where = change.path.join(" > ");
  if (change.change === "added") return printable(`${where}: called by the replay only`);
  if (change.change === "removed") return printable(`${where}: called by the original only`);
  const what = change.fields.map((field) => {
    if (field === "input") return `arguments (${(change.before?.args ?? ["?"]).join(", ")}) -> (${(change.after?.args ?? ["?"]).join(", ")})`;
    if (field === "error") return `revert ${change.before?.error ?? "none"} -> ${change.after?.error ?? "none"}`;
    return `returned ${change.before?.returned ?? "other data"} -> ${change.after?.returned ?? "other data"}`;
  });
  return printable(`${where}: ${what.join("; ")}`);
}
