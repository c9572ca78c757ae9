// The consumer test's Playwright part (issue 41, item 7): docs/playwright.md's example project, made
// from the packed tarball in a folder of its own (outside the consumer project, whose tsc and vitest
// must not see it), with @playwright/test and viem, in Debian's Chromium (nothing downloaded: the docs'
// config takes /usr/bin/chromium, or CHROMIUM_PATH), type-checked. `npx playwright test` runs it with two workers;
// then the example app's suite, and its failing test's bundle (./example-app.ts). Nothing is left
// running, and no stack's temp folder.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Options } from "execa";
import type { HardhatConsumer } from "./hardhat.ts";
import { exampleAppConsumer, setupExampleApp } from "./example-app.ts";
import { folderFiles, writeFolderFiles } from "./folder-files.ts";
import { passesOnTwoWorkers } from "./playwright-run.ts";

/** What the consumer test hands over: as to the Hardhat part (its TMPDIR also holds Chromium's profiles). */
export type PlaywrightConsumer = HardhatConsumer;

/** The docs' files are named under this folder (```ts playwright-project/playwright.config.ts). */
const FOLDER = "playwright-project";
/** The docs' project and the example app, each with its install: no stack, so in the background beside the consumer's first steps. */
export async function setupPlaywright(handed: Omit<PlaywrightConsumer, "tmp" | "step">): Promise<void> {
  // Side by side; a failure waits for the other (the run's clean-up must not meet an install under way).
  const results = await Promise.allSettled([setupDocsProject(handed), setupExampleApp(handed)]);
  for (const result of results) if (result.status === "rejected") throw result.reason;
}

async function setupDocsProject({ work, tarball, readme, inProject, version, user }: Omit<PlaywrightConsumer, "tmp" | "step">): Promise<void> {
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
  // skipLibCheck as `tsc --init` writes it: the package's own declarations are checked without it in the
  // main consumer project (test-package.ts); here, the reader's files against them (issue 42, item 7).
  const tsconfig = { compilerOptions: { module: "nodenext", target: "es2022", strict: true, noEmit: true, skipLibCheck: true }, include: ["playwright.config.ts", "tests"] };
  await writeFile(path.join(dir, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`);
  await inProject("npx", ["tsc", "-p", "."], { cwd: dir, env: user.env, extendEnv: false });
}

export async function playwrightConsumer(handed: PlaywrightConsumer, setup: Promise<void>): Promise<void> {
  const { work, tmp, readme, step, inProject, user } = handed;
  const dir = path.join(work, FOLDER);
  const inDir = (file: string, args: string[], options: Options = {}) => inProject(file, args, { cwd: dir, env: user.env, extendEnv: false, ...options });
  const exampleTests = folderFiles(readme, FOLDER).get("tests/pay.e2e.ts")?.match(/^test\(/gm)?.length ?? 0;

  await step(`docs/playwright.md's project in ${FOLDER}/ and docs/example-app out of the tarball in example-app/, ${user.label}: npm install the tarball, @playwright/test and viem, no browser, no bundler; tsc (in the background since the first install)`, () => setup);

  const env = { CI: "1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" };
  await step("npx playwright test (the docs' example, 2 workers, Debian's Chromium): passes, no process and no temp folder left", () =>
    passesOnTwoWorkers({ inDir, dir, tmp, env: { ...user.env, ...env }, tests: exampleTests }),
  );
  await exampleAppConsumer(handed);
}
