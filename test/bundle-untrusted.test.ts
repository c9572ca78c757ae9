import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { gunzipSync, gzipSync } from "node:zlib";
import { DatabaseSync } from "node:sqlite";
import { keccak256, parseEther, type Hex } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { execa } from "execa";
import { beforeAll, describe, expect, it } from "vitest";
import { BundleError, startDevStack } from "../harness/index.ts";
import { withStacks } from "./support/stacks.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

// Issue 24: a bundle is an untrusted file. Crafted ones, made from a real bundle, are refused in one
// BundleError line naming the part, before anything starts, the state dir left as it was found.
const tempDir = withTempDirs();
const startStack = withStacks();
const CLI = ["--experimental-strip-types", "--no-warnings", "scripts/dev-stack.ts"];
type Envelope = Record<string, unknown> & { chain: string; store: string; manifest: string };
let dir: string;
let good: Envelope;

beforeAll(async () => {
  dir = await tempDir("devstack-untrusted-");
  const stack = await startStack();
  const file = path.join(dir, "good.qdbundle");
  try {
    await stack.save(file);
  } finally {
    await stack.stop();
  }
  good = JSON.parse(gunzipSync(await readFile(file)).toString("utf8")) as Envelope;
});

let crafted = 0;
async function craft(change: Partial<Envelope>): Promise<string> {
  const file = path.join(dir, `crafted-${++crafted}.qdbundle`);
  await writeFile(file, gzipSync(JSON.stringify({ ...good, ...change })));
  return file;
}

/** A gzip that expands to `mib` MiB of zeros, kept small: members of 64 MiB each, concatenated (gzip allows it). */
function zerosGzip(mib: number): Buffer {
  const member = gzipSync(Buffer.alloc(64 * 1024 * 1024));
  return Buffer.concat(Array.from({ length: Math.ceil(mib / 64) }, () => member));
}

/** A state dir holding one file of its own, and a check that a refused load left it just so. */
async function stateDirWithNotes(): Promise<{ stateDir: string; asFound: () => Promise<void> }> {
  const stateDir = await tempDir("devstack-untrusted-state-");
  await writeFile(path.join(stateDir, "notes.txt"), "mine");
  return {
    stateDir,
    asFound: async () => {
      expect(await readdir(stateDir)).toEqual(["notes.txt"]);
      expect(await readFile(path.join(stateDir, "notes.txt"), "utf8")).toBe("mine");
    },
  };
}

/** Loads a bundle with startDevStack: what it threw (null if it started: then stopped), and the steps it took. */
async function loadRefused(file: string, stateDir: string): Promise<{ error: unknown; steps: string[] }> {
  const steps: string[] = [];
  const error = await startDevStack({ load: file, stateDir, chainPort: 0, queuePort: 0, onProgress: ({ step }) => steps.push(step) }).then(
    async (stack) => (await stack.stop(), null),
    (e: unknown) => e,
  );
  return { error, steps };
}

/** Loads a bundle in a node process of its own: what it threw, and the process's peak RSS. */
async function loadInChild(file: string, stateDir: string): Promise<{ name: string; message: string; maxRssMiB: number }> {
  const script = path.join(dir, "load-child.mjs");
  await writeFile(
    script,
    `import { startDevStack } from ${JSON.stringify(pathToFileURL(path.resolve("harness/index.ts")).href)};
let error = { name: "none", message: "started" };
try { await (await startDevStack({ load: process.argv[2], stateDir: process.argv[3], chainPort: 0, queuePort: 0 })).stop(); }
catch (e) { error = e; }
console.log(JSON.stringify({ name: error.name, message: error.message, maxRssMiB: process.resourceUsage().maxRSS / 1024 }));
`,
  );
  const child = await execa(process.execPath, ["--experimental-strip-types", "--no-warnings", script, file, stateDir], { reject: false });
  expect(child.exitCode, child.stderr).toBe(0);
  return JSON.parse(child.stdout.trim().split("\n").at(-1) as string);
}

