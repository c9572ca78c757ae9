// The package as another project uses it: `npm pack` here, the tarball installed into a new project
// outside the repository, and there, with nothing of this repository on hand: the README's example
// files (code blocks that name a file) type-checked by the consumer's strict tsc and run with plain
// Node and with vitest, and `npx queue-devstack --json` stopped with Ctrl-C, leaving no process.
// A file missing from the package fails here. Run by `npm test`.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa, type Options } from "execa";
import { listProcesses } from "../harness/process/index.ts";

const repo = path.resolve(import.meta.dirname, "..");
const work = await mkdtemp(path.join(tmpdir(), "queue-devstack-consumer-"));
const project = path.join(work, "project");
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

const inProject = (file: string, args: string[], options: Options = {}) => execa(file, args, { cwd: project, all: true, ...options });

/** The README's code blocks whose info string names a file (```ts example.test.ts), by file name. */
async function readmeFiles(): Promise<Map<string, string>> {
  const readme = await readFile(path.join(repo, "README.md"), "utf8");
  const files = new Map<string, string>();
  for (const match of readme.matchAll(/^```\w+ ([\w.-]+)\n([\s\S]*?)^```$/gm)) files.set(match[1] as string, match[2] as string);
  return files;
}

try {
  process.stdout.write(`consumer project in ${project}\n`);
  const tarball = await step("npm pack (builds dist/)", async () => {
    const { stdout } = await execa("npm", ["pack", "--pack-destination", work, "--silent"], { cwd: repo });
    return path.join(work, stdout.trim().split("\n").at(-1) as string);
  });

  await step("npm install the tarball into a new project", async () => {
    await execa("mkdir", ["-p", project]);
    await writeFile(path.join(project, "package.json"), `${JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2)}\n`);
    const devDependencies = [tarball, `vitest@${await version("vitest")}`, `typescript@${await version("typescript")}`, `@types/node@${await version("@types/node")}`];
    await inProject("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", "-D", ...devDependencies]);
  });

  const files = await readmeFiles();
  for (const name of ["example.test.ts", "stack.test.ts", "plain.mjs", "client.mjs", "actions.mjs"]) {
    if (!files.has(name)) throw new Error(`README.md has no code block for ${name}`);
  }
  await step(`write the README's files (${[...files.keys()].join(", ")})`, async () => {
    for (const [name, text] of files) await writeFile(path.join(project, name), text);
    // What `tsc --init` gives a new project, strict: our .d.ts must hold up under it.
    const tsconfig = { compilerOptions: { target: "ES2023", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, types: ["node"] }, include: ["*.ts"] };
    await writeFile(path.join(project, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`);
  });

  await step("tsc --noEmit (strict) in the consumer", () => inProject("npx", ["tsc", "-p", "."]));
  await step("node plain.mjs (plain Node, compiled package)", () => inProject(process.execPath, ["plain.mjs"]));
  await step("node client.mjs (queue-devstack/client: proof files and a real proof)", () => inProject(process.execPath, ["client.mjs"]));
  await step("node actions.mjs (quote, action and finalize with the client library)", () => inProject(process.execPath, ["actions.mjs"]));
  // Two workers: each runs a file on its own stack, and stack.test.ts resets it for every test.
  await step("npx vitest run (the README's example tests, 2 workers)", () => inProject("npx", ["vitest", "run", "--maxWorkers=2"], { env: { CI: "1" } }));

  // Ctrl-C in a terminal signals the whole foreground process group: each run is its own group here.
  async function startCli(file: string, args: string[]) {
    const cli = inProject(file, [...args, "--json", "--chain-port", "0", "--queue-port", "0"], { detached: true, reject: false, all: false });
    const info = await new Promise<{ queueUrl: string; stateDir: string; processes: { anvil: { pid: number } } }>((resolve, reject) => {
      let out = "";
      cli.stdout?.on("data", (d: Buffer) => ((out += d.toString()), out.includes("\n") && resolve(JSON.parse(out.split("\n")[0] as string))));
      void cli.then((r) => reject(new Error(`queue-devstack exited ${r.exitCode}: ${r.stderr}`)));
    });
    if ((await fetch(`${info.queueUrl}/api/queue/config`)).status !== 200) throw new Error("the queue did not serve its config");
    process.kill(-(cli.pid as number), "SIGINT");
    const result = await cli;
    const left = (await listProcesses()).filter((p) => p.pid === info.processes.anvil.pid || p.args.includes(info.stateDir));
    if (left.length > 0) throw new Error(`left running: ${left.map((p) => `${p.pid} ${p.args}`).join("; ")}`);
    return result;
  }
  await step("queue-devstack --json (the installed bin), then Ctrl-C: exit 0, no process left", async () => {
    const result = await startCli(path.join(project, "node_modules", ".bin", "queue-devstack"), []);
    if (result.exitCode !== 0) throw new Error(`Ctrl-C: exit code ${result.exitCode} (${result.signal ?? "no signal"}), expected 0\n${result.stderr}`);
  });
  await step("npx queue-devstack --json, then Ctrl-C: no process left (npx itself reports the interrupt)", async () => {
    await startCli("npx", ["queue-devstack"]);
  });
  await step("npx vitest run of a test holding its worker's stack, then Ctrl-C: no process left", async () => {
    // Not a README file: a test that starts the worker's stack, says where its anvil is, and hangs.
    const dir = path.join(project, "interrupt");
    const infoFile = path.join(dir, "stack.json");
    await execa("mkdir", ["-p", dir]);
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
      if (Date.now() > deadline) throw new Error(`the test never started its stack: ${(await run).stdout}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  process.stdout.write("the installed package works\n");
  await rm(work, { recursive: true, force: true });
} catch (error) {
  const { all, message } = error as { all?: string; message: string };
  process.stderr.write(`${all ?? message}\n(consumer project left in ${project})\n`);
  process.exitCode = 1;
}
