// The consumer test's Playwright part (issue 41, item 7): docs/playwright.md's example project, made
// from the packed tarball in a folder of its own (outside the consumer project, whose tsc and vitest
// must not see it), with @playwright/test and viem, in Debian's Chromium (nothing downloaded: the docs'
// config takes /usr/bin/chromium, or CHROMIUM_PATH), type-checked. `npx playwright test` runs it with two workers;
// then a test failing on purpose, written here (the docs' example stays a user's first one), whose
// attached bundle starts with `npx queue-devstack --load` and is stopped. Nothing is left running,
// and no stack's temp folder.
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Options } from "execa";
import { jsonRpc } from "../../harness/chain/index.ts";
import { listProcesses } from "../../harness/process/index.ts";
import type { HardhatConsumer } from "./hardhat.ts";
import { folderFiles, writeFolderFiles } from "./folder-files.ts";

/** What the consumer test hands over: as to the Hardhat part (its TMPDIR also holds Chromium's profiles). */
export type PlaywrightConsumer = HardhatConsumer;

/** The docs' files are named under this folder (```ts playwright-project/playwright.config.ts). */
const FOLDER = "playwright-project";
/** The test failing on purpose: where it sends, and how much, so its bundle can be recognised. */
const PAYEE = "0x00000000000000000000000000000000000be11e";
const FAILING = [
  'import { expect, test } from "queue-devstack/playwright";',
  'test("fails after a send", async ({ stack }) => {',
  "  const send = { from: stack.accounts[1]!.address, to: " + JSON.stringify(PAYEE) + ', value: "0x2a" };',
  '  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_sendTransaction", params: [send] });',
  '  await fetch(stack.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body });',
  '  expect("the test", "fails on purpose: its stack is attached").toBe("passing");',
  "});",
  "",
].join("\n");

