import { decodeErrorResult, decodeFunctionData, decodeFunctionResult, toFunctionSelector, type Abi, type AbiFunction, type Address, type Hex } from "viem";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import { transactCalldata } from "../../src/chain/pool-call.ts";
import type { OperationRecord } from "../../src/store/types.ts";
import type { CompiledFixtures } from "../deployment/index.ts";
import { jsonRpc } from "../chain/index.ts";
import { printable } from "../../src/printable.ts";
import { precompileAt } from "./precompiles.ts";

/** One call of a transaction, as anvil's callTracer reports it, with names where the fixtures know them. */
export interface TracedCall {
  type: string;
  from: Address;
  to: Address | null;
  /** "Pool", "JoinSplitVerifier", "dUSDC", "SwapAdapter (route swap)", "precompile 0x07"…, or the address. */
  contract: string;
  /** "transactAction", "verifyProof", a precompile's "ecMul"…, or the selector. */
  function: string;
  gasUsed: number;
  /** The decoded custom error ("ActionExpired(1795439964)"), or anvil's words, when the call reverted. */
  error: string | null;
  /** The call's data, as sent. */
  input: Hex;
  /** What it returned (or its revert data); null when it returned nothing. */
  output: Hex | null;
  /** The arguments decoded with the fixtures' ABIs, each shortened to a line's worth; null when not known. */
  args: string[] | null;
  /** What it returned, decoded likewise ("true", "1500000"); null when it reverted or is not known. */
  returned: string | null;
  calls: TracedCall[];
}

export interface Trace {
  /** The transaction traced, or null for a call replayed (an operation never mined). */
  transactionHash: Hex | null;
  /** The block whose state a call replayed was run on; null for a transaction (its own block's). */
  block: number | null;
  root: TracedCall;
  /** The outermost decoded error, if the transaction reverted. */
  error: string | null;
  /** The tree as indented lines, for a terminal. */
  text: string;
}

interface RawFrame {
  type: string;
  from: Address;
  to?: Address;
  input: Hex;
  output?: Hex;
  error?: string;
  gasUsed: Hex;
  calls?: RawFrame[];
}

/** Names the stack's contracts from its manifest; decodes functions and errors with every fixture ABI. */
function namer(config: DeploymentConfig, fixtures: CompiledFixtures) {
  const names = new Map<string, string>([
    [config.poolAddress.toLowerCase(), "Pool"],
    [config.queue.proof.verifier.address.toLowerCase(), config.queue.proof.system === "dev" ? "DevVerifier" : "JoinSplitVerifier"],
    [config.accountRegistry.address.toLowerCase(), "AccountRegistry"],
    [config.receiveDirectory.address.toLowerCase(), "ReceiveDirectory"],
    ...config.assets.map((a) => [a.address.toLowerCase(), a.symbol] as [string, string]),
    ...config.routes.flatMap((r) => (r.action === "external" ? [[r.adapter.address.toLowerCase(), `${r.kind === "sync" ? "SwapAdapter" : "FillAdapter"} (route ${r.name})`] as [string, string]] : [])),
  ]);
  const abis = Object.values(fixtures.contracts).map((c) => c.abi as Abi);
  const selectors = new Map<string, AbiFunction>();
  for (const abi of abis) for (const item of abi) if (item.type === "function") selectors.set(toFunctionSelector(item as AbiFunction), item as AbiFunction);
  const known = (input: Hex) => selectors.get(input.slice(0, 10));
  const errorAbi = abis.flatMap((abi) => abi.filter((item) => item.type === "error"));
  return {
    contract: (address?: Address) => (address ? (names.get(address.toLowerCase()) ?? address) : "(create)"),
    fn: (input: Hex) => known(input)?.name ?? (input.length >= 10 ? input.slice(0, 10) : "(no data)"),
    args: (input: Hex): string[] | null => {
      const item = known(input);
      if (!item) return null;
      try {
        return (decodeFunctionData({ abi: [item], data: input }).args ?? []).map((arg) => shortValue(arg));
      } catch {
        return null;
      }
    },
    returned: (frame: RawFrame): string | null => {
      const item = known(frame.input);
      if (!item || frame.error || !frame.output || item.outputs.length === 0) return null;
      try {
        const value = decodeFunctionResult({ abi: [item], functionName: item.name, data: frame.output }) as unknown;
        return shortValue(value);
      } catch {
        return null;
      }
    },
    error: (frame: RawFrame) => {
      if (!frame.error) return null;
      if (frame.output && frame.output.length >= 10) {
        try {
          const decoded = decodeErrorResult({ abi: errorAbi, data: frame.output });
          return `${decoded.errorName}(${(decoded.args ?? []).map(String).join(", ")})`;
        } catch {
          /* not one of ours */
        }
      }
      return frame.error;
    },
  };
}

/** The longest a decoded value is shown: a proof's words or a ciphertext are long, and a trace is read line by line. */
const VALUE_CHARS = 66;