describe("decompression limits (issue 24, item 1)", () => {
  it("a small bundle whose chain part expands to several GiB is refused at the chain's cap, in bounded memory", async () => {
    const bomb = zerosGzip(3 * 1024);
    const file = await craft({ chain: bomb.toString("base64") });
    expect((await readFile(file)).length).toBeLessThan(8 * 1024 * 1024);
    const { stateDir, asFound } = await stateDirWithNotes();
    const loaded = await loadInChild(file, stateDir);
    expect(loaded.name).toBe("BundleError");
    expect(loaded.message).toMatch(/its chain part is refused: it expands to more than 128 MiB/);
    console.log(`chain bomb (3 GiB): refused, peak RSS ${loaded.maxRssMiB.toFixed(0)} MiB`);
    expect(loaded.maxRssMiB).toBeLessThan(512);
    await asFound();
  });

  it("a 2 MB gzip of zeros given as the whole file is refused, in bounded memory", async () => {
    const file = path.join(dir, "zeros.qdbundle");
    await writeFile(file, zerosGzip(2 * 1024));
    const { stateDir, asFound } = await stateDirWithNotes();
    const loaded = await loadInChild(file, stateDir);
    expect(loaded.name).toBe("BundleError");
    expect(loaded.message).toMatch(/not a readable bundle .*expands to more than 128 MiB/);
    console.log(`whole-file bomb (2 GiB): refused, peak RSS ${loaded.maxRssMiB.toFixed(0)} MiB`);
    expect(loaded.maxRssMiB).toBeLessThan(512);
    await asFound();
  });
});

