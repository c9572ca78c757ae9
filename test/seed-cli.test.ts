import { execa } from "execa";
import { afterAll, expect, it } from "vitest";
import { StackInfo } from "../harness/stack-info/index.ts";
import { alive } from "./support/processes.ts";
import { withTempDirs } from "./support/temp-dirs.ts";
import { builtCli } from "./support/cli.ts";

// `queue-devstack --seed demo` (issue 41, item 4): one launch, on dev proofs, whose dashboard shows every
// operation state. Its own file: the CLI's other tests are in dev-stack-cli.test.ts.
const tempDir = withTempDirs();
const CLI = builtCli();
let anvil: number | undefined;
afterAll(() => {
  if (anvil !== undefined && alive(anvil)) process.kill(anvil, "SIGKILL");
});

it("--seed demo: ready once seeded, the summary names what it made, the dashboard's feed shows every state; an unknown scenario is a usage error", async () => {
  const refused = await execa(process.execPath, [...CLI, "--seed", "nope"], { reject: false });
  expect(refused.exitCode).toBe(2);
  expect(refused.stderr).toContain(`--seed: seed "nope": no such scenario (known: demo)`);

  const child = execa(process.execPath, [...CLI, "--chain-port", "0", "--queue-port", "0", "--state-dir", await tempDir("devstack-seed-cli-"), "--proofs", "dev", "--json", "--seed", "demo"], { reject: false });
  try {
    let stdout = "";
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout?.on("data", (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes("\n")) resolve(stdout.split("\n")[0] as string);
      });
      void child.then((r) => reject(new Error(`dev-stack exited ${r.exitCode} before ready:\n${r.stderr}`)));
    });
    const info = StackInfo.parse(JSON.parse(line));
    anvil = info.processes.anvil.pid;
    const feed = await (await fetch(`${info.queueUrl}/api/dev/dashboard/ops`)).text();
    for (const state of ["accepted", "submitted", "included", "confirmed", "reverted", "rejected", "expired"]) expect(feed, state).toMatch(new RegExp(`class="op" data-state="${state}"`));
  } finally {
    child.kill("SIGTERM");
    const ended = await child;
    expect(ended.stderr).toMatch(/seed demo +\d+ ms +one operation per state; relayer paused, mining held/);
    expect(ended.stderr).toMatch(/SEEDED +demo: accepted op_[0-9a-f]+, submitted op_/);
  }
});