/** A decoded value as short text: numbers in decimal, bytes and tuples shortened in the middle. */
function shortValue(value: unknown): string {
  const text =
    typeof value === "bigint" || typeof value === "number" || typeof value === "boolean" || typeof value === "string"
      ? String(value)
      : JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  return text.length <= VALUE_CHARS ? text : `${text.slice(0, 30)}…${text.slice(-20)} (${text.length} chars)`;
}

function build(frame: RawFrame, names: ReturnType<typeof namer>): TracedCall {
  // A precompile's input is raw bytes, not an ABI call: named by its address, never decoded with a fixture's ABI.
  const precompile = precompileAt(frame.to);
  return {
    type: frame.type,
    from: frame.from,
    to: frame.to ?? null,
    contract: precompile?.contract ?? names.contract(frame.to),
    function: frame.type === "CREATE" ? "constructor" : (precompile?.name ?? names.fn(frame.input)),
    gasUsed: Number(frame.gasUsed),
    error: names.error(frame),
    input: frame.input,
    output: frame.output && frame.output !== "0x" ? frame.output : null,
    args: frame.type === "CREATE" || precompile ? null : names.args(frame.input),
    returned: precompile ? null : names.returned(frame),
    calls: (frame.calls ?? []).map((call) => build(call, names)),
  };
}

function lines(call: TracedCall, depth = 0): string[] {
  // Names and revert text come from the chain (a loaded bundle's, say): shown escaped.
  const head = `${"  ".repeat(depth)}${printable(`${call.contract}.${call.function}`)}  [${call.gasUsed} gas]${call.error ? `  <- reverted: ${printable(call.error)}` : ""}`;
  return [head, ...call.calls.flatMap((c) => lines(c, depth + 1))];
}

/**
 * The call trace of a mined transaction (debug_traceTransaction), or of a call replayed at a block, the
 * latest by default (debug_traceCall: an operation the runtime refused before broadcasting), named and decoded.
 */
export async function traceOf(args: {
  rpcUrl: string;
  config: DeploymentConfig;
  fixtures: CompiledFixtures;
  transactionHash?: Hex;
  call?: { from: Address; to: Address; data: Hex; gas?: bigint };
  /** The block whose state a call is replayed on (default: the latest). */
  block?: bigint | number;
}): Promise<Trace> {
  const tracer = { tracer: "callTracer" };
  const block = args.block === undefined ? "latest" : `0x${args.block.toString(16)}`;
  const raw = args.transactionHash
    ? await jsonRpc<RawFrame>(args.rpcUrl, "debug_traceTransaction", [args.transactionHash, tracer])
    : await jsonRpc<RawFrame>(args.rpcUrl, "debug_traceCall", [{ ...args.call, gas: args.call?.gas === undefined ? undefined : `0x${args.call.gas.toString(16)}` }, block, tracer]);
  const root = build(raw, namer(args.config, args.fixtures));
  const on = args.transactionHash || args.block === undefined ? null : Number(args.block);
  return { transactionHash: args.transactionHash ?? null, block: on, root, error: root.error, text: lines(root).join("\n") };
}

/**
 * An operation's trace, as stack.trace, the dev route, the CLI and a replay's original give it: its mined
 * transaction, or, never mined, the relayer's call of it on the block it failed at.
 */
export async function operationTrace(
  args: { rpcUrl: string; config: DeploymentConfig; fixtures: CompiledFixtures; relayer: Address; gas: bigint },
  op: Readonly<OperationRecord>,
): Promise<Trace> {
  const { rpcUrl, config, fixtures } = args;
  if (op.minedHash) return traceOf({ rpcUrl, config, fixtures, transactionHash: op.minedHash });
  const call = { from: args.relayer, to: config.poolAddress as Address, data: transactCalldata(op.request), gas: args.gas };
  return traceOf({ rpcUrl, config, fixtures, call, block: await failedAt(rpcUrl, op) });
}

/**
 * The block an operation never mined failed at: the head its refusal was judged on, when its history
 * says (a refusal a dev stack kept), else the last block mined by its last step, by the chain's clock
 * (which anvil keeps with the wall's unless time was moved, and runs ahead of it by a second a block
 * within one second).
 */
async function failedAt(rpcUrl: string, op: Readonly<OperationRecord>): Promise<bigint> {
  const head = BigInt(await jsonRpc<Hex>(rpcUrl, "eth_blockNumber", []));
  const judged = op.history.findLast((step) => step.block !== undefined)?.block;
  if (judged !== undefined) return BigInt(judged) < head ? BigInt(judged) : head;
  const target = Math.floor(Date.parse(op.history.at(-1)?.at ?? op.updatedAt) / 1000);
  let [low, high] = [0n, head];
  while (low < high) {
    const mid = (low + high + 1n) / 2n;
    const block = await jsonRpc<{ timestamp: Hex }>(rpcUrl, "eth_getBlockByNumber", [`0x${mid.toString(16)}`, false]);
    if (Number(block.timestamp) <= target) low = mid;
    else high = mid - 1n;
  }
  return low;
}
