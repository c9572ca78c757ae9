// The consumer test's `bisect` part (issue 33, item 3 and its "Done when"): in the consumer project made
// from the tarball, as a new user, with the installed CLI and client library only:
// - a contracts repository (git, in the project's contracts/ folder) holding the Pool's sources in three
//   commits: the correct Pool, the off-by-one fee check (PoolFeeOffByOne's one-line change), a comment;
// - a bundle whose relay failed, by the natural repro (docs/reproducing-bugs.md): the repository's head
//   patched in, a fee-paying send is refused 422 FeeTooHigh, the refusal naming the operation the stack
//   kept (operationId); `trace` prints its call; saved, the stack stopped;
// - the bundle loaded: `patch Pool fixed.sol` succeeds, `replay op_…` exits 0 naming the first differing
//   frame, a patch moving a storage variable is refused naming it, `git bisect run` with the docs'
//   bisect.sh names the second commit, and `patch --undo Pool` puts back the bundle's Pool.
import { cp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Options, ResultPromise } from "execa";
import { listProcesses } from "../../harness/process/index.ts";
import type { UserNode } from "./user-node.ts";

/** What the consumer test (scripts/consumer/test-package.ts) hands over. */
export interface BisectConsumer {
  /** The consumer project, the tarball installed and the docs' named files (bisect.sh) written in it. */
  project: string;
  files: Map<string, string>;
  step: <T>(name: string, run: () => Promise<T>) => Promise<T>;
  /** Runs a command in the project; detached runs are stopped if a step fails. */
  inProject: (file: string, args: string[], options?: Options) => ResultPromise;
  /** This repository's installed version of a package. */
  version: (pkg: string) => Promise<string>;
  user: UserNode;
}

const CORRECT = "if (ext.extAmount < 0 && ext.fee > withdrawn)";
const OFF_BY_ONE = "if (ext.extAmount <= 0 && ext.fee > withdrawn)";

/**
 * The user's script: a fee-paying private send, proved with the client library against the stack running
 * from a state dir (its stack.json and manifest.json): deposits, proves and submits, printing the answer
 * as JSON: the operation, or the problem of a refusal (QueueProblemError.problem).
 */
const SEND = `import { readFile } from "node:fs/promises";
import { createPublicClient, createWalletClient, defineChain, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { QueueProblemError, closeProvers, createAccountKeys, createProver, createQueueClient, deposit, findNotes, prepareTransaction, recipientOf, reviewedFrom, syncPool } from "queue-devstack/client";

const [stateDir] = process.argv.slice(2);
const stack = JSON.parse(await readFile(\`\${stateDir}/stack.json\`, "utf8"));
const manifest = JSON.parse(await readFile(\`\${stateDir}/manifest.json\`, "utf8"));
const queue = createQueueClient({ baseUrl: stack.queueUrl, reviewed: reviewedFrom(manifest) });
{
  try {
    const config = await queue.beforePrepare();
    const prover = createProver(await queue.proofFiles(config), queue.reviewed);
    const chain = defineChain({ id: config.chainId, name: "Sepolia (local devstack)", nativeCurrency: { name: "Sepolia Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [stack.rpcUrl] } } });
    const client = createPublicClient({ chain, transport: http() });
    const wallet = createWalletClient({ account: privateKeyToAccount(stack.devAccounts[2].privateKey), chain, transport: http() });
    const usdc = config.assets[0].address;
    const fee = BigInt(config.relayFees.fees.find((f) => f.asset === usdc).send);
    const alice = createAccountKeys();
    await deposit({ wallet, client, pool: config.poolAddress, asset: usdc, amount: 5_000_000n, to: recipientOf(alice) });
    const state = await syncPool({ client, pool: config.poolAddress, fromBlock: BigInt(config.deploymentBlock), levels: config.queue.proof.treeDepth });
    const [note] = findNotes(alice, state, BigInt(config.domain));
    const deployment = { chainId: config.chainId, poolAddress: config.poolAddress, domain: BigInt(config.domain) };
    const send = await prepareTransaction({ deployment, prover, tree: state.tree, keys: alice, asset: usdc, inputs: [{ note: note.note, leafIndex: note.leafIndex }], outputs: [{ amount: 5_000_000n - fee, to: recipientOf(createAccountKeys()) }], fee, relayer: stack.relayer.address });
    console.log(JSON.stringify(await queue.submit("send", config, send.transaction).catch((error) => {
      if (error instanceof QueueProblemError) return error.problem;
      throw error;
    })));
  } finally {
    await closeProvers();
  }
}
`;

