import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { execa } from "execa";
import { beforeAll, describe, expect, it } from "vitest";
import { BundleError, StackAlreadyRunningError, startDevStack, type DevStack } from "../harness/index.ts";
import { commandLineOf } from "../harness/process/index.ts";
import { readProcessRecord } from "../harness/state-dir/index.ts";
import { anvilsWith } from "./support/processes.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { builtCli } from "./support/cli.ts";

// review-bundle: what a load or a save leaves on disk when it fails half-way.
const tempDir = withTempDirs();
const CLI = builtCli();
type Envelope = Record<string, unknown> & { chain: string; store: string; manifest: string };
let dir: string;
let stack: DevStack;
let good: Envelope;

beforeAll(async () => {
  dir = await tempDir("devstack-review-bundle-");
});
withQueueStack({ client: false, options: () => ({ stateDir: path.join(dir, "running") }) }, async (started) => {
  ({ stack } = started);
  const file = path.join(dir, "good.qdbundle");
  await stack.save(file);
  good = JSON.parse(gunzipSync(await readFile(file)).toString("utf8")) as Envelope;
});

/** The good bundle with its first asset's symbol, in its chain, holding an escape: it unpacks, then fails once the chain runs. */
async function failsOnceStarted(): Promise<string> {
  const symbol = Buffer.from("\u001b[2Jok", "latin1");
  const slot = `0x${Buffer.concat([symbol, Buffer.alloc(31 - symbol.length), Buffer.from([symbol.length * 2])]).toString("hex")}`;
  const chain = JSON.parse(gunzipSync(Buffer.from(good.chain, "base64")).toString("utf8")) as { accounts: Record<string, { storage: Record<string, string> }> };
  const asset = (JSON.parse(good.manifest) as { assets: Array<{ address: string }> }).assets[0]?.address.toLowerCase();
  const account = Object.entries(chain.accounts).find(([address]) => address.toLowerCase() === asset)?.[1] as { storage: Record<string, string> };
  account.storage[`0x${"4".padStart(64, "0")}`] = slot;
  const file = path.join(dir, "fails-once-started.qdbundle");
  await writeFile(file, gzipSync(JSON.stringify({ ...good, chain: gzipSync(JSON.stringify(chain)).toString("base64") })));
  return file;
}

describe("a refused load leaves nothing behind (review-bundle)", () => {
  it("with a store path outside the state dir, a bundle refused once its chain runs leaves no store there: the same load can be tried again", async () => {
    const load = await failsOnceStarted();
    const stateDir = await tempDir("devstack-review-bundle-state-");
    const storeDir = await tempDir("devstack-review-bundle-store-");
    const store = path.join(storeDir, "elsewhere.sqlite");
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = await startDevStack({ load, stateDir, store, chainPort: 0, queuePort: 0 }).then(
        async (started) => (await started.stop(), null),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(BundleError);
      expect((error as Error).message).toMatch(/its chain and manifest do not make a stack/);
      expect(await readdir(storeDir)).toEqual([]);
      expect(await readdir(stateDir)).toEqual([]);
      expect(await anvilsWith(stateDir)).toEqual([]);
    }
  });
});

describe("a failed save leaves nothing behind (review-bundle)", () => {
  it("stack.save onto a path it cannot replace (a folder) rejects, and leaves no temp file beside it", async () => {
    const target = path.join(await tempDir("devstack-review-bundle-save-"), "taken");
    await mkdir(target);
    await expect(stack.save(target)).rejects.toThrow();
    expect(await readdir(path.dirname(target))).toEqual(["taken"]);
  });

  it("queue-devstack save onto a path it cannot write says so in one line, exit 1, and leaves no temp file", async () => {
    const parent = await tempDir("devstack-review-bundle-save-cli-");
    await mkdir(path.join(parent, "taken"));
    for (const target of [path.join(parent, "taken"), path.join(parent, "missing", "repro.qdbundle")]) {
      const saved = await execa(process.execPath, [...CLI, "save", target, "--state-dir", stack.stateDir], { reject: false });
      expect(saved.exitCode, saved.stderr).toBe(1);
      expect(saved.stderr.trim().split("\n"), saved.stderr).toHaveLength(1);
      expect(saved.stderr).toMatch(/^queue-devstack save: /);
      expect(await readdir(parent)).toEqual(["taken"]);
    }
  });
});

