// The package as another project uses it: `npm pack` here, the tarball installed into a new project
// outside the repository, made as `npm init -y` makes one (CommonJS), and there, with nothing of this
// repository on hand:
// - the public types under the consumer's strict tsc without @types/node (the client's need nothing;
//   the rest no Node global of ours), then the documentation's example files (code blocks that name a
//   file, in README.md or docs/*.md) type-checked as the reader's project, with @types/node and no `types` entry;
// - those files run with plain Node and with vitest, whose output carries no warning about its config;
// - every entry point, the CLI and the README's vitest project under an older Node, if the machine
//   has one: the one-line refusal, no stack trace;
// - `npx queue-devstack --json` stopped with Ctrl-C, or a SIGINT to the npx PID alone, leaving no process,
//   its summary as the README shows it.
// The Hardhat, Foundry and Playwright projects, and the other parts, are beside this file (scripts/consumer/).
// A file missing from the package fails here. Run by `npm test`. Everything made here, the package's
// build and the consumer's own temp folders included (its TMPDIR), is under one temp folder, removed
// whether it passes or fails; the repository's dist/ is left as it was (checked), so runs at once, or
// a run while someone else uses dist/, never meet.
import { access, cp, mkdir, mkdtemp, readFile, readdir, realpath, rm, stat, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { execa, type Options, type Result } from "execa";
import { listProcesses } from "../../harness/process/index.ts";
import { MINIMUM_NODE, unsupportedNode } from "../../src/node-version-guard.ts";
import { bisectConsumer } from "./bisect.ts";
import { execConsumer } from "./exec.ts";
import { fixtureSourcesConsumer } from "./fixture-sources.ts";
import { foundryConsumer, setupFoundry } from "./foundry.ts";
import { hardhatConsumer, setupHardhat } from "./hardhat.ts";
import { playwrightConsumer, setupPlaywright } from "./playwright.ts";
import { ownDiagnostics } from "./own-diagnostics.ts";
import { threadsConsumer } from "./threads.ts";
import { userNode } from "./user-node.ts";

const repo = path.resolve(import.meta.dirname, "..", "..");
const work = await mkdtemp(path.join(tmpdir(), "queue-devstack-consumer-"));
const project = path.join(work, "project");
const stage = path.join(work, "package");
const consumerTmp = path.join(work, "tmp");
const version = async (pkg: string) => (JSON.parse(await readFile(path.join(repo, "node_modules", pkg, "package.json"), "utf8")) as { version: string }).version;

async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    const result = await run();
    process.stdout.write(`  ok   ${name} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
    return result;
  } catch (error) {
    process.stdout.write(`  FAIL ${name}\n`);
    throw error;
  }
}

/** Process groups started here (detached) and still running: a failed step may leave one. */
const running = new Set<number>();
const inProject = (file: string, args: string[], options: Options = {}) => {
  const child = execa(file, args, { cwd: project, all: true, ...options, env: { TMPDIR: consumerTmp, ...options.env } });
  const pid = child.pid;
  if (options.detached && pid !== undefined) {
    running.add(pid);
    void child.finally(() => running.delete(pid)).catch(() => {});
  }
  return child;
};

/** An execa output as text (its type is wide once options are passed through). */
const text = (output: unknown): string => (typeof output === "string" ? output : "");

/** The documentation a reader has: README.md, then every docs/*.md page, by path. */
const docs = new Map<string, string>();
docs.set("README.md", await readFile(path.join(repo, "README.md"), "utf8"));
for (const page of (await readdir(path.join(repo, "docs"))).filter((name) => name.endsWith(".md")).sort()) {
  docs.set(`docs/${page}`, await readFile(path.join(repo, "docs", page), "utf8"));
}
/** All of it as one text, for the checks that look for a file, a command or a summary line wherever it stands. */
const readme = [...docs.values()].join("\n");

/** Where each named code block stands (README.md or docs/<page>.md), filled by readmeFiles(). */
const where = new Map<string, string>();

/**
 * The documentation's code blocks whose info string names a file (```ts example.test.ts), by file name,
 * wherever they stand (README.md or a docs/ page); a name with a folder (```ts hardhat-project/hardhat.config.ts)
 * is a project of its own, in that folder. A name given twice is refused: one would win unseen.
 */
function readmeFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const [page, text] of docs) {
    for (const match of text.matchAll(/^```\w+ ([\w.-]+(?:\/[\w.-]+)*)\n([\s\S]*?)^```$/gm)) {
      const name = match[1] as string;
      if (where.has(name)) throw new Error(`${name} is a code block of both ${where.get(name)} and ${page}`);
      where.set(name, page);
      files.set(name, match[2] as string);
    }
  }
  return files;
}

// CONSUMER_ONLY=exec (or core, hardhat, foundry, threads, sources, bisect, playwright; comma-separated) runs those parts only, after the
// install and the documentation's files that every part needs.
const only = process.env.CONSUMER_ONLY?.split(",");
const wanted = (part: string) => only === undefined || only.includes(part);

/** The entry points a consumer can import, from the installed package's exports. */
async function entryPoints(): Promise<string[]> {
  const manifest = JSON.parse(await readFile(path.join(project, "node_modules", "queue-devstack", "package.json"), "utf8")) as { exports: Record<string, unknown> };
  return Object.keys(manifest.exports)
    .filter((key) => !key.endsWith(".json"))
    .map((key) => (key === "." ? "queue-devstack" : `queue-devstack/${key.slice(2)}`));
}

const byVersion = (a: string, b: string) => {
  const [x, y] = [a.split(".").map(Number), b.split(".").map(Number)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
};

/**
 * The newest Node on this machine older than the package's minimum: every `node` on PATH, in the usual
 * system folders and in nvm's, or the one QUEUE_DEVSTACK_OLDER_NODE names. Undefined, with why, if none.
 */
async function findOlderNode(): Promise<{ file: string; version: string } | { none: string }> {
  const named = process.env.QUEUE_DEVSTACK_OLDER_NODE;
  const nvm = path.join(process.env.NVM_DIR ?? path.join(homedir(), ".nvm"), "versions", "node");
  const dirs = [...(process.env.PATH ?? "").split(path.delimiter), "/usr/local/bin", "/usr/bin", "/bin", "/opt/homebrew/bin"];
  for (const installed of await readdir(nvm).catch(() => [] as string[])) dirs.push(path.join(nvm, installed, "bin"));
  const seen = new Set<string>();
  const older: Array<{ file: string; version: string }> = [];
  for (const candidate of named ? [named] : dirs.filter(Boolean).map((dir) => path.join(dir, "node"))) {
    const file = await realpath(candidate).catch(() => undefined);
    if (file === undefined || seen.has(file)) continue;
    seen.add(file);
    const { exitCode, stdout } = await execa(file, ["-p", "process.versions.node"], { reject: false, timeout: 10_000 });
    if (exitCode === 0 && unsupportedNode(stdout.trim()) !== undefined) older.push({ file, version: stdout.trim() });
  }
  if (named && older.length === 0) throw new Error(`QUEUE_DEVSTACK_OLDER_NODE=${named} is not a Node older than ${MINIMUM_NODE}`);
  const newest = older.sort((a, b) => byVersion(b.version, a.version))[0];
  return newest ?? { none: `no Node older than ${MINIMUM_NODE} on this machine (${seen.size} node binaries looked at: PATH, /usr/local/bin, /usr/bin, /bin, /opt/homebrew/bin, nvm's; QUEUE_DEVSTACK_OLDER_NODE names one)` };
}

/** The older Node's answer must be the guard's one line and an exit, with no stack trace. */
function refusedInOneLine(label: string, result: Result, expected: string): void {
  const { exitCode } = result;
  const [stdout, stderr] = [text(result.stdout), text(result.stderr)];
  if (exitCode !== 1 || stdout !== "" || stderr.trim() !== expected) {
    throw new Error(`${label}: expected exit 1 and one line on stderr\n  ${expected}\ngot exit ${exitCode}, stdout:\n${stdout}\nstderr:\n${stderr}`);
  }
}

/**
 * The package as `npm run build` then `npm pack` make it, in the staging folder: what npm packs from
 * the repository outside dist/ (its dry run's list: the manifest's "files", and npm's own rules, such
 * as a README in any folder), copied, and tsc's and the CLI bundle's output in its dist/.
 */
async function buildStaged(): Promise<void> {
  const { stdout } = await execa("npm", ["pack", "--dry-run", "--ignore-scripts", "--json"], { cwd: repo });
  const [listed] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
  const shipped = (listed?.files ?? []).map((f) => f.path).filter((f) => !f.startsWith("dist/"));
  if (!shipped.includes("package.json")) throw new Error(`npm pack --dry-run said: ${stdout}`);
  // Not packed, but esbuild reads it above dist/ as in the repository (its "strict": "use strict" in our modules).
  for (const file of [...shipped, "tsconfig.json"]) {
    await mkdir(path.dirname(path.join(stage, file)), { recursive: true });
    await cp(path.join(repo, file), path.join(stage, file));
  }
  const dist = path.join(stage, "dist");
  // --noCheck: emit only. npm test type-checks these files first (tsgo -p ., TypeScript 7's checker), and checking them again here
  // took 12 of tsc's 20 CPU-seconds (issue 42, item 7). The output is npm run build's but for the order
  // of some unions' members in the .d.ts, which names the same types.
  await execa("npx", ["tsc", "-p", "tsconfig.build.json", "--outDir", dist, "--noCheck"], { cwd: repo });
  await execa(process.execPath, ["--experimental-strip-types", "--no-warnings=ExperimentalWarning", "scripts/build/build-cli.ts", dist], { cwd: repo });
  // Any other character and V8 holds the bundle's source as two bytes a character (issue 32, item 5).
  const cli = await readFile(path.join(dist, "scripts", "cli", "dev-stack.js"), "utf8");
  if (!/^[\x00-\x7f]*$/.test(cli)) throw new Error("the CLI bundle is not ASCII-only: scripts/build/ascii-bundle.ts was skipped");
}

/** The repository's dist/ as it stands (each file's size and mtime), or "absent": compared at the end. */
async function distState(): Promise<string> {
  const dist = path.join(repo, "dist");
  const entries = await readdir(dist, { recursive: true }).catch(() => undefined);
  if (entries === undefined) return "absent";
  const lines = await Promise.all(entries.sort().map(async (entry) => {
    const info = await stat(path.join(dist, entry));
    return `${entry} ${info.size} ${info.mtimeMs}`;
  }));
  return lines.join("\n");
}

const distBefore = await distState();
/** Work started beside the steps (the Hardhat and Foundry installs): waited for before the temp folder goes. */
const background: Promise<unknown>[] = [];
try {
  process.stdout.write(`consumer project in ${project}\n`);
  await mkdir(project, { recursive: true });
  await mkdir(consumerTmp);
  await step("build (tsc and the CLI bundle) in a staging folder of this run's own, not dist/", buildStaged);
  const tarball = await step("npm pack", async () => {
    const { stdout } = await execa("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: stage });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; size: number; unpackedSize: number; entryCount: number }>;
    if (!packed) throw new Error(`npm pack said: ${stdout}`);
    const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
    process.stdout.write(`       the tarball: ${mb(packed.size)} (${mb(packed.unpackedSize)} unpacked, ${packed.entryCount} files)\n`);
    return path.join(work, packed.filename);
  });

  // The README's installs and node:test command as a new user runs them: from the machine's older Node
  // if it has one (issue 30, items 7-8: scripts/consumer/user-node.ts).
  const olderNode = await findOlderNode();
  const user = userNode("none" in olderNode ? undefined : olderNode, consumerTmp, inProject);
  const unsaid = user.commands.filter((command) => !readme.includes(command));
  if (unsaid.length > 0) throw new Error(`the docs (README.md, docs/*.md) do not give the commands run here ${user.label}: ${unsaid.join("; ")}`);
  await step(`npm init -y, then npm install the tarball (with vitest and typescript) into it ${user.label}`, async () => {
    // As the README's reader starts: npm's defaults (today "type": "commonjs"), nothing added.
    await inProject("npm", ["init", "-y"]);
    const devDependencies = [tarball, `vitest@${await version("vitest")}`, `typescript@${await version("typescript")}`];
    await user.install(project, devDependencies);
  });
  const entries = await entryPoints();
  // The Hardhat, Foundry and Playwright projects install (mostly npm's wait) beside the steps below; their own steps
  // await them. After the first install: on an older Node each puts node@22 in its own project first.
  const handed = { work, tarball, readme, inProject, version, user };
  const setups = {
    hardhat: wanted("hardhat") ? setupHardhat(handed) : undefined,
    foundry: wanted("foundry") ? setupFoundry(handed) : undefined,
    playwright: wanted("playwright") ? setupPlaywright(handed) : undefined,
  };
  for (const setup of Object.values(setups)) if (setup) background.push(setup.catch(() => undefined)); // awaited (and reported) by its step

  if (wanted("core")) {
    await step("the public types without @types/node (strict, nodenext): the client's need nothing, ours no Node global", async () => {
      if (await access(path.join(project, "node_modules", "@types", "node")).then(() => true, () => false)) {
        throw new Error("@types/node is installed already (by a dependency?): this check would prove nothing");
      }
      const importAll = (names: string[]) => `${names.map((name, i) => `import * as e${i} from ${JSON.stringify(name)};`).join("\n")}\nexport { ${names.map((_, i) => `e${i}`).join(", ")} };\n`;
      await writeFile(path.join(project, "client-types.ts"), importAll(["queue-devstack/client", "queue-devstack/vitest/global-setup"]));
      await writeFile(path.join(project, "all-types.ts"), importAll(entries));
      // tsc's program for that file, checking it and our declarations (viem's, which tsc checks too,
      // are viem's to keep; checking them was three quarters of the step's CPU: issue 42, item 7).
      const client = ownDiagnostics(project, ["--module", "nodenext", "--strict", "--noEmit", "client-types.ts"], { projectFiles: true });
      if (client.length > 0) throw new Error(`queue-devstack/client's types need more than the package brings:\n${client.join("\n")}`);
      // The other entry points need Node's types (the README says so) where they import node: modules,
      // as Fastify's and vitest's types do; but none of our declarations may lean on Node's ambient
      // globals (Buffer, NodeJS, process: "Cannot find name"), which a type-only import cannot show.
      // Only our declarations' diagnostics are read here, so only ours are checked (the others' need Node's types).
      const globals = ownDiagnostics(project, ["--module", "nodenext", "--strict", "--noEmit", "all-types.ts"]).filter((line) => /error TS(2304|2503|2580|2591):/.test(line));
      if (globals.length > 0) throw new Error(`the package's own .d.ts use Node's globals:\n${globals.join("\n")}`);
      await rm(path.join(project, "client-types.ts"));
      await rm(path.join(project, "all-types.ts"));
    });
  }
  await step("npm install @types/node (as the README's TypeScript note says)", async () => {
    await inProject("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", "-D", `@types/node@${await version("@types/node")}`]);
  });

  const files = readmeFiles();
  for (const name of ["example.test.ts", "vitest.config.mts", "stack.test.ts", "plain.mjs", "client.mjs", "actions.mjs"]) {
    if (!files.has(name)) throw new Error(`neither README.md nor docs/*.md has a code block for ${name}`);
  }
  await step(`write the documentation's files (${[...files.keys()].map((name) => `${name} from ${where.get(name)}`).join(", ")})`, async () => {
    for (const [name, text] of files) {
      await mkdir(path.dirname(path.join(project, name)), { recursive: true });
      await writeFile(path.join(project, name), text);
    }
    // What a reader writes: strict, nodenext, no `types` entry (every installed @types package counts);
    // the projects in folders of their own are not this one's.
    const folders = [...new Set([...files.keys()].filter((name) => name.includes("/")).map((name) => name.split("/")[0] as string))];
    const tsconfig = { compilerOptions: { module: "nodenext", strict: true, noEmit: true }, exclude: ["node_modules", ...folders] };
    await writeFile(path.join(project, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`);
  });

  if (wanted("core")) {
    // tsc -p .'s program, checking the project's files and our declarations (not other packages').
    await step("tsc -p . (strict, nodenext) in the consumer: its files and the package's declarations", async () => {
      const errors = ownDiagnostics(project, ["-p", "."], { projectFiles: true });
      if (errors.length > 0) throw new Error(`tsc -p . in the consumer:\n${errors.join("\n")}`);
    });
    await step("node plain.mjs (plain Node, compiled package)", () => inProject(process.execPath, ["plain.mjs"]));
    await step("node client.mjs (queue-devstack/client: proof files and a real proof)", () => inProject(process.execPath, ["client.mjs"]));
    await step("node actions.mjs (quote, action and finalize with the client library)", () => inProject(process.execPath, ["actions.mjs"]));
    // Two workers: each runs a file on its own stack, and stack.test.ts resets it for every test.
    await step("npx vitest run (the README's example tests, 2 workers), with no warning about its config", async () => {
      const all = text((await inProject("npx", ["vitest", "run", "--maxWorkers=2"], { env: { CI: "1" } })).all);
      // Vite's, for an ESM config file in a CommonJS package ("type": "commonjs" from npm init -y).
      const warning = all.split("\n").filter((line) => /loaded as CommonJS|Vite config uses features/.test(line));
      if (warning.length > 0) throw new Error(`vitest warned about the README's config:\n${warning.join("\n")}`);
    });

    const older = await findOlderNode();
    if ("none" in older) {
      process.stdout.write(`  skip every entry point under an older Node: ${older.none}\n`);
    } else {
      const expected = unsupportedNode(older.version) as string;
      await step(`every entry point under Node ${older.version} (${older.file}): the one-line refusal`, async () => {
        for (const entry of entries) {
          refusedInOneLine(`import "${entry}"`, await inProject(older.file, ["--input-type=module", "--eval", `import ${JSON.stringify(entry)};`], { reject: false, all: false }), expected);
        }
        const bin = path.join(project, "node_modules", ".bin", "queue-devstack");
        refusedInOneLine("queue-devstack --help", await inProject(older.file, [bin, "--help"], { reject: false, all: false }), expected);
      });
      await step(`vitest run of the README's project under Node ${older.version}: the one-line refusal, no stack trace`, async () => {
        const vitest = path.join(project, "node_modules", "vitest", "vitest.mjs");
        const run = await inProject(older.file, [vitest, "run"], { reject: false, env: { CI: "1" } });
        const traces = text(run.all).split("\n").filter((line) => /^\s+(at |❯ )|Error\b/.test(line));
        if (run.exitCode === 0 || !text(run.stderr).split("\n").includes(expected) || traces.length > 0) {
          throw new Error(`expected a failed run saying\n  ${expected}\nand no stack trace; got exit ${run.exitCode}:\n${text(run.all)}`);
        }
      });
    }

    // The summary's lines the README shows verbatim: the dev accounts' balance, and the deployer's.
    const summaryLines = [/^Funded dev accounts .*$/m, /^ {3}#0 \(anvil #0\) {2}0x\w+ {2}0x\w+ {2}\(deployed the fixtures.*\)$/m].map((pattern) => {
      const line = pattern.exec(readme)?.[0];
      if (line === undefined) throw new Error(`the summary shown in README.md and docs/*.md has no line matching ${pattern}`);
      return line;
    });

    // Ctrl-C in a terminal signals the whole foreground process group: each run is its own group here.
    // `to: "process"`: a CI script's `kill -INT $!`, to that PID alone (issue 30, item 4).
    async function startCli(file: string, args: string[], to: "group" | "process" = "group") {
      const cli = inProject(file, [...args, "--json", "--chain-port", "0", "--queue-port", "0"], { detached: true, reject: false, all: false });
      const info = await new Promise<{ queueUrl: string; stateDir: string; processes: { anvil: { pid: number } } }>((resolve, reject) => {
        let out = "";
        cli.stdout?.on("data", (d: Buffer) => ((out += d.toString()), out.includes("\n") && resolve(JSON.parse(out.split("\n")[0] as string))));
        void cli.then((r) => reject(new Error(`queue-devstack exited ${r.exitCode}: ${r.stderr}`)));
      });
      if ((await fetch(`${info.queueUrl}/api/queue/config`)).status !== 200) throw new Error("the queue did not serve its config");
      // The dashboard and htmx, served from the installed package and its dependencies (nothing from a CDN).
      for (const page of ["/api/dev/dashboard", "/api/dev/dashboard/assets/htmx.min.js", "/api/dev/dashboard/assets/sse.min.js"]) {
        if ((await fetch(`${info.queueUrl}${page}`)).status !== 200) throw new Error(`the stack did not serve ${page}`);
      }
      process.kill(to === "group" ? -(cli.pid as number) : (cli.pid as number), "SIGINT");
      const result = await cli;
      const left = (await listProcesses()).filter((p) => p.pid === info.processes.anvil.pid || p.args.includes(info.stateDir));
      if (left.length > 0) throw new Error(`left running: ${left.map((p) => `${p.pid} ${p.args}`).join("; ")}`);
      return result;
    }
    await step("queue-devstack --json (the installed bin), then Ctrl-C: exit 0, no process left, the summary as the README shows it", async () => {
      const result = await startCli(path.join(project, "node_modules", ".bin", "queue-devstack"), []);
      if (result.exitCode !== 0) throw new Error(`Ctrl-C: exit code ${result.exitCode} (${result.signal ?? "no signal"}), expected 0\n${result.stderr}`);
      const printed = text(result.stderr).split("\n");
      const missing = summaryLines.filter((line) => !printed.includes(line));
      if (missing.length > 0) throw new Error(`the README shows summary lines the CLI did not print:\n${missing.join("\n")}\nit printed:\n${text(result.stderr)}`);
    });
    await step("npx queue-devstack --json, then Ctrl-C: no process left (npx itself reports the interrupt)", async () => {
      await startCli("npx", ["queue-devstack"]);
    });
    await step("npx queue-devstack --json, then kill -INT of npx's PID alone: no process left", async () => {
      await startCli("npx", ["queue-devstack"], "process");
    });
    await step("npx vitest run of a test holding its worker's stack, then Ctrl-C: no process left", async () => {
      // Not a README file: a test that starts the worker's stack, says where its anvil is, and hangs.
      const dir = path.join(project, "interrupt");
      const infoFile = path.join(dir, "stack.json");
      await mkdir(dir);
      await writeFile(
        path.join(dir, "hang.test.ts"),
        [
          'import { writeFile } from "node:fs/promises";',
          'import { test } from "queue-devstack/vitest";',
          'test("holds the stack until interrupted", async ({ stack }) => {',
          `  await writeFile(${JSON.stringify(infoFile)}, JSON.stringify({ pid: stack.chainPid, stateDir: stack.stateDir }));`,
          "  await new Promise(() => {});",
          "}, 600_000);",
          "",
        ].join("\n"),
      );
      const run = inProject("npx", ["vitest", "run", "interrupt/"], { detached: true, reject: false, all: false, env: { CI: "1" } });
      const deadline = Date.now() + 60_000;
      for (;;) {
        const info = await readFile(infoFile, "utf8").catch(() => undefined);
        if (info !== undefined) {
          const held = JSON.parse(info) as { pid: number; stateDir: string };
          process.kill(-(run.pid as number), "SIGINT"); // Ctrl-C: the whole foreground group
          await run;
          // anvil is told (SIGTERM) the moment its worker goes; give it a moment to exit.
          let left: Awaited<ReturnType<typeof listProcesses>> = [];
          for (let waited = 0; waited < 5_000; waited += 100) {
            left = (await listProcesses()).filter((p) => p.pid === held.pid || p.args.includes(held.stateDir));
            if (left.length === 0) break;
            await new Promise((r) => setTimeout(r, 100));
          }
          if (left.length > 0) throw new Error(`left running: ${left.map((p) => `${p.pid} ${p.args}`).join("; ")}`);
          break;
        }
        if (Date.now() > deadline) throw new Error("the test never started its stack");
        await new Promise((r) => setTimeout(r, 100));
      }
    });
  }
  if (wanted("exec")) await execConsumer({ project, work, files, step, inProject, user });
  if (setups.hardhat) await hardhatConsumer({ ...handed, tmp: consumerTmp, step }, setups.hardhat);
  if (setups.foundry) await foundryConsumer({ ...handed, tmp: consumerTmp, step }, setups.foundry);
  if (wanted("threads")) await threadsConsumer({ project, step, inProject });
  if (wanted("sources")) await fixtureSourcesConsumer({ project, readme, step, inProject, version, user });
  if (wanted("bisect")) await bisectConsumer({ project, files, step, inProject, version, user });
  if (setups.playwright) await playwrightConsumer({ ...handed, tmp: consumerTmp, step }, setups.playwright);
  await step("the repository's dist/ is as it was (built elsewhere, never written)", async () => {
    if ((await distState()) !== distBefore) throw new Error("dist/ changed during the run: this run must not write it (or someone else built meanwhile)");
  });
  process.stdout.write("the installed package works\n");
} catch (error) {
  const { all, message } = error as { all?: string; message: string };
  process.stderr.write(`${all ?? message}\n`);
  process.exitCode = 1;
} finally {
  // A failed step may have left a run going: stop the process groups started here, by their PIDs.
  for (const pid of running) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await Promise.all(background); // a step that failed early leaves them writing in work/
  await rm(work, { recursive: true, force: true });
}
