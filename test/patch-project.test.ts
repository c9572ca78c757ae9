import { cp, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { DevStack } from "../harness/index.ts";
import { foundryProfile, solidityProject } from "../harness/patch/index.ts";
import { VARIANTS_PATH } from "./support/patch-variants.ts";
import { withQueueStack } from "./support/queue-stack.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

// Issue 40, item 3: a .sol patch's imports are found from its project's root as forge and Hardhat find it
// (foundry.toml with its remappings and libs, remappings.txt, hardhat.config.*, package.json), not only
// from a package.json's folder: a Foundry project's `../` imports and remapped imports compile.
const tempDir = withTempDirs();
const CONTRACTS = path.resolve("contracts-fixtures/contracts");
const OPENZEPPELIN = path.resolve("node_modules/@openzeppelin/contracts");

async function files(dir: string, content: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(content)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), text);
  }
}

/** ReceiveDirectory.sol, its import of AccountRegistry.sol rewritten: a small compile that needs it. */
const directory = async (from: string) => (await readFile(path.join(CONTRACTS, "ReceiveDirectory.sol"), "utf8")).replace('from "./AccountRegistry.sol"', `from "${from}"`);

describe("a .sol file's project", () => {
  it("is the nearest folder with foundry.toml, remappings.txt, hardhat.config.* or package.json, else the git root, else the filesystem's root", async () => {
    const dir = await tempDir("devstack-project-");
    await files(dir, { "npm/package.json": "{}", "npm/forge/foundry.toml": "", "npm/forge/src/A.sol": "", "npm/hh/hardhat.config.ts": "", "npm/hh/contracts/A.sol": "", "npm/other/A.sol": "", "txt/remappings.txt": "", "txt/src/A.sol": "", "git/.git/HEAD": "", "git/src/A.sol": "", "none/a/A.sol": "" });
    const root = (file: string) => solidityProject(path.join(dir, file));
    expect(root("npm/forge/src/A.sol")).toMatchObject({ root: path.join(dir, "npm/forge"), marker: "foundry.toml" });
    expect(root("npm/hh/contracts/A.sol")).toMatchObject({ root: path.join(dir, "npm/hh"), marker: "hardhat.config.ts" });
    expect(root("npm/other/A.sol")).toMatchObject({ root: path.join(dir, "npm"), marker: "package.json" });
    expect(root("txt/src/A.sol")).toMatchObject({ root: path.join(dir, "txt"), marker: "remappings.txt" });
    expect(root("git/src/A.sol")).toMatchObject({ root: path.join(dir, "git"), marker: ".git" });
    expect(root("none/a/A.sol")).toMatchObject({ root: "/", marker: "/" });
  });

  it("has foundry.toml's remappings and libs, remappings.txt's first; targets inside the root relative to it", async () => {
    const dir = await tempDir("devstack-project-");
    await files(dir, {
      "foundry.toml": [
        "[profile.default]",
        'src = "src" # a comment',
        "libs = ['lib', \"deps\"]",
        "remappings = [",
        '  "forge-std/=lib/forge-std/src/", # the usual',
        `  "@oz/=${path.join(dir, "deps", "oz")}",`,
        '  "src/thing/:dep/=./deps/dep/",',
        "]",
        "[profile.ci]",
        'remappings = ["ci/=ci/"]',
        "[fmt]",
        'remappings = ["not/=a-profile/"]',
      ].join("\n"),
      "remappings.txt": "# forge remappings > remappings.txt\nforge-std/=lib/forge-std-fork/src/\n\nsolmate/=/elsewhere/solmate/src/\n",
      "src/A.sol": "",
    });
    expect(solidityProject(path.join(dir, "src", "A.sol"))).toEqual({
      root: dir,
      marker: "foundry.toml",
      remappings: ["forge-std/=lib/forge-std-fork/src/", "solmate/=/elsewhere/solmate/src/", "@oz/=deps/oz/", "src/thing/:dep/=deps/dep/"],
      libs: [path.join(dir, "lib"), path.join(dir, "deps")],
    });
    expect(foundryProfile(await readFile(path.join(dir, "foundry.toml"), "utf8"), "ci")).toEqual({ remappings: ["ci/=ci/"], libs: ["lib", "deps"] });
  });

  it("has forge's default libs: lib, or node_modules when only it exists", async () => {
    const dir = await tempDir("devstack-project-");
    await files(dir, { "a/foundry.toml": "", "a/node_modules/x": "", "a/lib/x": "", "b/foundry.toml": "", "b/node_modules/x": "", "c/foundry.toml": "" });
    expect(solidityProject(path.join(dir, "a", "A.sol")).libs).toEqual([path.join(dir, "a", "lib")]);
    expect(solidityProject(path.join(dir, "b", "A.sol")).libs).toEqual([path.join(dir, "b", "node_modules")]);
    expect(solidityProject(path.join(dir, "c", "A.sol")).libs).toEqual([path.join(dir, "c", "lib")]);
  });
});

