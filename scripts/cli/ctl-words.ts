import type { formatEther as FormatEther } from "viem";
import { printable } from "../../src/printable.ts";

// What `ctl` prints by default: a dev route's answer as a sentence, in the dashboard's words for the
// controls (harness/dashboard/controls.ts). `ctl --json` prints the answer itself, for scripts.

interface Head {
  number: number;
  timestamp: number;
}
interface FaultState {
  fault: "none" | "fail" | "timeout" | "delay" | "drop-logs" | "unsupported";
  delayMs: number | null;
  methods: string[] | null;
  endsAt: string | null;
  revertNextRelay: boolean;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
const chainTime = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().replace(".000Z", "Z");
/** Ether as a person reads it: at most 4 decimals ("about" when cut), the exact wei under --json. */
function ether(wei: bigint, formatEther: typeof FormatEther): string {
  const [whole, fraction = ""] = formatEther(wei).split(".");
  return fraction.length <= 4 ? formatEther(wei) : `about ${whole}.${fraction.slice(0, 4)}`;
}
const at = (head: Head) => `the head is block ${head.number}, chain time ${chainTime(head.timestamp)}`;

const RPC_FAULTS: Record<Exclude<FaultState["fault"], "none" | "delay" | "unsupported">, string> = {
  fail: "the runtime's RPC answers 503",
  timeout: "the runtime's RPC never answers",
  "drop-logs": "the runtime's RPC loses logs",
};

function faultWords(state: FaultState): string {
  const methods = state.methods?.join(", ");
  const rpc =
    state.fault === "none"
      ? "the runtime's RPC behaves"
      : state.fault === "delay"
        ? `the runtime's RPC answers ${state.delayMs} ms late`
        : state.fault === "unsupported"
          ? `the runtime's RPC lacks ${methods}`
          : RPC_FAULTS[state.fault];
  const only = methods !== undefined && state.fault !== "unsupported" && state.fault !== "none" ? ` for ${methods} only` : "";
  const until = state.endsAt === null ? "" : ` until ${state.endsAt}`;
  return `${rpc}${only}${until}; the next relay ${state.revertNextRelay ? "reverts on chain (armed)" : "goes through"}`;
}

/**
 * A control's answer (its route's 200 body) in words, escaped for the terminal: one line, or a few. viem
 * (a third of a short command's start) is loaded for the relayer's balance alone.
 */
export async function controlWords(route: string, body: Record<string, unknown>, answer: unknown): Promise<string> {
  const a = answer as Record<string, unknown>;
  const words = route === "relayer" ? relayerWords(a, (await import("viem")).formatEther) : wordsOf(route, body, a);
  return words.split("\n").map(printable).join("\n");
}

function relayerWords(a: Record<string, unknown>, formatEther: typeof FormatEther): string {
  const balance = BigInt(a.balanceWei as string);
  const engine = a.engine === "paused" ? "relayer paused: accepted operations wait" : "relayer running";
  return `${engine}; its balance is ${ether(balance, formatEther)} ETH${balance === 0n ? " (submissions answer 503 relayer_unfunded)" : ""}`;
}

function wordsOf(route: string, body: Record<string, unknown>, a: Record<string, unknown>): string {
  switch (route) {
    case "mine":
      return `mined ${plural(Number(body.blocks), "block")}: ${at(a as unknown as Head)}`;
    case "time":
      return `moved chain time ${body.seconds} s forward and mined a block: ${at(a as unknown as Head)}`;
    case "mining":
      return a.mode === "hold"
        ? `mining held: every transaction waits in the mempool until mining is released (${at(a.head as Head)})`
        : `mining released: transactions are mined at once (${at(a.head as Head)})`;
    case "drop":
      return `dropped transaction ${a.dropped} of ${body.operationId} from the mempool: the relayer broadcasts it again`;
    case "reorg": {
      const resent = a.resent as string[];
      const again = resent.length === 0 ? "" : a.mined ? ", mined again at once" : ", waiting in the mempool (mining is held)";
      return [`reorged the last ${plural(Number(a.depth), "block")}: ${at(a.head as Head)}; ${plural(resent.length, "transaction")} sent again${again}`, ...resent.map((hash) => `  sent again: ${hash}`)].join("\n");
    }
    case "rpc":
    case "revert-next":
    case "faults":
      return faultWords(a as unknown as FaultState);
    case "config":
      return `serving the ${a.serving} configuration: Pool ${a.poolAddress}`;
    case "reset":
      return "reset the stack: the chain and the operations are back at the clean state it started in, faults off, the original configuration served";
    default:
      return JSON.stringify(a);
  }
}

/** A refusal (RFC 9457 problem+json) in words: its status, code and detail; any other answer as it came. */
export function problemWords(status: number, text: string): string {
  try {
    const problem = JSON.parse(text) as { code?: unknown; detail?: unknown; title?: unknown };
    const detail = typeof problem.detail === "string" ? problem.detail : typeof problem.title === "string" ? problem.title : text;
    return `${status}${typeof problem.code === "string" ? ` ${problem.code}` : ""}: ${detail}`;
  } catch {
    return `${status}: ${text}`;
  }
}
