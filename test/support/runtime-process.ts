import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, afterEach, beforeAll } from "vitest";
import { CIRCUIT_BUILD_DIR } from "../../harness/deployment/index.ts";
import type { DevStack } from "../../harness/index.ts";
import type { Operation } from "../../src/schemas/operation.ts";
import { RELAYER_KEY } from "./chain.ts";
import { builtFile, RUNTIME_BIN_ENV } from "./cli-build.ts";
import { endLaunches } from "./processes.ts";
import { rpc } from "./rpc.ts";

type RuntimeProcessOptions = {
  rpcUrl?: string;
  wsRpcUrl?: string;
  prefix?: string[];
  /**
   * Run src/main.ts itself, as `npm run queue-runtime` does, rather than this run's build of it.
   * @defaultValue false
   */
  fromSource?: boolean;
};

/** The node arguments that run src/main.ts from source, as `npm run queue-runtime` does. Append the runtime's own arguments. */
const SOURCE_RUNTIME = ["--experimental-strip-types", "--no-warnings", "src/main.ts"];

/**
 * The node arguments that run the operator's runtime as this run built it from the checkout's sources
 * (test/support/cli-build.ts): the same code, started without Node resolving and stripping its modules.
 */
export function builtRuntime(): string[] {
  return [builtFile(RUNTIME_BIN_ENV)];
}

export interface RuntimeProcesses {
  /** A temp folder for the file's stores, removed after its tests. */
  readonly dir: string;
  /** startRuntimeProcess, and the process is SIGKILLed after the test (or at kill()). */
  start(stack: DevStack, extraArgs?: string[], options?: RuntimeProcessOptions): Promise<{ url: string; child: ResultPromise }>;
  kill(): Promise<void>;
}

/** For a test file that runs the operator's runtime in its own processes: none outlives its test. */
export function withRuntimeProcesses(prefix: string): RuntimeProcesses {
  const started: ResultPromise[] = [];
  let dir = "";
  const processes: RuntimeProcesses = {
    get dir() {
      return dir;
    },
    async start(stack, extraArgs, options) {
      const running = await startRuntimeProcess(stack, extraArgs, options);
      started.push(running.child);
      return running;
    },
    kill: () => endLaunches(started, "SIGKILL"),
  };
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), prefix));
  });
  afterEach(() => processes.kill());
  afterAll(() => rm(dir, { recursive: true, force: true }));
  return processes;
}

/**
 * The queue runtime as an operator runs it (src/main.ts, its own process; this run's build of it unless
 * `fromSource`) for a stack's manifest and chain.
 */
export async function startRuntimeProcess(stack: DevStack, extraArgs: string[] = [], options: RuntimeProcessOptions = {}): Promise<{ url: string; child: ResultPromise }> {
  // A prefix runs it through another command first (prlimit, say), which execs node.
  const [file, ...prefixArgs] = [...(options.prefix ?? []), process.execPath];
  const child = execa(
    file as string,
    [...prefixArgs, ...(options.fromSource ? SOURCE_RUNTIME : builtRuntime()), "--manifest", stack.manifestPath, "--artifacts", CIRCUIT_BUILD_DIR, "--port", "0", ...extraArgs],
    { env: { QUEUE_RPC_URL: options.rpcUrl ?? stack.rpcUrl, QUEUE_RELAYER_KEY: RELAYER_KEY, ...(options.wsRpcUrl ? { QUEUE_WS_RPC_URL: options.wsRpcUrl } : {}) }, reject: false },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    void child.then((r) => reject(new Error(`runtime exited ${r.exitCode}: ${r.stderr}`)));
  });
  return { url, child };
}

/** Reads an operation every 50 ms until `ok` holds (at most `tries` reads). */
export async function pollUntil(read: () => Promise<Operation>, ok: (op: Operation) => boolean, tries = 300): Promise<Operation> {
  for (let i = 0; i < tries; i++) {
    const op = await read();
    if (ok(op)) return op;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("timed out");
}

/** The stack relayer's mined transaction count: each operation must move it by exactly one. */
export async function relayerNonce(stack: DevStack): Promise<number> {
  return Number(await rpc<string>(stack.rpcUrl, "eth_getTransactionCount", [stack.relayer.address, "latest"]));
}
