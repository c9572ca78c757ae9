import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { BundleError, startDevStack } from "../harness/index.ts";
import { keccak256, type Hex } from "viem";
import { settleAttempts } from "../harness/bundle/index.ts";
import { transactCalldata } from "../src/chain/pool-call.ts";
import { parseStoreRows } from "../src/store/rows.ts";
import { parseManifest } from "../src/server.ts";
import { dev, operationRow, rowsOf, sendRequest, storeOf, type Rows } from "./support/bundle-rows.ts";
import { anvilsWith } from "./support/processes.ts";
import { withStacks } from "./support/stacks.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

// Issue 24: random mutations of a real bundle (with an operation in flight and its signed attempt added),
// at the byte level and at the JSON level, give a stack or one BundleError, never a raw error or a hang;
// a refused bundle starts nothing and leaves nothing.
const tempDir = withTempDirs();
const startStack = withStacks();
type Envelope = Record<string, unknown> & { chain: string; store: string; manifest: string };
let dir: string;
let file: Buffer;
let good: Envelope;

beforeAll(async () => {
  dir = await tempDir("devstack-property-");
  const stack = await startStack();
  try {
    await stack.save(path.join(dir, "good.qdbundle"));
  } finally {
    await stack.stop();
  }
  const saved = JSON.parse(gunzipSync(await readFile(path.join(dir, "good.qdbundle"))).toString("utf8")) as Envelope;
  good = { ...saved, store: storeOf(await withAttempt(saved)) };
  file = gzipSync(JSON.stringify(good));
});

/**
 * The saved store with an operation in flight and the attempt the relayer signs for it, as the engine
 * signs one (its key, the Pool, the operation's calldata, the relayer's next nonce in the bundle's chain,
 * the engine's gas limit), accepted as it is by the load's checks: so the mutations reach a stored
 * attempt's decoding and checks. Signed here rather than relayed: a real relay needs a proof, which
 * would double the file's time.
 */
async function withAttempt(bundle: Envelope): Promise<Rows> {
  const rows = rowsOf(bundle);
  const chain = JSON.parse(gunzipSync(Buffer.from(bundle.chain, "base64")).toString("utf8")) as { accounts: Record<string, { nonce: number }> };
  const nonce = Object.entries(chain.accounts).find(([address]) => address.toLowerCase() === dev(1).address.toLowerCase())?.[1].nonce ?? 0;
  const at = new Date(Date.now() - 60_000).toISOString();
  const request = sendRequest(bundle.manifest, "1");
  const { operation, nullifiers } = operationRow("op_inflight", "submitted", at, request);
  const fees = { maxFeePerGas: 2_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
  const raw = await dev(1).signTransaction({ type: "eip1559", chainId: 11155111, nonce, to: (JSON.parse(bundle.manifest) as { poolAddress: Hex }).poolAddress, data: transactCalldata(request as never), value: 0n, gas: 3_000_000n, ...fees });
  rows.operations = [...(rows.operations ?? []), operation];
  rows.operation_nullifiers = [...(rows.operation_nullifiers ?? []), ...nullifiers];
  rows.attempts = [...(rows.attempts ?? []), { hash: keccak256(raw), operation_id: "op_inflight", nonce, raw, max_fee_per_gas: String(fees.maxFeePerGas), max_priority_fee_per_gas: String(fees.maxPriorityFeePerGas), created_at: at }];
  // Unmutated, it loads with its attempt: a mutation's refusal is the mutation's.
  expect((await settleAttempts(parseStoreRows(rows), parseManifest(Buffer.from(bundle.manifest)), nonce)).failed).toEqual([]);
  return rows;
}

let runs = 0;
async function loadsOrRefuses(bytes: Buffer): Promise<void> {
  const bundle = path.join(dir, `mutated-${++runs}.qdbundle`);
  await writeFile(bundle, bytes);
  const stateDir = await tempDir("devstack-property-state-");
  await writeFile(path.join(stateDir, "notes.txt"), "mine");
  const steps: string[] = [];
  const error = await startDevStack({ load: bundle, stateDir, chainPort: 0, queuePort: 0, onProgress: ({ step }) => steps.push(step) }).then(
    async (stack) => (await stack.stop(), null),
    (e: unknown) => e,
  );
  if (error === null) return; // loaded: a mutation the checks accept makes a stack
  expect(error, String(error)).toBeInstanceOf(BundleError);
  expect((error as Error).message).not.toContain("\n");
  // Refused from what it holds, before anything started; or, a chain and manifest that are each well
  // formed but not one stack, once its chain was tried: then stopped again, nothing left running.
  if (!/its chain and manifest do not make a stack/.test((error as Error).message)) expect(steps).toEqual(["check state dir"]);
  expect(await anvilsWith(stateDir)).toEqual([]);
  expect(await readdir(stateDir)).toEqual(["notes.txt"]);
}

const mutate = (bytes: Buffer, edits: Array<{ at: number; byte: number }>) => {
  const out = Buffer.from(bytes);
  for (const { at, byte } of edits) out[at % out.length] = byte;
  return out;
};
const gz = (bytes: Buffer | string) => gzipSync(bytes).toString("base64");
const edits = fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 6 });
const scalar = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant({}), fc.constant([]), fc.bigInt().map(String));

