import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { gunzipSync, gzipSync } from "node:zlib";
import { DatabaseSync } from "node:sqlite";
import { encodeFunctionData, keccak256, parseEther, parseTransaction, type Hex } from "viem";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it, type ExpectStatic } from "vitest";
import { BundleError, startDevStack } from "../harness/index.ts";
import { closeProvers, createQueueClient, fetchProofFiles, ForeignOriginError, poolAbi, reviewedFrom } from "../harness/client/index.ts";
import { anvilsWith } from "./support/processes.ts";
import { poolFixture, provenSend } from "./support/pool.ts";
import { interruptPreload } from "./support/interrupt-at.ts";
import { rpc } from "./support/rpc.ts";
import { transactCalldata } from "../src/chain/pool-call.ts";
import { parseStoreRows, STORE_COLUMNS, STORE_TABLES } from "../src/store/rows.ts";
import { parseManifest } from "../src/server.ts";
import { settleAttempts } from "../harness/bundle/index.ts";
import { dev, operationRow, rowsOf, sendRequest as craftedRequest, storeOf } from "./support/bundle-rows.ts";
import { resumeRelayer, withStacks } from "./support/stacks.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { builtCli } from "./support/cli.ts";

// Issue 24: a bundle is an untrusted file. Crafted ones, made from a real bundle, are refused in one
// BundleError line naming the part, before anything starts, the state dir left as it was found.
const tempDir = withTempDirs();
const startStack = withStacks();
afterAll(closeProvers);
const CLI = builtCli();
type Envelope = Record<string, unknown> & { chain: string; store: string; manifest: string };
let dir: string;
let good: Envelope;
/** The Pool's last root when the good bundle was saved. */
let goodRoot: string;