describe("parts are checked before they are written (issue 24, item 5)", () => {
  // anvil's parser would refuse it only once anvil was started (a ChainStartError): found by the property test.
  const withBadCode = () => {
    const chain = JSON.parse(gunzipSync(Buffer.from(good.chain, "base64")).toString("utf8")) as { accounts: Record<string, { code: string }> };
    const [first] = Object.values(chain.accounts);
    (first as { code: string }).code = " x3373";
    return chain;
  };
  const damaged: Array<[string, () => Partial<Envelope>, RegExp]> = [
    ["store not gzip", () => ({ store: Buffer.from("not gzip at all").toString("base64") }), /its store part is refused: it is not gzip/],
    ["chain gzip of non-JSON", () => ({ chain: gzipSync("{ not json").toString("base64") }), /its chain part is refused: it is not JSON/],
    ["chain JSON that is not anvil's dump (an account's code not hex)", () => ({ chain: gzipSync(JSON.stringify(withBadCode())).toString("base64") }), /its chain part is refused: it is not anvil's state dump \(accounts\.0x[0-9a-f]{40}\.code/],
    ["manifest not JSON", () => ({ manifest: "{ not json" }), /its manifest part is refused: manifest is not JSON/],
    ["store not a database", () => ({ store: gzipSync(Buffer.alloc(8192, 7)).toString("base64") }), /its store part is refused: .*(not a database|not an intact)/],
  ];

  it.each(damaged)("%s: startDevStack({ load }) refuses it with a BundleError, nothing started, the state dir as found", async (_name, change, why) => {
    const file = await craft(change());
    const { stateDir, asFound } = await stateDirWithNotes();
    const { error, steps } = await loadRefused(file, stateDir);
    expect(error).toBeInstanceOf(BundleError);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(why);
    // Only the state dir was looked at: no chain was started or resumed.
    expect(steps).toEqual(["check state dir"]);
    await asFound();
  });

  it.each(damaged)("%s: the CLI refuses it in one line, exit 1, no anvil started, the state dir as found", async (_name, change, why) => {
    const file = await craft(change());
    const { stateDir, asFound } = await stateDirWithNotes();
    const cli = await execa(process.execPath, [...CLI, "--load", file, "--state-dir", stateDir, "--chain-port", "0", "--queue-port", "0"], { reject: false });
    expect(cli.exitCode).toBe(1);
    const lines = cli.stderr.trim().split("\n");
    expect(lines, cli.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^queue-devstack: BundleError: /);
    expect(lines[0]).toMatch(why);
    expect(cli.stdout).not.toMatch(/load genesis|resume saved chain|start queue runtime/);
    await asFound();
  });
});

describe("escape sequences never reach the terminal (issue 24, item 6)", () => {
  const ESC = "\u001b";
  const attack = `${ESC}[2J${ESC}]0;pwned\u0007${ESC}]52;c;cHduZWQ=\u0007${ESC}[32mready`;

  it("a bundle's version with escape sequences is printed escaped", async () => {
    const file = await craft({ version: attack as never });
    const { stateDir, asFound } = await stateDirWithNotes();
    const cli = await execa(process.execPath, [...CLI, "--load", file, "--state-dir", stateDir, "--chain-port", "0", "--queue-port", "0"], { reject: false });
    expect(cli.exitCode).toBe(1);
    expect(cli.stderr).toMatch(/format version "\\u001b\[2J/);
    expect(cli.stdout + cli.stderr).not.toContain(ESC);
    expect(cli.stdout + cli.stderr).not.toContain("\u0007");
    await asFound();
  });

  it("asset symbols and names with escape sequences are refused by the manifest's schema, and printed escaped", async () => {
    const manifest = JSON.parse(good.manifest) as { assets: Array<{ symbol: string; name: string }> };
    for (const asset of manifest.assets) [asset.symbol, asset.name] = [attack, attack];
    const file = await craft({ manifest: JSON.stringify(manifest, null, 2) });
    const { stateDir, asFound } = await stateDirWithNotes();
    const cli = await execa(process.execPath, [...CLI, "--load", file, "--state-dir", stateDir, "--chain-port", "0", "--queue-port", "0"], { reject: false });
    // Refused before the ready summary could print them.
    expect(cli.exitCode).toBe(1);
    expect(cli.stderr).toMatch(/its manifest part is refused: .*assets\.0\.(symbol|name)/);
    expect(cli.stdout + cli.stderr).not.toContain(ESC);
    expect(cli.stdout + cli.stderr).not.toContain("\u0007");
    await asFound();
  });
});

describe("resumed operations are checked before anything is re-broadcast (issue 24, item 3)", () => {
  const dev = (index: number) => mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: index });

  /** The good bundle's store with one more operation (and, given, its attempt): rows as a crafted file would hold them. */
  async function withOperation(op: { createdAt: string; raw?: Hex }): Promise<Partial<Envelope>> {
    const file = path.join(await tempDir("devstack-untrusted-store-"), "queue.sqlite");
    await writeFile(file, gunzipSync(Buffer.from(good.store, "base64")));
    const db = new DatabaseSync(file);
    try {
      const history = JSON.stringify([{ state: "submitted", at: op.createdAt }]);
      db.prepare("INSERT INTO operations (id, kind, state, request_hash, request, nullifiers, history, created_at, updated_at) VALUES ('forged', 'send', 'submitted', 'x', '{}', '[]', ?, ?, ?)").run(history, op.createdAt, op.createdAt);
      if (op.raw) db.prepare("INSERT INTO attempts (hash, operation_id, nonce, raw, max_fee_per_gas, max_priority_fee_per_gas, created_at) VALUES (?, 'forged', 0, ?, '1', '1', ?)").run(keccak256(op.raw), op.raw, op.createdAt);
    } finally {
      db.close();
    }
    return { store: gzipSync(await readFile(file)).toString("base64") };
  }
  const transfer = (from: number) =>
    dev(from).signTransaction({ type: "eip1559", chainId: 11155111, nonce: 0, to: "0x000000000000000000000000000000000000dEaD", value: parseEther("1234"), gas: 21000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n });

  const forged: Array<[string, () => Promise<Partial<Envelope>>, RegExp]> = [
    ["an attempt signed by dev account #0", async () => withOperation({ createdAt: new Date().toISOString(), raw: await transfer(0) }), /attempt 0x[0-9a-f]{64} is not signed by the relayer/],
    ["the relayer's transfer of 1,234 ETH to 0x…dEaD", async () => withOperation({ createdAt: new Date().toISOString(), raw: await transfer(1) }), /attempt 0x[0-9a-f]{64} is not sent to the Pool/],
    ["an operation dated 2099", async () => withOperation({ createdAt: "2099-01-01T00:00:00.000Z" }), /operation forged is dated in the future/],
  ];
  it.each(forged)("%s: the load is refused, naming it; nothing started, the state dir as found", async (_name, change, why) => {
    const file = await craft(await change());
    const { stateDir, asFound } = await stateDirWithNotes();
    const { error, steps } = await loadRefused(file, stateDir);
    expect(error).toBeInstanceOf(BundleError);
    expect((error as Error).message).toMatch(/its store part is refused: /);
    expect((error as Error).message).toMatch(why);
    expect(steps).toEqual(["check state dir"]);
    await asFound();
  });
});
