import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { gunzipSync } from "node:zlib";
import { execa, type ResultPromise } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { startDevStack, StackInfo, type DevStack } from "../harness/index.ts";
import { listProcesses, type ProcessInfo } from "../harness/process/index.ts";
import { RELAYER_KEY } from "./support/chain.ts";
import { gone } from "./support/processes.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { builtCli } from "./support/cli.ts";

// Secrets on disk and in the process list: the relayer's key and a fork URL's credentials must never
// reach a file of the state dir (during the run or after it), a log line, a response body, or the
// command line of any process the stack starts.
let upstream: DevStack;
let provider: Server;
let providerPort: number;
let refused = 0;
withQueueStack({ client: false }, async (started) => {
  ({ stack: upstream } = started);
  // A hosted RPC provider in front of the upstream: a key in the path, another in the query, and Basic
  // auth. It refuses any request without all three, so the stack can only fork it with the credentials.
  provider = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://x");
    const authorized =
      url.pathname === "/v3/0123456789abcdef0123" &&
      url.searchParams.get("apikey") === "sk_live_0123456789abcdef" &&
      req.headers.authorization === `Basic ${Buffer.from("alice:hunter2pass").toString("base64")}`;
    if (!authorized) {
      refused++;
      res.writeHead(401).end();
      return;
    }
    const answer = await fetch(upstream.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) });
    res.writeHead(answer.status, { "content-type": "application/json" }).end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((r) => provider.listen(0, "127.0.0.1", r));
  providerPort = (provider.address() as { port: number }).port;
});
afterAll(async () => {
  provider?.close();
});

const SECRETS = ["hunter2pass", "0123456789abcdef0123", "sk_live_0123456789abcdef", RELAYER_KEY.slice(2)];
const secretUrl = () => `http://alice:hunter2pass@127.0.0.1:${providerPort}/v3/0123456789abcdef0123?apikey=sk_live_0123456789abcdef`;

function expectNoSecret(where: string, text: string): void {
  for (const secret of SECRETS) expect(text.toLowerCase().includes(secret.toLowerCase()), `${where} holds ${secret.slice(0, 6)}…`).toBe(false);
}

async function stateDirText(dir: string): Promise<string> {
  const files = await readdir(dir, { recursive: true, withFileTypes: true });
  const texts = await Promise.all(files.filter((f) => f.isFile()).map((f) => readFile(path.join(f.parentPath, f.name)).then((b) => `${f.name}\n${b.toString("latin1")}`)));
  return texts.join("\n");
}

/** Every process descended from `root`, with its command line. */
async function descendants(root: number): Promise<ProcessInfo[]> {
  const all = await listProcesses();
  const found: ProcessInfo[] = [];
  const walk = (pid: number) => {
    for (const p of all.filter((q) => q.ppid === pid)) {
      found.push(p);
      walk(p.pid);
    }
  };
  walk(root);
  return found;
}

async function bodies(queueUrl: string): Promise<string> {
  const urls = [...["config", "networks", "assets", "openapi.json", "health", "send-status?id=op_nope", "nope"].map((p) => `${queueUrl}/api/queue/${p}`), `${queueUrl}/metrics`, `${queueUrl}/api/dev/faults`];
  const gets = await Promise.all(urls.map(async (u) => (await fetch(u)).text()));
  const post = await (await fetch(`${queueUrl}/api/queue/send-relay`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).text();
  return [...gets, post].join("\n");
}

describe("secrets", () => {
  it("a library fork stack: nothing in the state dir, argv, logs or responses", async () => {
    const stateDir = await mkdtemp(path.join(tmpdir(), "devstack-secrets-"));
    let logs = "";
    const stream = new Writable({ write: (chunk, _e, done) => ((logs += chunk.toString()), done()) });
    const fork = await startDevStack({ forkUrl: secretUrl(), stateDir, logger: { level: "debug", stream } });
    try {
      const children = await descendants(process.pid);
      expect(children.some((p) => p.pid === fork.chainPid)).toBe(true);
      for (const child of children) expectNoSecret(`command line of pid ${child.pid}`, child.args);
      expectNoSecret("state dir during the run", await stateDirText(stateDir));
      expectNoSecret("responses", await bodies(fork.queueUrl));
      expect(logs).toContain("incoming request");
      expectNoSecret("runtime log", logs);
      expect(refused).toBe(0); // every request anvil made reached the provider with the credentials
      // A repro bundle of the fork carries the forked state, never where it came from.
      const bundle = path.join(stateDir, "..", `${path.basename(stateDir)}.qdbundle`);
      await fork.save(bundle);
      const unpacked = JSON.parse(gunzipSync(await readFile(bundle)).toString("utf8")) as { chain: string; store: string };
      expectNoSecret("repro bundle", `${JSON.stringify(unpacked)}\n${gunzipSync(Buffer.from(unpacked.chain, "base64")).toString("latin1")}\n${gunzipSync(Buffer.from(unpacked.store, "base64")).toString("latin1")}`);
      await rm(bundle, { force: true });
    } finally {
      await fork.stop();
    }
    expectNoSecret("state dir after stop", await stateDirText(stateDir));
    await rm(stateDir, { recursive: true, force: true });
  });

  it("dev-stack with DEVSTACK_FORK_URL: nothing in its output, its children's argv or its state dir", async () => {
    const stateDir = await mkdtemp(path.join(tmpdir(), "devstack-secrets-cli-"));
    const child: ResultPromise = execa(
      process.execPath,
      [...builtCli(), "--chain-port", "0", "--queue-port", "0", "--state-dir", stateDir, "--json", "--verbose"],
      { reject: false, env: { DEVSTACK_FORK_URL: secretUrl() } },
    );
    try {
      let stdout = "";
      let stderr = "";
      child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
      const info = await new Promise<StackInfo>((resolve, reject) => {
        child.stdout?.on("data", (d: Buffer) => ((stdout += d.toString()), stdout.includes("\n") && resolve(StackInfo.parse(JSON.parse(stdout.split("\n")[0] as string)))));
        void child.then((r) => reject(new Error(`dev-stack exited ${r.exitCode}: ${stderr}`)));
      });
      expect(info.mode).toBe("fork");
      for (const p of await descendants(child.pid as number)) expectNoSecret(`command line of pid ${p.pid}`, p.args);
      expectNoSecret("state dir during the run", await stateDirText(stateDir));
      expectNoSecret("responses", await bodies(info.queueUrl));
      child.kill("SIGINT");
      expect((await child).exitCode).toBe(0);
      expect(await gone(info.processes.anvil.pid)).toBe(true);
      expectNoSecret("dev-stack output", stdout + stderr);
      expect(stderr).toContain("incoming request");
      expectNoSecret("state dir after stop", await stateDirText(stateDir));
    } finally {
      child.kill("SIGKILL");
      await child.catch(() => {});
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