/** Every leaf's path in a JSON value. */
function leaves(value: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== "object") return [at];
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
  return entries.length === 0 ? [at] : entries.flatMap(([k, v]) => leaves(v, [...at, k]));
}
function setAt(value: unknown, at: Array<string | number>, to: unknown): unknown {
  if (at.length === 0) return to;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  copy[at[0] as string] = setAt(copy[at[0] as string], at.slice(1), to);
  return copy;
}

describe("a mutated bundle gives a stack or one BundleError (issue 24)", () => {
  it("byte-level mutations of the file, its JSON and its store", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("file", "envelope", "store"), edits, async (target, change) => {
        const bytes =
          target === "file" ? mutate(file, change)
          : target === "envelope" ? gzipSync(mutate(Buffer.from(JSON.stringify(good)), change))
          : gzipSync(JSON.stringify({ ...good, store: gz(mutate(gunzipSync(Buffer.from(good.store, "base64")), change)) }));
        await loadsOrRefuses(bytes);
      }),
      { numRuns: 40 },
    );
  });

  it("JSON-level mutations: a value of the bundle's JSON replaced", async () => {
    const paths = leaves(good);
    await fc.assert(
      fc.asyncProperty(fc.nat(), scalar, async (which, to) => {
        await loadsOrRefuses(gzipSync(JSON.stringify(setAt(good, paths[which % paths.length] as Array<string | number>, to))));
      }),
      { numRuns: 40 },
    );
  });

  it("store mutations: a value of its rows replaced (a live, a confirmed and a failed operation, their nullifiers, and an in-flight one's attempt)", async () => {
    const rows = rowsOf(good);
    const at = new Date(Date.now() - 60_000).toISOString();
    for (const [id, state] of [["op_live", "accepted"], ["op_done", "confirmed"], ["op_failed", "rejected"]] as const) {
      const { operation, nullifiers } = operationRow(id, state, at, sendRequest(good.manifest, "1"));
      rows.operations = [...(rows.operations ?? []), operation];
      rows.operation_nullifiers = [...(rows.operation_nullifiers ?? []), ...nullifiers];
    }
    const paths = leaves(rows);
    await fc.assert(
      fc.asyncProperty(fc.nat(), scalar, async (which, to) => {
        await loadsOrRefuses(gzipSync(JSON.stringify({ ...good, store: storeOf(setAt(rows, paths[which % paths.length] as Array<string | number>, to) as Rows) })));
      }),
      { numRuns: 20 },
    );
  });

  it("chain and manifest mutations: a value of the chain dump or of the manifest replaced", async () => {
    const chain = JSON.parse(gunzipSync(Buffer.from(good.chain, "base64")).toString("utf8")) as unknown;
    const manifest = JSON.parse(good.manifest) as unknown;
    const parts = { chain: { value: chain, paths: leaves(chain) }, manifest: { value: manifest, paths: leaves(manifest) } };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("chain" as const, "manifest" as const), fc.nat(), scalar, async (target, which, to) => {
        const { value, paths } = parts[target];
        const mutated = setAt(value, paths[which % paths.length] as Array<string | number>, to);
        const change = target === "chain" ? { chain: gz(JSON.stringify(mutated)) } : { manifest: `${JSON.stringify(mutated, null, 2)}\n` };
        await loadsOrRefuses(gzipSync(JSON.stringify({ ...good, ...change })));
      }),
      { numRuns: 24 },
    );
  });
});