describe("a second start on a busy state dir is refused without touching it (review-bundle)", () => {
  it("a state dir whose owner runs, in the middle of starting its anvil: the start refused by name leaves that anvil's run folder alone", async () => {
    const stateDir = await tempDir("devstack-review-bundle-busy-");
    // The owner: a live process of its own (a start of another CLI), recorded as the state dir's.
    const owner = execa("sleep", ["60"]);
    try {
      const pid = owner.pid as number;
      const commandSha256 = createHash("sha256").update((await commandLineOf(pid)) ?? "").digest("hex");
      await writeFile(path.join(stateDir, "processes.json"), JSON.stringify({ version: 1, owner: { pid, commandSha256 }, anvil: null }));
      // What anvil is given for its --config-out while the owner's start waits for it.
      await mkdir(path.join(stateDir, ".anvil-starting"));
      const error = await startDevStack({ stateDir, chainPort: 0, queuePort: 0 }).then(
        async (started) => (await started.stop(), null),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StackAlreadyRunningError);
      expect((await readdir(stateDir)).sort()).toEqual([".anvil-starting", "processes.json"]);
    } finally {
      owner.kill();
      await owner.catch(() => {});
    }
  });
  it("two CLIs that both found the state dir free: the second to claim it is refused by name, and the first runs on, its record intact", async () => {
    const stateDir = await tempDir("devstack-review-bundle-race-");
    const go = `${stateDir}.go`;
    // A preload that holds the CLI, synchronously, once its state dir is reclaimed (as it prints that
    // step's progress line), until the go file exists: the other CLI claims the state dir meanwhile.
    const preload = path.join(dir, "hold-after-check.mjs");
    await writeFile(
      preload,
      `import { existsSync, writeFileSync } from "node:fs";
for (const stream of [process.stdout, process.stderr]) {
  const write = stream.write.bind(stream);
  stream.write = (chunk, ...rest) => {
    if (String(chunk).startsWith("  check state dir ")) {
      writeFileSync(process.env.HOLD_UNTIL_FILE + ".held", "");
      const until = Date.now() + 40_000;
      while (!existsSync(process.env.HOLD_UNTIL_FILE) && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
    return write(chunk, ...rest);
  };
}
`,
    );
    const cli = (preloads: string[]) => execa(process.execPath, [...preloads, ...CLI, "--state-dir", stateDir, "--chain-port", "0", "--queue-port", "0"], { reject: false, env: { HOLD_UNTIL_FILE: go }, timeout: 60_000 });
    const held = cli(["--import", pathToFileURL(preload).href]);
    const ended = new Set<string>();
    void held.then(() => ended.add("held"));
    let first: ReturnType<typeof cli> | undefined;
    try {
      await until(async () => (await readdir(path.dirname(go))).includes(`${path.basename(go)}.held`));
      first = cli([]);
      void first.then(() => ended.add("first"));
      await until(async () => (await readdir(stateDir)).includes("stack.json"));
      await writeFile(go, "");
      // Refused (it exits), or it wrote its own record over the first's.
      await until(async () => ended.has("held") || (await readProcessRecord(stateDir))?.owner.pid === held.pid);
      expect((await readProcessRecord(stateDir))?.owner.pid).toBe(first.pid);
      const refused = await held;
      expect(refused.exitCode, String(refused.stderr)).toBe(1);
      expect(refused.stderr).toContain(`queue-devstack: StackAlreadyRunningError: a stack is already running from ${stateDir} (pid ${first.pid})`);
      expect(ended.has("first")).toBe(false);
    } finally {
      await writeFile(go, "");
      first?.kill("SIGINT");
      held.kill("SIGINT");
      await Promise.all([first, held]);
      await Promise.all([go, `${go}.held`].map((file) => rm(file, { force: true })));
    }
    expect(await anvilsWith(stateDir)).toEqual([]);
  });
});

/** Polls until `done` holds (every 50 ms, at most 30 s). */
async function until(done: () => Promise<boolean> | boolean): Promise<void> {
  for (const end = Date.now() + 30_000; !(await done()); ) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