describe("patching from a .sol file outside a package.json project", () => {
  let stack: DevStack;
  withQueueStack({ client: false }, (started) => ({ stack } = started));

  it("a Foundry project (foundry.toml, remappings.txt, src/, OpenZeppelin in lib/): its Pool's ../ imports and remapped imports compile", async () => {
    const dir = await tempDir("devstack-foundry-project-");
    await cp(CONTRACTS, path.join(dir, "src"), { recursive: true });
    await mkdir(path.join(dir, "lib", "openzeppelin-contracts"), { recursive: true });
    await symlink(OPENZEPPELIN, path.join(dir, "lib", "openzeppelin-contracts", "contracts"));
    await files(dir, {
      "foundry.toml": '[profile.default]\nsrc = "src"\nout = "out"\nlibs = ["lib"]\nremappings = ["registry/=src/"]\n',
      "remappings.txt": "@openzeppelin/contracts/=lib/openzeppelin-contracts/contracts/\n",
      "src/aliased/Directory.sol": await directory("registry/AccountRegistry.sol"),
    });
    // The buggy Pool, as the repository's tests patch it: test/PoolFeeOffByOne.sol imports ../AccountRegistry.sol.
    const fromFoundry = await stack.patch("Pool", path.join(dir, "src", "test", "PoolFeeOffByOne.sol"));
    const fromVariants = await stack.patch("Pool", `${VARIANTS_PATH}:PoolFeeOffByOne`);
    expect(fromFoundry.codeHash).toBe(fromVariants.codeHash);
    // An import only foundry.toml's remapping resolves.
    expect(await stack.patch("directory", path.join(dir, "src", "aliased", "Directory.sol"))).toMatchObject({ name: "directory", source: `${path.join(dir, "src", "aliased", "Directory.sol")}:ReceiveDirectory` });
    await stack.unpatch("Pool");
    await stack.unpatch("directory");
  });

  it("an import found nowhere: compile_failed naming where it was looked for, and the npm package to install for a scoped name", async () => {
    const dir = await tempDir("devstack-missing-import-");
    await files(dir, { "foundry.toml": "", "src/Directory.sol": await directory("@not-installed/contracts/AccountRegistry.sol") });
    const refused = await stack.patch("directory", path.join(dir, "src", "Directory.sol")).then(() => undefined, (e: unknown) => e as { code?: string; message: string });
    expect(refused).toMatchObject({ code: "compile_failed" });
    expect(refused?.message).toContain(`src/Directory.sol:4:1: ParserError: Source "@not-installed/contracts/AccountRegistry.sol" not found: not in the project (${dir}), its libs or a node_modules above it`);
    expect(refused?.message).toContain("npm install -D @not-installed/contracts in your project");
  });

  it("a copy of the sources with no project file around it: ../ imports resolve as on disk", async () => {
    const dir = await tempDir("devstack-bare-sources-");
    await files(dir, { "AccountRegistry.sol": await readFile(path.join(CONTRACTS, "AccountRegistry.sol"), "utf8"), "test/Directory.sol": await directory("../AccountRegistry.sol") });
    expect(await stack.patch("directory", path.join(dir, "test", "Directory.sol"))).toMatchObject({ name: "directory" });
    await stack.unpatch("directory");
  });
});
