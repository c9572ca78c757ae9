// The consumer test's example app (issue 41, item 7): docs/example-app as a reader takes it, the folder
// the packed tarball ships, installed with the tarball, @playwright/test and viem (no browser, no
// bundler), type-checked; its suite with two workers in Debian's Chromium; then a test failing on
// purpose, written here (the folder's suite stays green), whose attached bundle starts with
// `npx queue-devstack --load` and is stopped. Nothing is left running, and no stack's temp folder.
import { mkdtemp, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Options } from "execa";
import { jsonRpc } from "../../harness/chain/index.ts";
import { listProcesses } from "../../harness/process/index.ts";
import type { HardhatConsumer } from "./hardhat.ts";
import { leftBehind, madeInTmp, passesOnTwoWorkers } from "./playwright-run.ts";

/** What the consumer test hands over: as to the Hardhat part (its TMPDIR also holds Chromium's profiles). */
export type ExampleAppConsumer = HardhatConsumer;

const FOLDER = "example-app";
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

/** The folder out of the tarball, and its install (as the docs say), then tsc: no stack, so in the background beside the first steps. */
export async function setupExampleApp({ work, tarball, readme, inProject, version, user }: Omit<ExampleAppConsumer, "tmp" | "step">): Promise<void> {
  if (!readme.includes("npm install -D ./queue-devstack-0.1.0.tgz @playwright/test viem")) throw new Error("the docs do not give the install run here");
  const dir = path.join(work, FOLDER);
  const unpacked = await mkdtemp(path.join(work, "unpacked-"));
  await inProject("tar", ["-xzf", tarball, "-C", unpacked, "package/docs/example-app"]);
  await rename(path.join(unpacked, "package", "docs", "example-app"), dir);
  await rm(unpacked, { recursive: true });
  // TypeScript and Node's types for the tsc below only: the app itself runs without them.
  const packages = [tarball, "@playwright/test", "viem", "typescript", "@types/node"];
  await user.install(dir, await Promise.all(packages.map(async (name) => (name === tarball ? name : `${name}@${await version(name)}`))));
  await inProject("npx", ["tsc", "-p", "."], { cwd: dir, env: user.env, extendEnv: false });
}

/** After setupExampleApp (awaited by the Playwright part's install step). */
export async function exampleAppConsumer({ work, tmp, step, inProject, user }: ExampleAppConsumer): Promise<void> {
  const dir = path.join(work, FOLDER);
  const inDir = (file: string, args: string[], options: Options = {}) => inProject(file, args, { cwd: dir, env: user.env, extendEnv: false, ...options });
  const before = new Set(await madeInTmp(tmp));
  const env = { CI: "1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" };

  await step("npx playwright test (the example app's suite, 2 workers, Debian's Chromium): passes, no process and no temp folder left", async () => {
    const files = (await readdir(path.join(dir, "tests"))).filter((name) => name.endsWith(".e2e.ts"));
    const texts = await Promise.all(files.map((name) => readFile(path.join(dir, "tests", name), "utf8")));
    const tests = texts.reduce((count, text) => count + (text.match(/^test\(/gm)?.length ?? 0), 0);
    await passesOnTwoWorkers({ inDir, dir, tmp, env: { ...user.env, ...env }, tests });
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
    const left = [...(await leftBehind(dir, tmp, before)), ...(await listProcesses()).filter((p) => p.pid === info.processes.anvil.pid || p.args.includes(info.stateDir)).map((p) => `${p.pid} ${p.args}`)];
    if (left.length > 0) throw new Error(`left behind: ${left.join("; ")}`);
  });
}
