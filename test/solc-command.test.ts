import { execa } from "execa";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { withTempDirs } from "./support/temp-dirs.ts";

// `queue-devstack-solc` (scripts/cli/solc-command.ts, shipped as a bin): what forge asks of a native solc
// given as FOUNDRY_SOLC (issue 30, item 9). The consumer test runs forge itself with it, offline.
const COMMAND = path.resolve(import.meta.dirname, "..", "scripts", "cli", "solc-command.ts");
const solc = (args: string[], input?: string) =>
  execa(process.execPath, ["--experimental-strip-types", "--no-warnings=ExperimentalWarning", COMMAND, ...args], { reject: false, ...(input === undefined ? {} : { input }) });
const tempDir = withTempDirs();

describe("queue-devstack-solc", () => {
  it("says its version as a native solc does: the last line, which forge parses", async () => {
    const { exitCode, stdout } = await solc(["--version"]);
    expect(exitCode).toBe(0);
    expect(stdout.split("\n").at(-1)).toMatch(/^Version: 0\.8\.\d+\+commit\.[0-9a-f]{8}/);
  });

  it("compiles forge's standard JSON, reading an import forge left out from its include path", async () => {
    const dir = await tempDir("solc-command-");
    await mkdir(path.join(dir, "lib"));
    await writeFile(path.join(dir, "lib", "Two.sol"), "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\nlibrary Two { function two() internal pure returns (uint256) { return 2; } }\n");
    const input = {
      language: "Solidity",
      sources: { "src/A.sol": { content: '// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\nimport "Two.sol";\ncontract A { function f() external pure returns (uint256) { return Two.two(); } }\n' } },
      settings: { outputSelection: { "*": { "*": ["evm.bytecode.object"] } } },
    };
    const args = ["--allow-paths", dir, "--base-path", dir, "--include-path", path.join(dir, "lib"), "--standard-json"];
    const { exitCode, stdout } = await solc(args, JSON.stringify(input));
    expect(exitCode).toBe(0);
    const output = JSON.parse(stdout) as { errors?: Array<{ severity: string; message: string }>; contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>> };
    expect(output.errors?.filter((e) => e.severity === "error") ?? []).toEqual([]);
    expect(output.contracts["src/A.sol"]?.A?.evm.bytecode.object).toMatch(/^[0-9a-f]{100,}$/);
  });

  it("refuses what it does not answer, saying what it is for", async () => {
    const { exitCode, stderr } = await solc(["--bin", "A.sol"]);
    expect(exitCode).toBe(1);
    expect(stderr).toContain("only --version and --standard-json are supported");
    expect(stderr).toContain("FOUNDRY_SOLC=");
  });
});