export async function bisectConsumer({ project, files, step, inProject, version, user }: BisectConsumer): Promise<void> {
  if (!files.has("bisect.sh")) throw new Error("neither README.md nor docs/*.md has a code block for bisect.sh");
  const repo = path.join(project, "contracts");
  const git = (args: string[], options: Options = {}) => inProject("git", ["-c", "user.name=Dev", "-c", "user.email=dev@example.invalid", ...args], { cwd: repo, ...options });
  const cli = (args: string[], options: Options = {}) => inProject("npx", ["queue-devstack", ...args], { cwd: repo, ...options });
  const commits: string[] = [];

  await step(`npm install -D solc@${await version("solc")} @openzeppelin/contracts (the Pool's compiler and imports, as docs/patching.md says) ${user.label}`, async () => {
    await user.install(project, [`solc@${await version("solc")}`, `@openzeppelin/contracts@${await version("@openzeppelin/contracts")}`]);
  });

  await step("a contracts repository (git) with three commits of the Pool: correct, the off-by-one fee check, a comment", async () => {
    // The Pool's sources as the installed package ships them (issue 40, item 5).
    const fixtures = path.join(project, "node_modules", "queue-devstack", "contracts-fixtures", "contracts");
    await cp(fixtures, path.join(repo, "contracts"), { recursive: true, filter: (source) => path.relative(fixtures, source).split(path.sep)[0] !== "test" });
    await inProject("git", ["init", "-q"], { cwd: repo });
    const pool = path.join(repo, "contracts", "Pool.sol");
    const commit = async (message: string, edit?: (source: string) => string) => {
      if (edit) {
        const source = await readFile(pool, "utf8");
        const edited = edit(source);
        if (edited === source) throw new Error(`${message}: the edit changed nothing`);
        await writeFile(pool, edited);
      }
      await git(["add", "-A"]);
      await git(["commit", "-q", "-m", message]);
      commits.push(String((await git(["rev-parse", "HEAD"])).stdout).trim());
    };
    await commit("the Pool");
    await commit("Pool: check the fee against what is withdrawn", (s) => s.replace(CORRECT, OFF_BY_ONE));
    await commit("Pool: a comment", (s) => s.replace("/// @title Pool", "/// @title Pool (the shielded pool)"));
  });

  // A stack started detached (its own process group), its --json line read; stopped by SIGINT to the group.
  async function start(args: string[]) {
    const run = cli([...args, "--json", "--chain-port", "0", "--queue-port", "0"], { detached: true, reject: false, all: false });
    const info = await new Promise<{ stateDir: string; processes: { anvil: { pid: number } } }>((resolve, reject) => {
      let out = "";
      run.stdout?.on("data", (d: Buffer) => ((out += d.toString()), out.includes("\n") && resolve(JSON.parse(out.split("\n")[0] as string))));
      void run.then((r) => reject(new Error(`queue-devstack exited ${r.exitCode}: ${String(r.stderr)}`)));
    });
    const stop = async () => {
      process.kill(-(run.pid as number), "SIGINT");
      await run; // npx itself reports the interrupt (its exit code says nothing of the stack's)
      const left = (await listProcesses()).filter((p) => p.pid === info.processes.anvil.pid || p.args.includes(info.stateDir));
      if (left.length > 0) throw new Error(`left running: ${left.map((p) => `${p.pid} ${p.args}`).join("; ")}`);
    };
    return { info, stop };
  }

  const stateDirs = { repro: path.join(project, "repro"), loaded: path.join(project, "loaded") };
  const bundle = path.join(project, "fee.qdbundle");
  const failed = await step("a bundle whose relay failed: the repository's head patched in, a send refused 422 FeeTooHigh naming the operation kept (operationId), traced; save", async () => {
    await writeFile(path.join(project, "send.mjs"), SEND);
    const node = (args: string[]) => {
      const [file, fileArgs] = user.node(args);
      return inProject(file, fileArgs, { env: user.env, extendEnv: false });
    };
    const stack = await start(["--proofs", "dev", "--state-dir", stateDirs.repro]);
    try {
      const dir = ["--state-dir", stateDirs.repro];
      await cli(["patch", "Pool", "contracts/Pool.sol", ...dir]);
      const printed = String((await node(["send.mjs", stateDirs.repro])).stdout).trim();
      const refusal = JSON.parse(printed) as { status?: number; code?: string; revert?: { name?: string }; operationId?: string };
      if (refusal.status !== 422 || refusal.code !== "simulation_failed" || refusal.revert?.name !== "FeeTooHigh" || !/^op_\w+$/.test(refusal.operationId ?? "")) {
        throw new Error(`the send was not refused FeeTooHigh naming an operation: ${printed}`);
      }
      const id = refusal.operationId as string;
      const trace = await cli(["trace", id, ...dir], { reject: false });
      if (trace.exitCode !== 0 || !/^Pool\.transact .*<- reverted: FeeTooHigh\(/m.test(String(trace.stdout))) throw new Error(`trace ${id}: exit ${trace.exitCode}\n${String(trace.all)}`);
      await cli(["save", bundle, ...dir]);
      return id;
    } finally {
      await stack.stop();
    }
  });

  const loaded = await step(`npx queue-devstack --load the bundle, then ctl mine; replay ${failed} exits 1 (still the buggy Pool)`, async () => {
    const stack = await start(["--load", bundle, "--state-dir", stateDirs.loaded]);
    // A block mined before any patch, so the original's trace keeps the failing code (docs/replay.md).
    await cli(["ctl", "mine", "--state-dir", stateDirs.loaded]);
    const replay = await cli(["replay", failed, "--state-dir", stateDirs.loaded], { reject: false });
    if (replay.exitCode !== 1) throw new Error(`replay on the buggy Pool: exit ${replay.exitCode}, expected 1\n${String(replay.all)}`);
    return stack;
  });
  try {
    const dir = ["--state-dir", stateDirs.loaded];
    await step("npx queue-devstack patch Pool fixed.sol succeeds", async () => {
      const fixed = path.join(repo, "contracts", "fixed.sol");
      await writeFile(fixed, String((await git(["show", `${commits[0]}:contracts/Pool.sol`])).stdout));
      try {
        const patched = await cli(["patch", "Pool", "contracts/fixed.sol", ...dir], { reject: false });
        if (patched.exitCode !== 0 || !String(patched.stdout).includes("patched Pool")) throw new Error(`patch Pool fixed.sol: exit ${patched.exitCode}\n${String(patched.all)}`);
      } finally {
        await rm(fixed);
      }
    });
    await step(`npx queue-devstack replay ${failed} exits 0 and prints the trace diff, naming the first differing frame`, async () => {
      const replay = await cli(["replay", failed, ...dir], { reject: false });
      const out = String(replay.stdout);
      if (replay.exitCode !== 0 || !/^first difference: Pool\.transact/m.test(out) || !/^--- original: /m.test(out) || !/^\+\+\+ replay: /m.test(out)) {
        throw new Error(`replay after the fix: exit ${replay.exitCode}, expected 0 and the diff\n${String(replay.all)}`);
      }
    });
    await step("a patch that moves a storage variable is refused in one line, naming it (exit 1)", async () => {
      const moved = path.join(repo, "contracts", "moved.sol");
      const source = String((await git(["show", `${commits[0]}:contracts/Pool.sol`])).stdout);
      await writeFile(moved, source.replace("    address[] private _assets;", "    uint256 private addedBefore;\n    address[] private _assets;"));
      try {
        const refused = await cli(["patch", "Pool", "contracts/moved.sol", ...dir], { reject: false });
        const lines = String(refused.stderr).trim().split("\n");
        if (refused.exitCode !== 1 || lines.length !== 1 || !/storage_layout_changed: .*storage variable _assets moved from slot \d+ to slot \d+/.test(lines[0] as string)) {
          throw new Error(`a moved variable: exit ${refused.exitCode}, expected 1 and one line naming _assets\n${String(refused.all)}`);
        }
      } finally {
        await rm(moved);
      }
    });
    await step("git bisect run sh ../bisect.sh (the docs' recipe) names the second commit as the first bad one", async () => {
      await git(["bisect", "start", commits[2] as string, commits[0] as string]);
      try {
        const run = await git(["bisect", "run", "sh", "../bisect.sh", failed], { env: { STATE_DIR: stateDirs.loaded }, reject: false });
        const named = /^([0-9a-f]{40}) is the first bad commit$/m.exec(String(run.stdout))?.[1];
        // The second commit really judged: its Pool patched in, its replay failing on the fee check (not skipped).
        const judged = String(run.all).includes("patched Pool") && String(run.all).includes("FeeTooHigh");
        if (run.exitCode !== 0 || named !== commits[1] || !judged) throw new Error(`git bisect run: exit ${run.exitCode}, named ${named ?? "nothing"}, expected ${commits[1]}\n${String(run.all)}`);
      } finally {
        await git(["bisect", "reset"]);
      }
    });
    await step("npx queue-devstack patch --undo Pool puts back the bundle's Pool (docs/bisect.md), and the replay fails again", async () => {
      const undo = await cli(["patch", "--undo", "Pool", ...dir], { reject: false });
      if (undo.exitCode !== 0 || !String(undo.stdout).includes("as loaded (")) throw new Error(`patch --undo Pool: exit ${undo.exitCode}, expected the bundle's Pool\n${String(undo.all)}`);
      const replay = await cli(["replay", failed, ...dir], { reject: false });
      if (replay.exitCode !== 1) throw new Error(`replay on the bundle's Pool again: exit ${replay.exitCode}, expected 1\n${String(replay.all)}`);
    });
  } finally {
    await loaded.stop();
  }
}