beforeAll(async () => {
  dir = await tempDir("devstack-untrusted-");
  const stack = await startStack();
  const file = path.join(dir, "good.qdbundle");
  try {
    goodRoot = String(await rpc<string>(stack.rpcUrl, "eth_call", [{ to: stack.manifest.poolAddress, data: encodeFunctionData({ abi: poolAbi, functionName: "getLastRoot" }) }, "latest"]).then(BigInt));
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
  // The member compressed once for the file's three bombs (each gzipSync of 64 MiB is CPU time).
  zerosMember ??= gzipSync(Buffer.alloc(64 * 1024 * 1024));
  const member = zerosMember;
  return Buffer.concat(Array.from({ length: Math.ceil(mib / 64) }, () => member));
}
let zerosMember: Buffer | undefined;

/**
 * A state dir holding one file of its own, and a check that a refused load left it just so: with the
 * test's own expect (a concurrent test's context gives it one).
 */
async function stateDirWithNotes(expect: ExpectStatic): Promise<{ stateDir: string; asFound: () => Promise<void> }> {
  const stateDir = await tempDir("devstack-untrusted-state-");
  await writeFile(path.join(stateDir, "notes.txt"), "mine");
  return {
    stateDir,
    asFound: async () => {
      expect(await readdir(stateDir)).toEqual(["notes.txt"]);
      expect(await readFile(path.join(stateDir, "notes.txt"), "utf8")).toBe("mine");
      // No anvil outlived the load (every anvil of ours carries a path of its state dir in its command line).
      expect(await anvilsWith(stateDir)).toEqual([]);
    },
  };
}

/** Loads a bundle with startDevStack: what it threw (null if it started: then stopped), and the steps it took. */
async function loadRefused(file: string, stateDir: string, options: { store?: string } = {}): Promise<{ error: unknown; steps: string[] }> {
  const steps: string[] = [];
  const error = await startDevStack({ ...options, load: file, stateDir, chainPort: 0, queuePort: 0, onProgress: ({ step }) => steps.push(step) }).then(
    async (stack) => (await stack.stop(), null),
    (e: unknown) => e,
  );
  return { error, steps };
}

/**
 * The preload that writes a CLI's peak RSS at exit: written once (the launches run side by side, and one
 * rewriting it could hand another a half-written file).
 */
const maxRssPreload = (() => {
  let written: Promise<string> | undefined;
  return () =>
    (written ??= (async () => {
      const preload = path.join(dir, "max-rss.mjs");
      await writeFile(preload, `import { writeFileSync } from "node:fs";\nprocess.on("exit", () => writeFileSync(process.env.MAX_RSS_OUT, String(process.resourceUsage().maxRSS)));\n`);
      return preload;
    })());
})();

/**
 * Loads a bundle through the real CLI (`dev-stack --load`): its exit code, its stderr's lines, and the
 * process's peak RSS, written at exit by a preloaded module (stderr stays the CLI's own).
 */
async function loadThroughCli(file: string, stateDir: string): Promise<{ exitCode: number | undefined; lines: string[]; maxRssMiB: number }> {
  const preload = await maxRssPreload();
  const out = path.join(dir, `${path.basename(stateDir)}.rss`);
  const cli = await execa(process.execPath, ["--import", pathToFileURL(preload).href, ...CLI, "--load", file, "--state-dir", stateDir, "--chain-port", "0", "--queue-port", "0"], {
    reject: false,
    env: { MAX_RSS_OUT: out },
    // Under the test's own timeout: a CLI that hangs is ended (then killed), never left behind.
    timeout: 45_000,
  });
  const maxRssMiB = Number(await readFile(out, "utf8")) / 1024;
  await rm(out, { force: true });
  return { exitCode: cli.exitCode, lines: cli.stderr.trim().split("\n"), maxRssMiB };
}

// The CLI launches, and the loads refused in process, run side by side (issue 42, item 7): each test has a
// state dir of its own and free ports, and takes its expect from its context.
describe.concurrent("decompression limits (issue 24, item 1)", () => {
  it("a small bundle whose chain part expands to several GiB is refused at the chain's cap, in bounded memory", async ({ expect }) => {
    const bomb = zerosGzip(3 * 1024);
    const file = await craft({ chain: bomb.toString("base64") });
    expect((await readFile(file)).length).toBeLessThan(8 * 1024 * 1024);
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    const loaded = await loadThroughCli(file, stateDir);
    expect(loaded.exitCode).toBe(1);
    expect(loaded.lines).toHaveLength(1);
    expect(loaded.lines[0]).toMatch(/^queue-devstack: BundleError: .*its chain part is refused: it expands to more than 48 MiB$/);
    console.log(`chain bomb (3 GiB): refused, peak RSS ${loaded.maxRssMiB.toFixed(0)} MiB`);
    expect(loaded.maxRssMiB).toBeLessThan(512);
    await asFound();
  });

  it("a 2 MB gzip of zeros given as the whole file is refused, in bounded memory", async ({ expect }) => {
    const file = path.join(dir, "zeros.qdbundle");
    await writeFile(file, zerosGzip(2 * 1024));
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    const loaded = await loadThroughCli(file, stateDir);
    expect(loaded.exitCode).toBe(1);
    expect(loaded.lines).toHaveLength(1);
    expect(loaded.lines[0]).toMatch(/^queue-devstack: BundleError: .*not a readable bundle .*expands to more than 48 MiB$/);
    console.log(`whole-file bomb (2 GiB): refused, peak RSS ${loaded.maxRssMiB.toFixed(0)} MiB`);
    expect(loaded.maxRssMiB).toBeLessThan(512);
    await asFound();
  });

  it("Ctrl-C while a bomb unpacks: the CLI ends at once, exit 0, nothing started, the state dir as found", async ({ expect }) => {
    const file = await craft({ chain: zerosGzip(3 * 1024).toString("base64") });
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    // The CLI signals itself as the chain part's gunzip (the file's is the first) gives its first bytes
    // out: its refusal needs 48 MiB more of them, thousands of event loop turns; the signal needs one.
    const ended = await execa(process.execPath, ["--import", await interruptPreload(dir), ...CLI, "--load", file, "--state-dir", stateDir, "--chain-port", "0", "--queue-port", "0"], {
      reject: false,
      env: { INTERRUPT_AT_GUNZIP: "2", INTERRUPT_SIGNAL: "SIGINT" },
      timeout: 45_000,
    });
    expect(ended.exitCode, ended.stderr).toBe(0);
    expect(ended.stderr).toBe("");
    expect(ended.stdout).toMatch(/^ {2}check state dir .*\n\nSIGINT: stopping the stack\.\.\.\nstopped\.$/);
    await asFound();
  });

  // Under every byte cap, yet JSON.parse of it alone would take node past a GiB (about 100 bytes of heap
  // per `{},`): refused by its count of values, before it is parsed.
  const emptyObjects = (mib: number) => gzipSync(`[${"{},".repeat((mib * 1024 * 1024) / 3)}{}]`);
  const valueBombs: Array<[string, () => Promise<string>, RegExp]> = [
    ["the chain part", async () => craft({ chain: emptyObjects(45).toString("base64") }), /its chain part is refused: it holds more than 500,000 JSON values$/],
    ["the store part", async () => craft({ store: emptyObjects(30).toString("base64") }), /its store part is refused: it holds more than 500,000 JSON values$/],
    [
      "the file's own JSON",
      async () => {
        const file = path.join(dir, `crafted-${++crafted}.qdbundle`);
        await writeFile(file, gzipSync(`{"format":"queue-devstack-bundle","version":2,"pad":[${"{},".repeat((45 * 1024 * 1024) / 3)}{}]}`));
        return file;
      },
      /not a readable bundle .*it holds more than 1,000 JSON values$/,
    ],
    [
      // 100,000 small rows in each table: a 31 MiB file (under the store's cap) that took node past 580 MB once read.
      "a version 1 store's rows",
      async () => {
        const file = path.join(await tempDir("devstack-untrusted-v1-"), "queue.sqlite");
        const db = new DatabaseSync(file);
        try {
          for (const table of STORE_TABLES) {
            const columns = STORE_COLUMNS[table];
            db.exec(`CREATE TABLE "${table}" (${columns.map((c) => `"${c}"`).join(", ")})`);
            db.exec(`INSERT INTO "${table}" WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) SELECT ${columns.map((_, j) => `'v' || i || '_${j}'`).join(", ")} FROM n`);
          }
        } finally {
          db.close();
        }
        return craft({ version: 1 as never, store: gzipSync(await readFile(file)).toString("base64") });
      },
      /its store part is refused: it holds more than 500,000 values$/,
    ],
  ];
  it.for(valueBombs)("%s: millions of tiny values under its byte cap are refused before they are parsed or read, in bounded memory", async ([_name, make, why], { expect }) => {
    const file = await make();
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    const loaded = await loadThroughCli(file, stateDir);
    console.log(`${_name}, millions of values: refused, peak RSS ${loaded.maxRssMiB.toFixed(0)} MiB`);
    expect(loaded.maxRssMiB).toBeLessThan(512);
    expect(loaded.exitCode).toBe(1);
    expect(loaded.lines).toHaveLength(1);
    expect(loaded.lines[0]).toMatch(/^queue-devstack: BundleError: /);
    expect(loaded.lines[0]).toMatch(why);
    await asFound();
  });
});

describe.concurrent("parts are checked before they are written (issue 24, item 5)", () => {
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
    ["store not JSON", () => ({ store: gzipSync(Buffer.alloc(8192, 7)).toString("base64") }), /its store part is refused: it is not JSON/],
    ["patches not JSON", () => ({ patches: "{ not json" }), /its patches part is refused: it is not JSON/],
    ["patches that are not a stack's patch records", () => ({ patches: JSON.stringify([{ name: "Pool" }]) }), /its patches part is refused: it is not the patch records a stack writes \(0\.address/],
    ["version 1 store not a database", () => ({ version: 1 as never, store: gzipSync(Buffer.alloc(8192, 7)).toString("base64") }), /its store part is refused: .*(not a database|not an intact)/],
  ];

  it.for(damaged)("%s: startDevStack({ load }) refuses it with a BundleError, nothing started, the state dir as found", async ([_name, change, why], { expect }) => {
    const file = await craft(change());
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    const { error, steps } = await loadRefused(file, stateDir);
    expect(error).toBeInstanceOf(BundleError);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(why);
    // Only the state dir was looked at: no chain was started or resumed.
    expect(steps).toEqual(["check state dir"]);
    await asFound();
  });

  it.for(damaged)("%s: the CLI refuses it in one line, exit 1, no anvil started, the state dir as found", async ([_name, change, why], { expect }) => {
    const file = await craft(change());
    const { stateDir, asFound } = await stateDirWithNotes(expect);
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

describe.concurrent("a damaged file or JSON is refused by the CLI like a damaged part (issue 24, item 5)", () => {
  const damagedFile: Array<[string, () => Promise<Buffer>, RegExp]> = [
    ["the file truncated", async () => (await readFile(await craft({}))).subarray(0, 4096), /not a readable bundle \(damaged or truncated\): unexpected end of file$/],
    ["the file not gzip", async () => Buffer.from("{\"format\":\"queue-devstack-bundle\"}"), /not a readable bundle \(damaged or truncated\): incorrect header check$/],
    ["its JSON without a chain", async () => gzipSync(JSON.stringify({ ...good, chain: undefined })), /not a readable bundle \(damaged or truncated\): it is not a bundle's JSON \(chain: Invalid input: expected string, received undefined\)$/],
  ];
  it("a FIFO given as the bundle (read for ever, its size 0) is refused at once: one line, the state dir as found", async ({ expect }) => {
    const fifo = path.join(dir, "bundle.fifo");
    await execa("mkfifo", [fifo]);
    try {
      const { stateDir, asFound } = await stateDirWithNotes(expect);
      const loaded = await loadThroughCli(fifo, stateDir);
      expect(loaded.exitCode).toBe(1);
      expect(loaded.lines).toEqual([`queue-devstack: BundleError: ${fifo} is not a regular file: a bundle is one`]);
      await asFound();
    } finally {
      await rm(fifo, { force: true });
    }
  });

  it.for(damagedFile)("%s: one line, exit 1, no anvil started, the state dir as found", async ([_name, bytes, why], { expect }) => {
    const file = path.join(dir, `damaged-${++crafted}.qdbundle`);
    await writeFile(file, await bytes());
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    const loaded = await loadThroughCli(file, stateDir);
    expect(loaded.exitCode).toBe(1);
    expect(loaded.lines).toHaveLength(1);
    expect(loaded.lines[0]).toMatch(/^queue-devstack: BundleError: /);
    expect(loaded.lines[0]).toMatch(why);
    await asFound();
  });
});

describe.concurrent("escape sequences never reach the terminal (issue 24, item 6)", () => {
  const ESC = "\u001b";
  const attack = `${ESC}[2J${ESC}]0;pwned\u0007${ESC}]52;c;cHduZWQ=\u0007${ESC}[32mready`;

  it("a bundle's version with escape sequences is printed escaped", async ({ expect }) => {
    const file = await craft({ version: attack as never });
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    const cli = await execa(process.execPath, [...CLI, "--load", file, "--state-dir", stateDir, "--chain-port", "0", "--queue-port", "0"], { reject: false });
    expect(cli.exitCode).toBe(1);
    expect(cli.stderr).toMatch(/format version "\\u001b\[2J/);
    expect(cli.stdout + cli.stderr).not.toContain(ESC);
    expect(cli.stdout + cli.stderr).not.toContain("\u0007");
    await asFound();
  });

  it("asset symbols and names with escape sequences are refused by the manifest's schema, and printed escaped", async ({ expect }) => {
    const manifest = JSON.parse(good.manifest) as { assets: Array<{ symbol: string; name: string }> };
    for (const asset of manifest.assets) [asset.symbol, asset.name] = [attack, attack];
    const file = await craft({ manifest: JSON.stringify(manifest, null, 2) });
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    const cli = await execa(process.execPath, [...CLI, "--load", file, "--state-dir", stateDir, "--chain-port", "0", "--queue-port", "0"], { reject: false });
    // Refused before the ready summary could print them.
    expect(cli.exitCode).toBe(1);
    expect(cli.stderr).toMatch(/its manifest part is refused: .*assets\.0\.(symbol|name)/);
    expect(cli.stdout + cli.stderr).not.toContain(ESC);
    expect(cli.stdout + cli.stderr).not.toContain("\u0007");
    await asFound();
  });
});

describe.concurrent("escape sequences in the bundle's chain never reach the terminal (issue 24, item 6)", () => {
  it("a token whose symbol in the bundle's chain holds escape sequences: refused in one BundleError line, printing none of them, the state dir as found", async ({ expect }) => {
    // ERC20's symbol is slot 4; a short string sits left-aligned with its length × 2 in the last byte.
    const symbol = Buffer.from("\u001b[2J\u001b]0;pwned\u0007\u001b[32mok", "latin1");
    const slot = `0x${Buffer.concat([symbol, Buffer.alloc(31 - symbol.length), Buffer.from([symbol.length * 2])]).toString("hex")}`;
    const chain = JSON.parse(gunzipSync(Buffer.from(good.chain, "base64")).toString("utf8")) as { accounts: Record<string, { storage: Record<string, string> }> };
    const asset = (JSON.parse(good.manifest) as { assets: Array<{ address: string }> }).assets[0]?.address.toLowerCase();
    const account = Object.entries(chain.accounts).find(([address]) => address.toLowerCase() === asset)?.[1];
    const symbolSlot = `0x${"4".padStart(64, "0")}`;
    expect(Buffer.from((account?.storage[symbolSlot] ?? "0x").slice(2), "hex").toString("latin1")).toMatch(/^dUSDC\0/);
    (account as { storage: Record<string, string> }).storage[symbolSlot] = slot;
    const file = await craft({ chain: gzipSync(JSON.stringify(chain)).toString("base64") });
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    const cli = await execa(process.execPath, [...CLI, "--load", file, "--state-dir", stateDir, "--chain-port", "0", "--queue-port", "0"], { reject: false });
    expect(cli.exitCode, cli.stderr).toBe(1);
    expect(cli.stderr.trim().split("\n"), cli.stderr).toHaveLength(1);
    expect(cli.stderr).toMatch(/^queue-devstack: BundleError: .*: its chain and manifest do not make a stack: it describes assets\.0\.symbol: Invalid string/);
    for (const control of ["\u001b", "\u0007"]) expect(cli.stdout + cli.stderr).not.toContain(control);
    await asFound();
  });
});

/** A send's request for the good bundle's Pool. */
const sendRequest = (root: string) => craftedRequest(good.manifest, root);

describe("a load never replaces an operation store (issue 24)", () => {
  /** A store of our schema holding one operation: what a load must leave byte for byte. */
  async function storeWithOperation(file: string): Promise<Buffer> {
    const { SqliteOperationStore } = await import("../src/store/store.ts");
    new SqliteOperationStore(file).close();
    const db = new DatabaseSync(file);
    try {
      const { operation } = operationRow("op_mine", "confirmed", new Date(Date.now() - 60_000).toISOString(), sendRequest("1"));
      const columns = Object.keys(operation);
      db.prepare(`INSERT INTO operations (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`).run(...(Object.values(operation) as Array<string | null>));
    } finally {
      db.close();
    }
    return readFile(file);
  }

  it("a state dir holding queue.sqlite is refused like one holding a stack: one BundleError, nothing started, the state dir and its store as found", async () => {
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    const store = path.join(stateDir, "queue.sqlite");
    const bytes = await storeWithOperation(store);
    const { error, steps } = await loadRefused(await craft({}), stateDir);
    expect(error).toBeInstanceOf(BundleError);
    expect((error as Error).message).toBe(`${stateDir} already holds an operation store (queue.sqlite): load a bundle into an empty state dir`);
    expect(steps).toEqual(["check state dir"]);
    expect(await readFile(store)).toEqual(bytes);
    await rm(store);
    await asFound();
  });

  it("a store path (the store option) that holds a store is refused, and so is \":memory:\" (nowhere to load the operations into): the store and the state dir as found", async () => {
    const store = path.join(await tempDir("devstack-untrusted-store-"), "elsewhere.sqlite");
    const bytes = await storeWithOperation(store);
    for (const [given, why] of [[store, `${store} already holds an operation store: load a bundle with a store path where none is`], [":memory:", `a bundle's operations are loaded into a store file: load it without store ":memory:"`]] as const) {
      const { stateDir, asFound } = await stateDirWithNotes(expect);
      const { error, steps } = await loadRefused(await craft({}), stateDir, { store: given });
      expect(error).toBeInstanceOf(BundleError);
      expect((error as Error).message).toBe(why);
      expect(steps).toEqual(["check state dir"]);
      await asFound();
    }
    expect(await readFile(store)).toEqual(bytes);
    expect(await readdir(process.cwd())).not.toContain(":memory:");
  });
});

describe("the store is rows, checked and rebuilt in a fresh store (issue 24, item 2)", () => {
  it("a version 2 bundle with an invalid row is one BundleError naming the row; nothing started, the state dir as found", async () => {
    const rows = rowsOf(good);
    const { operation } = operationRow("op_bad_state", "accepted", new Date().toISOString(), sendRequest("1"));
    rows.operations = [...(rows.operations ?? []), { ...operation, state: "hijacked" }];
    const file = await craft({ store: storeOf(rows) });
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    const { error, steps } = await loadRefused(file, stateDir);
    expect(error).toBeInstanceOf(BundleError);
    expect((error as Error).message).toMatch(/its store part is refused: operations row \d+ \(op_bad_state\) is invalid: state: /);
    expect(steps).toEqual(["check state dir"]);
    await asFound();
  });

  /** A version 1 bundle: its store an SQLite file of our schema holding the good rows, then `change` applied to it. */
  async function v1Bundle(change: (db: DatabaseSync) => void): Promise<string> {
    const file = path.join(await tempDir("devstack-untrusted-v1-"), "queue.sqlite");
    const { SqliteOperationStore } = await import("../src/store/store.ts");
    new SqliteOperationStore(file).close();
    const db = new DatabaseSync(file);
    try {
      change(db);
    } finally {
      db.close();
    }
    return craft({ version: 1 as never, store: gzipSync(await readFile(file)).toString("base64") });
  }

  it("a version 1 bundle's trigger never runs, and a view in place of the quotes table never hangs the start: refused in one line", async () => {
    const withTrigger = await v1Bundle((db) => {
      db.exec("CREATE TABLE spy (state TEXT); CREATE TRIGGER watch AFTER UPDATE ON operations BEGIN INSERT INTO spy VALUES (new.state); END;");
    });
    const endlessView = await v1Bundle((db) => {
      db.exec("DROP TABLE quotes; CREATE VIEW quotes AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i AS id, '{}' AS quote, 0 AS expires_at, '' AS created_at FROM n;");
    });
    for (const [file, why] of [[withTrigger, /its store part is refused: it holds a trigger \(watch\)/], [endlessView, /its store part is refused: it holds a view \(quotes\)/]] as const) {
      const { stateDir, asFound } = await stateDirWithNotes(expect);
      const { error, steps } = await loadRefused(file, stateDir);
      expect(error).toBeInstanceOf(BundleError);
      expect((error as Error).message).toMatch(why);
      expect(steps).toEqual(["check state dir"]);
      await asFound();
    }
  });

  it("a version 1 bundle's store is read as rows into a fresh store of our schema: a table, column or default of its own is not kept", async () => {
    const { SqliteOperationStore } = await import("../src/store/store.ts");
    const fresh = path.join(await tempDir("devstack-untrusted-fresh-"), "queue.sqlite");
    new SqliteOperationStore(fresh).close();
    const schemaOf = (file: string) => {
      const db = new DatabaseSync(file, { readOnly: true });
      try {
        return db.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name").all();
      } finally {
        db.close();
      }
    };
    const at = new Date(Date.now() - 60_000).toISOString();
    const { operation } = operationRow("op_v1", "confirmed", at, sendRequest("1"));
    const file = await v1Bundle((db) => {
      db.exec("CREATE TABLE extra (secret TEXT); INSERT INTO extra VALUES ('kept?'); ALTER TABLE operations ADD COLUMN note TEXT DEFAULT 'theirs';");
      const columns = Object.keys(operation);
      db.prepare(`INSERT INTO operations (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`).run(...(Object.values(operation) as Array<string | null>));
    });
    const stateDir = await tempDir("devstack-untrusted-state-");
    const stack = await startStack({ load: file, stateDir });
    try {
      const op = await createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) }).status("send", "op_v1");
      expect(op.state).toBe("confirmed");
    } finally {
      await stack.stop();
    }
    // Read once the runtime let go of it (it holds the store's lock while it runs).
    expect(schemaOf(path.join(stateDir, "queue.sqlite"))).toEqual(schemaOf(fresh));
  });
});

describe("text from a loaded bundle is printed escaped by trace and ctl (issue 24, item 6)", () => {
  it("an operation's failure detail with escape sequences: trace's message shows it escaped", async () => {
    const ESC = "\u001b";
    const at = new Date(Date.now() - 60_000).toISOString();
    const rows = rowsOf(good);
    const { operation } = operationRow("op_esc", "rejected", at, sendRequest("1"));
    rows.operations = [...(rows.operations ?? []), { ...operation, reason: JSON.stringify({ code: "simulation_failed", detail: `${ESC}[2J${ESC}]0;pwned\u0007\u009b32mready` }) }];
    const stateDir = await tempDir("devstack-untrusted-state-");
    const stack = await startStack({ load: await craft({ store: storeOf(rows) }), stateDir });
    try {
      const trace = await execa(process.execPath, [...CLI, "trace", "op_esc", "--state-dir", stateDir], { reject: false });
      expect(trace.exitCode, trace.stderr).toBe(0);
      expect(trace.stdout).toContain("operation op_esc (rejected), never mined: its call on the state of block");
      expect(trace.stdout).toMatch(/^failed: simulation_failed: \\x1b\[2J\\x1b\]0;pwned\\x07\\x9b32mready$/m);
      for (const control of [ESC, "\u0007", "\u009b"]) expect(trace.stdout + trace.stderr).not.toContain(control);
    } finally {
      await stack.stop();
    }
  });
});

describe("text from a loaded bundle is printed escaped by ctl (issue 24, item 6)", () => {
  it("an operation id with control characters, quoted back in a dev route's problem: ctl's message shows it escaped", async () => {
    // JSON escapes C0 (ESC shows as \u001b) but not DEL or C1 (\u009b is a CSI of its own): those reach ctl raw.
    const id = "op_\u001b[2J\u009b32m\u007fready";
    const at = new Date(Date.now() - 60_000).toISOString();
    const rows = rowsOf(good);
    const { operation } = operationRow(id, "rejected", at, sendRequest("1"));
    rows.operations = [...(rows.operations ?? []), { ...operation, reason: JSON.stringify({ code: "simulation_failed", detail: "reverted" }) }];
    const stateDir = await tempDir("devstack-untrusted-state-");
    const stack = await startStack({ load: await craft({ store: storeOf(rows) }), stateDir });
    try {
      // Both asks at once: a refused drop changes nothing for the other.
      const drop = (...extra: string[]) => execa(process.execPath, [...CLI, "ctl", "drop", id, ...extra, "--state-dir", stateDir], { reject: false });
      const [ctl, json] = await Promise.all([drop(), drop("--json")]);
      expect(ctl.exitCode).toBe(1);
      // In words (its code and detail), the detail's controls escaped; under --json, the problem's JSON, escaped the same.
      expect(ctl.stderr).toMatch(/^queue-devstack ctl: 422 \S+: operation op_\\x1b\[2J\\x9b32m\\x7fready has no transaction waiting in the mempool \(rejected\)/);
      expect(json.stderr).toMatch(/^queue-devstack ctl: 422: .*operation op_\\u001b\[2J\\x9b32m\\x7fready has no transaction waiting in the mempool \(rejected\)/);
      for (const control of ["\u001b", "\u007f", "\u009b"]) expect(json.stdout + json.stderr).not.toContain(control);
      for (const control of ["\u001b", "\u007f", "\u009b"]) expect(ctl.stdout + ctl.stderr).not.toContain(control);
    } finally {
      await stack.stop();
    }
  });
});

describe("resumed operations are checked before anything is re-broadcast (issue 24, item 3)", () => {
  const transfer = (from: number) =>
    dev(from).signTransaction({ type: "eip1559", chainId: 11155111, nonce: 0, to: "0x000000000000000000000000000000000000dEaD", value: parseEther("1234"), gas: 21000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n });
  /** The relayer's nonce in the good bundle's chain: the one nonce a lone live attempt may have. */
  const relayerNonce = () => {
    const chain = JSON.parse(gunzipSync(Buffer.from(good.chain, "base64")).toString("utf8")) as { accounts: Record<string, { nonce: number }> };
    return Object.entries(chain.accounts).find(([address]) => address.toLowerCase() === dev(1).address.toLowerCase())?.[1].nonce ?? 0;
  };
  /** The relayer's call of the Pool, as the engine signs one: `change` alters what it is. */
  const poolCall = (request: Record<string, unknown>, change: { chainId?: number; data?: Hex; nonce?: number } = {}) =>
    dev(1).signTransaction({ type: "eip1559", chainId: change.chainId ?? 11155111, nonce: change.nonce ?? relayerNonce(), to: (JSON.parse(good.manifest) as { poolAddress: Hex }).poolAddress, data: change.data ?? transactCalldata(request as never), gas: 2_000_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n });
  /** An attempt's row as the engine stores one, for `raw` (its nonce and fees read from it unless `row` says otherwise). */
  const attemptRow = (operationId: string, raw: Hex, at: string, hash: Hex = keccak256(raw), row: Record<string, unknown> = {}) => {
    const tx = parseTransaction(raw);
    return { hash, operation_id: operationId, nonce: tx.nonce ?? 0, raw, max_fee_per_gas: String(tx.maxFeePerGas ?? 0n), max_priority_fee_per_gas: String(tx.maxPriorityFeePerGas ?? 0n), created_at: at, ...row };
  };

  // Each of the attempt's checks on its own: the others hold.
  const forged: Array<[string, (request: Record<string, unknown>) => Promise<{ raw: Hex; hash?: Hex; row?: Record<string, unknown> }>, RegExp]> = [
    ["an attempt signed by dev account #0", async () => ({ raw: await transfer(0) }), /its attempt 0x[0-9a-f]{64} is not signed by the relayer/],
    ["the relayer's transfer of 1,234 ETH to 0x…dEaD", async () => ({ raw: await transfer(1) }), /its attempt 0x[0-9a-f]{64} is not sent to the Pool/],
    ["the relayer's call of the Pool with other calldata", async (request) => ({ raw: await poolCall(request, { data: "0xdeadbeef" }) }), /its attempt 0x[0-9a-f]{64} is not its operation's call of the Pool/],
    ["the relayer's call of the Pool on another chain", async (request) => ({ raw: await poolCall(request, { chainId: 1 }) }), /its attempt 0x[0-9a-f]{64} is not for chain 11155111/],
    ["the relayer's call of the Pool under another hash", async (request) => ({ raw: await poolCall(request), hash: `0x${"ab".repeat(32)}` }), /its attempt 0xabab[0-9a-f]{60} is not the hash of its transaction/],
    // The engine signs the next relay after the largest stored nonce: a row's nonce must be its bytes'.
    ["the relayer's call of the Pool whose row names another nonce", async (request) => ({ raw: await poolCall(request), row: { nonce: relayerNonce() + 1 } }), /its attempt 0x[0-9a-f]{64} is at nonce \d+, its row says \d+$/],
    ["the relayer's call of the Pool whose row names other fees", async (request) => ({ raw: await poolCall(request), row: { max_fee_per_gas: "20000000000" } }), /its attempt 0x[0-9a-f]{64} offers fees 10000000000\/1 wei \(max\/priority\), its row says 20000000000\/1$/],
    ["the relayer's call of the Pool at nonce 10^9", async (request) => ({ raw: await poolCall(request, { nonce: 1e9 }) }), /its attempt 0x[0-9a-f]{64} is at nonce 1000000000, not one the relayer could have pending: the relayer's nonce in the bundle's chain is \d+, and nonce \d+ before it is no live attempt's, so it could never be mined$/],
  ];
  it.each(forged)("%s: that operation fails (bundle_attempt_invalid) and keeps no attempt, the others load; nothing is broadcast", async (_name, sign, why) => {
    const at = new Date().toISOString();
    const rows = rowsOf(good);
    const request = sendRequest("1");
    const forgedOp = operationRow("op_forged", "submitted", at, request);
    const kept = operationRow("op_kept", "confirmed", at, sendRequest("1"));
    rows.operations = [...(rows.operations ?? []), forgedOp.operation, kept.operation];
    rows.operation_nullifiers = [...(rows.operation_nullifiers ?? []), ...forgedOp.nullifiers, ...kept.nullifiers];
    const attempt = await sign(request);
    rows.attempts = [...(rows.attempts ?? []), attemptRow("op_forged", attempt.raw, at, attempt.hash, attempt.row)];
    const details: string[] = [];
    const stack = await startStack({ load: await craft({ store: storeOf(rows) }), onProgress: ({ step, detail }) => void (detail && details.push(`${step}: ${detail}`)) });
    try {
      expect(details).toContain("unpack bundle: 1 operation failed as bundle_attempt_invalid (a stored attempt not the relayer's call of the Pool)");
      const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
      const failed = await queue.status("send", "op_forged");
      expect(failed.state).toBe("rejected");
      expect(failed.reason?.code).toBe("bundle_attempt_invalid");
      expect(failed.reason?.detail).toMatch(why);
      expect(failed.transactions).toEqual([]);
      expect((await queue.status("send", "op_kept")).state).toBe("confirmed");
      // Its bytes never reached the chain: not known to the node, the dead address still empty.
      expect(await rpc(stack.rpcUrl, "eth_getTransactionByHash", [keccak256(attempt.raw)])).toBeNull();
      expect(BigInt(await rpc<string>(stack.rpcUrl, "eth_getBalance", ["0x000000000000000000000000000000000000dEaD", "latest"]))).toBeLessThan(parseEther("1234"));
    } finally {
      await stack.stop();
    }
  });

  it("attempts' nonces, against the relayer's nonce N in the bundle's chain: live ones from N up each at their own nonce with no gap, and any below N (the chain's past), load; any other fails its operation alone", async () => {
    const at = new Date(Date.now() - 60_000).toISOString();
    const rows = rowsOf(good);
    rows.operations = [...(rows.operations ?? [])];
    rows.attempts = [...(rows.attempts ?? [])];
    const N = 5; // settleAttempts is given the chain's nonce: one above 0 leaves room below it
    const add = async (id: string, state: string, nonces: number[], fees: Record<string, string> = {}) => {
      const request = sendRequest("1");
      rows.operations?.push(operationRow(id, state, at, request).operation);
      for (const [i, nonce] of nonces.entries()) {
        const raw = await dev(1).signTransaction({ type: "eip1559", chainId: 11155111, nonce, to: (JSON.parse(good.manifest) as { poolAddress: Hex }).poolAddress, data: transactCalldata(request as never), gas: 2_000_000n, maxFeePerGas: 10n ** 10n + BigInt(i), maxPriorityFeePerGas: 1n });
        rows.attempts?.push(attemptRow(id, raw, at, keccak256(raw), fees));
      }
    };
    await add("op_included", "included", [N - 2]); // mined, waiting for confirmations: the chain's past
    await add("op_next", "submitted", [N, N]); // fee-bumped: two attempts at one nonce
    await add("op_twin", "submitted", [N]); // N again: another operation holds it
    await add("op_badfees", "submitted", [N + 1], { max_fee_per_gas: "1" });
    await add("op_past_gap", "submitted", [N + 2]); // N + 1 failed above: a gap before it
    await add("op_two_nonces", "submitted", [N + 1, N + 3]);
    await add("op_confirmed_unused", "confirmed", [N + 9]);
    const settled = await settleAttempts(parseStoreRows(rows), parseManifest(Buffer.from(good.manifest)), N);
    const failed = Object.fromEntries(settled.failed.map(({ id, detail }) => [id, detail]));
    expect(Object.keys(failed).sort()).toEqual(["op_badfees", "op_confirmed_unused", "op_past_gap", "op_twin", "op_two_nonces"]);
    expect(failed.op_twin).toMatch(/is at nonce 5, not one the relayer could have pending: another operation's attempt holds it$/);
    expect(failed.op_badfees).toMatch(/offers fees 10000000000\/1 wei \(max\/priority\), its row says 1\/1$/);
    expect(failed.op_past_gap).toMatch(/is at nonce 7, not one the relayer could have pending: the relayer's nonce in the bundle's chain is 5, and nonce 6 before it is no live attempt's/);
    expect(failed.op_two_nonces).toBe("its attempts are at nonces 6 and 8: a fee bump keeps its nonce");
    expect(failed.op_confirmed_unused).toMatch(/is at nonce 14, which the relayer has not used in the bundle's chain \(its nonce there is 5\), yet it is confirmed$/);
    // The rest keep their attempts; the failed keep none.
    expect([...new Set(settled.rows.attempts.map((a) => a.operation_id))].sort()).toEqual(["op_included", "op_next"]);
    expect(settled.rows.operations.filter((op) => op.id in failed).every((op) => op.state === "rejected" && JSON.parse(op.reason as string).code === "bundle_attempt_invalid")).toBe(true);
  });

  it("an attempt at nonce 10^9 (anyone can sign one: the relayer's key is anvil's dev key) does not hold up later relays: its operation fails, and a send relayed after the load is confirmed", async () => {
    const at = new Date().toISOString();
    const rows = rowsOf(good);
    const request = sendRequest("1");
    const { operation, nullifiers } = operationRow("op_far", "submitted", at, request);
    rows.operations = [...(rows.operations ?? []), operation];
    rows.operation_nullifiers = [...(rows.operation_nullifiers ?? []), ...nullifiers];
    rows.attempts = [...(rows.attempts ?? []), attemptRow("op_far", await poolCall(request, { nonce: 1e9 }), at)];
    const stack = await startStack({ load: await craft({ store: storeOf(rows) }) });
    try {
      const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
      const far = await queue.status("send", "op_far");
      expect(far.state).toBe("rejected");
      expect(far.reason?.code).toBe("bundle_attempt_invalid");
      expect(far.transactions).toEqual([]);
      await resumeRelayer(stack); // the old code held it (a live operation); it must not matter
      const { config, transaction } = await provenSend(stack, await poolFixture(stack), queue, 2);
      const sent = await queue.waitFor("send", (await queue.submit("send", config, transaction)).id, { timeoutMs: 20_000 });
      expect(sent.state).toBe("confirmed");
      expect(sent.transactions.map((t) => t.nonce)).toEqual([relayerNonce()]);
    } finally {
      await stack.stop();
    }
  });

  it("a resumed operation's stored attempt, stuck, is checked again before a fee bump signs: one whose call now reverts is not bumped (nor failed) and its broadcast transaction, once mined, settles it", async () => {
    // Old enough that the re-broadcast bytes count as stuck at once.
    const at = new Date(Date.now() - 60_000).toISOString();
    const rows = rowsOf(good);
    // The Pool's root: the root and nullifier reads pass, its simulation refuses the no-proof request.
    const request = sendRequest(goodRoot);
    const { operation, nullifiers } = operationRow("op_stuck", "submitted", at, request);
    rows.operations = [...(rows.operations ?? []), operation];
    rows.operation_nullifiers = [...(rows.operation_nullifiers ?? []), ...nullifiers];
    const raw = await poolCall(request);
    rows.attempts = [...(rows.attempts ?? []), attemptRow("op_stuck", raw, at)];
    const stack = await startStack({ load: await craft({ store: storeOf(rows) }), relay: { stuckAfterMs: 300 } });
    try {
      const mining = (mode: string) => fetch(`${stack.queueUrl}/api/dev/mining`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ mode }) }).then((r) => expect(r.status).toBeLessThan(300));
      await mining("hold");
      await resumeRelayer(stack);
      const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
      let op = await queue.status("send", "op_stuck");
      for (let i = 0; i < 100 && !op.history.some((h) => h.detail?.startsWith("fee bump")); i++) {
        await new Promise((r) => setTimeout(r, 100));
        op = await queue.status("send", "op_stuck");
      }
      const note = op.history.find((h) => h.detail?.startsWith("fee bump"))?.detail;
      expect(note).toMatch(/^fee bump withheld: simulation_failed: .*ExtDataHashMismatch.*; 0x[0-9a-f]{64} stays as broadcast \(it may still be mined\)$/);
      // Several stuck periods later: still its one transaction, re-broadcast as stored, nothing signed.
      await new Promise((r) => setTimeout(r, 1_500));
      op = await queue.status("send", "op_stuck");
      expect(op.state).toBe("submitted");
      expect(op.transactions.map((t) => t.hash)).toEqual([keccak256(raw)]);
      expect(op.history.filter((h) => h.detail?.startsWith("fee bump"))).toHaveLength(1);
      expect(await rpc(stack.rpcUrl, "eth_getTransactionByHash", [keccak256(raw)])).not.toBeNull();
      await mining("auto");
      const settled = await queue.waitFor("send", "op_stuck", { timeoutMs: 20_000 });
      expect(settled.state).toBe("reverted");
      expect(settled.transactionHash).toBe(keccak256(raw));
    } finally {
      await stack.stop();
    }
  });

  it("an operation dated 2099 is refused, naming it; nothing started, the state dir as found", async () => {
    const rows = rowsOf(good);
    rows.operations = [...(rows.operations ?? []), operationRow("op_2099", "submitted", "2099-01-01T00:00:00.000Z", sendRequest("1")).operation];
    const file = await craft({ store: storeOf(rows) });
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    const { error, steps } = await loadRefused(file, stateDir);
    expect(error).toBeInstanceOf(BundleError);
    expect((error as Error).message).toMatch(/its store part is refused: operations row \d+ \(op_2099\) is invalid: [\w.]+: dated in the future/);
    expect(steps).toEqual(["check state dir"]);
    await asFound();
  });

  it("a resumed live operation is checked again on the loaded chain before the relayer signs: one whose call now reverts is rejected, nothing broadcast", async () => {
    const at = new Date().toISOString();
    const rows = rowsOf(good);
    // The Pool's own root at the save: the operation passes the root and nullifier reads, and the Pool's simulation refuses its proof.
    const { operation, nullifiers } = operationRow("op_stale", "accepted", at, sendRequest(goodRoot));
    rows.operations = [...(rows.operations ?? []), operation];
    rows.operation_nullifiers = [...(rows.operation_nullifiers ?? []), ...nullifiers];
    const stack = await startStack({ load: await craft({ store: storeOf(rows) }) });
    try {
      const relayerNonce = () => rpc<string>(stack.rpcUrl, "eth_getTransactionCount", [stack.relayer.address, "pending"]);
      const before = await relayerNonce();
      const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(stack.manifest) });
      await resumeRelayer(stack);
      const op = await queue.waitFor("send", "op_stale");
      console.log(`resumed operation: ${op.state} (${op.reason?.code}: ${op.reason?.detail})`);
      expect(op.state).toBe("rejected");
      expect(op.reason?.code).not.toMatch(/^bundle_/);
      expect(op.transactions).toEqual([]);
      expect(op.history.map((h) => h.state)).not.toContain("submitted");
      expect(await relayerNonce()).toBe(before);
    } finally {
      await stack.stop();
    }
  });
});

describe("a bundle's manifest names only this runtime's paths, and a fork bundle's is checked against its chain (issue 24, item 4)", () => {
  type Manifest = { queue: { endpoints: Record<string, string>; proof: { artifacts: Array<{ path: string; role: string; sha256: string }> } }; assets: Array<{ symbol: string }> };
  const manifestWith = (change: (m: Manifest) => void) => {
    const manifest = JSON.parse(good.manifest) as Manifest;
    change(manifest);
    return `${JSON.stringify(manifest, null, 2)}\n`;
  };
  const foreign: Array<[string, (m: Manifest) => void, RegExp]> = [
    ["an artifact path to another host (//attacker.example/…)", (m) => void ((m.queue.proof.artifacts[0] as { path: string }).path = "//attacker.example/joinsplit.wasm"), /queue\.proof\.artifacts\.0\.path: expected a path on \{base_url\}'s origin/],
    ["an artifact path through a backslash (/\\attacker.example/…)", (m) => void ((m.queue.proof.artifacts[0] as { path: string }).path = "/\\attacker.example/joinsplit.wasm"), /queue\.proof\.artifacts\.0\.path: expected a path on \{base_url\}'s origin/],
    ["an endpoint this runtime does not serve", (m) => void (m.queue.endpoints.sendRelay = "/elsewhere/send-relay"), /queue\.endpoints\.sendRelay is "\/elsewhere\/send-relay": this runtime serves it at \/api\/queue\/send-relay/],
  ];
  it.each(foreign)("%s: refused as the manifest part, nothing started, the state dir as found", async (_name, change, why) => {
    const file = await craft({ manifest: manifestWith(change) });
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    const { error, steps } = await loadRefused(file, stateDir);
    expect(error).toBeInstanceOf(BundleError);
    expect((error as Error).message).toMatch(/its manifest part is refused: /);
    expect((error as Error).message).toMatch(why);
    expect(steps).toEqual(["check state dir"]);
    await asFound();
  });

  const undescribed: Array<[string, (m: Manifest) => void, RegExp]> = [
    ["the Pool's code hash not its code's in the chain", (m) => void ((m as unknown as { poolRuntimeCodeHash: string }).poolRuntimeCodeHash = `0x${"ab".repeat(32)}`), /poolAddress \(0x[0-9a-fA-F]{40}\) has code of hash 0x[0-9a-f]{64} in the bundle's chain, the manifest says 0xabab/],
    // A dev account: in the chain, with no code.
    ["a registry address that is no contract in the chain", (m) => void ((m as unknown as { accountRegistry: { address: string } }).accountRegistry.address = dev(5).address), /accountRegistry \(0x[0-9a-fA-F]{40}\) has no code in the bundle's chain/],
    ["an ABI that is not the fixture's", (m) => void ((m as unknown as { receiveDirectory: { abi: unknown[] } }).receiveDirectory.abi = [{ type: "function", name: "drain" }]), /receiveDirectory\.abi is not the ReceiveDirectory's/],
  ];
  it.each(undescribed)("%s: refused as the manifest part before anything starts, local or fork, the state dir as found", async (_name, change, why) => {
    for (const mode of ["local", "fork"] as const) {
      const file = await craft({ mode, manifest: manifestWith(change) });
      const { stateDir, asFound } = await stateDirWithNotes(expect);
      const { error, steps } = await loadRefused(file, stateDir);
      expect(error).toBeInstanceOf(BundleError);
      expect((error as Error).message).toMatch(/its manifest part is refused: it does not describe this runtime and the bundle's chain: /);
      expect((error as Error).message).toMatch(why);
      expect(steps).toEqual(["check state dir"]);
      await asFound();
    }
  });

  it("a bundle saying mode fork: its manifest is what its chain describes (a symbol of its own is refused), the state dir as found; as saved, it loads", async () => {
    const forged = await craft({ mode: "fork", manifest: manifestWith((m) => void ((m.assets[0] as { symbol: string }).symbol = "FAKE")) });
    const { stateDir, asFound } = await stateDirWithNotes(expect);
    const { error } = await loadRefused(forged, stateDir);
    expect(String(error)).toMatch(/the saved chain does not describe the saved manifest/);
    await asFound();
    const honest = await startStack({ load: await craft({ mode: "fork" }) });
    try {
      expect(honest.manifest).toEqual(JSON.parse(good.manifest));
    } finally {
      await honest.stop();
    }
  });

  it("the client fetches no proof file from another origin than the queue's, whatever the config says", async () => {
    const hits: string[] = [];
    const elsewhere = createServer((request, response) => {
      hits.push(String(request.url));
      response.end("x");
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
    try {
      const config = JSON.parse(good.manifest) as Manifest;
      const { port } = elsewhere.address() as AddressInfo;
      for (const artifact of config.queue.proof.artifacts) artifact.path = `//127.0.0.1:${port}/${artifact.role}`;
      const pin = (role: string) => config.queue.proof.artifacts.find((a) => a.role === role)?.sha256 as string;
      const pins = { wasmSha256: pin("wasm"), zkeySha256: pin("zkey"), verificationKeySha256: pin("verificationKey") };
      await expect(fetchProofFiles("http://127.0.0.1:9/", config as never, pins)).rejects.toThrow(ForeignOriginError);
      expect(hits).toEqual([]);
    } finally {
      await new Promise((resolve) => elsewhere.close(resolve));
    }
  });
});