/** The path of the bundle attached in Playwright's JSON report, wherever it stands in its suites. */
function attachedBundle(report: unknown): string | undefined {
  if (typeof report !== "object" || report === null) return undefined;
  const { name, path: file } = report as { name?: unknown; path?: unknown };
  if (name === "queue-devstack bundle" && typeof file === "string") return file;
  for (const value of Object.values(report)) {
    const found = attachedBundle(value);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The docs' files and the project's install: no stack, so it runs in the background beside the consumer's first steps. */
export async function setupPlaywright({ work, tarball, readme, inProject, version, user }: Omit<PlaywrightConsumer, "tmp" | "step">): Promise<void> {
  const dir = path.join(work, FOLDER);
  const files = folderFiles(readme, FOLDER);
  for (const name of ["playwright.config.ts", "tests/pay.e2e.ts"]) if (!files.has(name)) throw new Error(`the docs have no code block for ${FOLDER}/${name}`);
  if (!readme.includes("npm install -D ./queue-devstack-0.1.0.tgz @playwright/test viem")) throw new Error("the docs do not give the install run here");
  await mkdir(dir);
  await writeFile(path.join(dir, "package.json"), `${JSON.stringify({ name: FOLDER, private: true }, null, 2)}\n`);
  await writeFolderFiles(dir, files);
  // TypeScript and Node's types as a reader's TypeScript project has them: the docs' files type-check.
  const packages = [tarball, "@playwright/test", "viem", "typescript", "@types/node"];
  await user.install(dir, await Promise.all(packages.map(async (name) => (name === tarball ? name : `${name}@${await version(name)}`))));
  const tsconfig = { compilerOptions: { module: "nodenext", target: "es2022", strict: true, noEmit: true }, include: ["playwright.config.ts", "tests"] };
  await writeFile(path.join(dir, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`);
  await inProject("npx", ["tsc", "-p", "."], { cwd: dir, env: user.env, extendEnv: false });
}

export async function playwrightConsumer({ work, tmp, readme, step, inProject, user }: PlaywrightConsumer, setup: Promise<void>): Promise<void> {
  const dir = path.join(work, FOLDER);
  const inDir = (file: string, args: string[], options: Options = {}) => inProject(file, args, { cwd: dir, env: user.env, extendEnv: false, ...options });
  // Stacks' state dirs and Chromium's profiles are made in TMPDIR; Playwright's transform cache stays (removed with it).
  const madeInTmp = async () => (await readdir(tmp)).filter((name) => /^(queue-devstack-|playwright_chromium)/.test(name));
  const before = new Set(await madeInTmp());
  const leftBehind = async () => [
    ...(await listProcesses()).filter((p) => p.args.includes(dir) || p.args.includes(tmp)).map((p) => `${p.pid} ${p.args}`),
    ...(await madeInTmp()).filter((name) => !before.has(name)),
  ];
  const exampleTests = folderFiles(readme, FOLDER).get("tests/pay.e2e.ts")?.match(/^test\(/gm)?.length ?? 0;

  await step(`docs/playwright.md's project in ${FOLDER}/, ${user.label}: npm install the tarball, @playwright/test and viem, no browser; tsc (in the background since the first install)`, () => setup);

  const env = { CI: "1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" };
  await step("npx playwright test (the docs' example, 2 workers, Debian's Chromium): passes, no process and no temp folder left", async () => {
    const run = await inDir("npx", ["playwright", "test", "--reporter=line"], { reject: false, timeout: 180_000, env: { ...user.env, ...env } });
    const all = String(run.all ?? "");
    // A run that found fewer tests would pass too: the docs' tests must be the passes, on two workers.
    if (run.exitCode !== 0 || !new RegExp(`Running ${exampleTests} tests using 2 workers`).test(all) || !new RegExp(`\\b${exampleTests} passed\\b`).test(all)) {
      throw new Error(`npx playwright test: exit ${run.exitCode}\n${all}`);
    }
    const left = await leftBehind();
    if (left.length > 0) throw new Error(`left behind: ${left.join("; ")}`);
  });

  await step("a failing test's attached bundle: npx queue-devstack --load it answers ready with the test's send, then Ctrl-C leaves nothing", async () => {
    await writeFile(path.join(dir, "tests", "brings-home.e2e.ts"), FAILING);
    const report = path.join(dir, "report.json");
    const run = await inDir("npx", ["playwright", "test", "--reporter=line,json", "brings-home"], { reject: false, timeout: 120_000, env: { ...user.env, ...env, PLAYWRIGHT_JSON_OUTPUT_NAME: report }, all: true });
    await rm(path.join(dir, "tests", "brings-home.e2e.ts"));
    const bundle = attachedBundle(JSON.parse(await readFile(report, "utf8").catch(() => "null")));
    if (run.exitCode !== 1 || bundle === undefined) throw new Error(`expected a failed run with a bundle attached; exit ${run.exitCode}\n${String(run.all ?? "")}`);

    const cli = inDir("npx", ["queue-devstack", "--load", bundle, "--json", "--chain-port", "0", "--queue-port", "0"], { detached: true, reject: false, all: false });
    const info = await new Promise<{ rpcUrl: string; queueUrl: string; stateDir: string; processes: { anvil: { pid: number } } }>((resolve, reject) => {
      let out = "";
      cli.stdout?.on("data", (d: Buffer) => ((out += d.toString()), out.includes("\n") && resolve(JSON.parse(out.split("\n")[0] as string))));
      void cli.then((r) => reject(new Error(`queue-devstack --load exited ${r.exitCode}: ${String(r.stderr)}`)));
    });
    try {
      if ((await fetch(`${info.queueUrl}/api/queue/config`)).status !== 200) throw new Error("the loaded stack did not serve its config");
      const balance = await jsonRpc<string>(info.rpcUrl, "eth_getBalance", [PAYEE, "latest"]);
      if (BigInt(balance) !== 42n) throw new Error(`the loaded stack has not the failing test's send: ${PAYEE} holds ${balance}`);
    } finally {
      process.kill(-(cli.pid as number), "SIGINT"); // Ctrl-C
      await cli;
    }
    const left = [...(await leftBehind()), ...(await listProcesses()).filter((p) => p.pid === info.processes.anvil.pid || p.args.includes(info.stateDir)).map((p) => `${p.pid} ${p.args}`)];
    if (left.length > 0) throw new Error(`left behind: ${left.join("; ")}`);
  });
}
