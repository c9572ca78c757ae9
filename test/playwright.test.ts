import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { execa } from "execa";
import { createPublicClient, http } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { withStacks } from "./support/stacks.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

const tempDir = withTempDirs();
const startStack = withStacks();
const docsFolders: string[] = [];
afterAll(() => Promise.all(docsFolders.splice(0).map((folder) => rm(folder, { recursive: true, force: true }))));

interface ReportStep {
  title: string;
  steps?: ReportStep[];
}
interface ReportTest {
  results: Array<{ status: string; attachments: Array<{ name: string; path?: string; body?: string }>; steps: ReportStep[] }>;
}
interface ReportSuite {
  title: string;
  specs: Array<{ title: string; tests: ReportTest[] }>;
  suites?: ReportSuite[];
}

function specsOf(suites: ReportSuite[], file = ""): Array<{ file: string; title: string; result: ReportTest["results"][number] }> {
  return suites.flatMap((suite) => {
    const at = file || suite.title;
    return [...suite.specs.map((spec) => ({ file: at, title: spec.title, result: spec.tests[0]!.results.at(-1)! })), ...specsOf(suite.suites ?? [], at)];
  });
}

/**
 * docs/playwright.md's example project (its `playwright-project/…` code blocks), written where its bare
 * imports resolve from this repository's node_modules (a folder of the git-ignored test-results/, removed
 * after), importing queue-devstack/playwright from source.
 */
async function docsProject(): Promise<string> {
  await mkdir("test-results", { recursive: true });
  const folder = await mkdtemp(path.resolve("test-results", "playwright-docs-"));
  docsFolders.push(folder);
  const page = await readFile("docs/playwright.md", "utf8");
  const blocks = [...page.matchAll(/^```ts playwright-project\/([\w./-]+)\n([\s\S]*?)^```$/gm)];
  expect(blocks.map((block) => block[1])).toEqual(["playwright.config.ts", "tests/pay.e2e.ts"]);
  for (const [, name, text] of blocks) {
    await mkdir(path.dirname(path.join(folder, name!)), { recursive: true });
    await writeFile(path.join(folder, name!), text!.replaceAll('"queue-devstack/playwright"', JSON.stringify(path.resolve("harness/playwright/index.ts"))));
  }
  return folder;
}

const stepTitles = (steps: ReportStep[]): string[] => steps.flatMap((step) => [step.title, ...stepTitles(step.steps ?? [])]);

// queue-devstack/playwright in a real Playwright Test run: Debian's Chromium, two workers, each with its
// own stack; an app page on a loopback origin finds the test wallet by EIP-6963 (test/fixtures/playwright/).
describe("queue-devstack/playwright", () => {
  it("the wallet's specs and the docs' example pass on a stack per worker, and a failing test brings its stack home", async () => {
    const outputDir = await tempDir("playwright-");
    const docs = await docsProject();
    const run = await execa(process.execPath, ["node_modules/@playwright/test/cli.js", "test", "--config", "test/fixtures/playwright/playwright.config.ts"], {
      reject: false,
      all: true,
      // Playwright's transform cache in the run's folder, not the machine's /tmp.
      env: { CI: "1", PLAYWRIGHT_OUTPUT_DIR: outputDir, PLAYWRIGHT_DOCS_PROJECT: docs, PLAYWRIGHT_TRANSFORM_CACHE_DIR: path.join(outputDir, "cache") },
    });
    const report = JSON.parse(await readFile(path.join(outputDir, "report.json"), "utf8")) as { suites: ReportSuite[]; errors: unknown[] };
    const specs = specsOf(report.suites);
    const failed = specs.filter((spec) => spec.result.status !== "passed");
    expect(failed.map((spec) => spec.title), run.all).toEqual(["fails after a send"]);
    expect(run.exitCode).toBe(1);
    expect(specs.filter((spec) => spec.file.startsWith("wallet")).length).toBe(14);
    // The docs' example project: its file is named from the config's folder.
    expect(specs.filter((spec) => spec.file.endsWith("/tests/pay.e2e.ts")).map((spec) => spec.title)).toEqual(["connects and pays", "signs a message the app can verify", "shows the wallet's prompt, then the person's rejection", "refuses to pay on another chain"]);

    // Each of the wallet's steps is a named step in the trace: the test's own, and an approval the app asked for.
    const held = specs.find((spec) => spec.title.startsWith("wallet.hold()"))!;
    expect(stepTitles(held.result.steps)).toEqual(expect.arrayContaining(["wallet: hold requests", "wallet: reject eth_sendTransaction"]));
    const sent = specs.find((spec) => spec.title === "eth_sendTransaction is mined on the stack")!;
    expect(stepTitles(sent.result.steps).some((title) => /^wallet: approves eth_sendTransaction \(from http:\/\/127\.0\.0\.1:\d+\)$/.test(title))).toBe(true);

    // The failing test's report: the stack's diagnostics, the wallet's answers, and the stack as a bundle.
    const { attachments } = failed[0]!.result;
    expect(attachments.map((a) => a.name)).toEqual(expect.arrayContaining(["queue-devstack diagnostics", "queue-devstack wallet", "queue-devstack bundle"]));
    const diagnostics = Buffer.from(attachments.find((a) => a.name === "queue-devstack diagnostics")!.body!, "base64").toString();
    expect(diagnostics).toMatch(/anvil's last lines:\n(  .*\n)*  eth_sendRawTransaction/);
    const walletLog = JSON.parse(Buffer.from(attachments.find((a) => a.name === "queue-devstack wallet")!.body!, "base64").toString()) as Array<{ method: string }>;
    expect(walletLog.map((entry) => entry.method)).toContain("eth_sendTransaction");

    // The bundle starts a stack with the failing test's send in it.
    const stack = await startStack({ load: attachments.find((a) => a.name === "queue-devstack bundle")!.path! });
    expect(await createPublicClient({ transport: http(stack.rpcUrl) }).getBalance({ address: "0x00000000000000000000000000000000000be11e" })).toBe(42n);
  });
});
