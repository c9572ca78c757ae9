import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CIRCUIT_BUILD_DIR, loadCircuitManifest } from "../harness/deployment/index.ts";
import { startDevStack } from "../harness/index.ts";
import { readProofHashes } from "../harness/state-dir/index.ts";
import { forgetProofHashes } from "../src/proof-artifacts.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

// <stateDir>/proof-hashes.json is a cache in a user's folder: whatever it holds, a launch neither
// refuses good proof files because of it, nor reads it unbounded, nor lets it grow launch after launch.
const tempDir = withTempDirs();

/** The committed proof files' identities (the cache's keys) and sha256. */
async function committedFiles(): Promise<Array<{ key: string; sha256: string }>> {
  const circuit = await loadCircuitManifest();
  return Promise.all(
    circuit.files.map(async (file) => {
      const s = await stat(path.join(CIRCUIT_BUILD_DIR, file.file), { bigint: true });
      return { key: `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`, sha256: `0x${file.sha256}` };
    }),
  );
}

const readKept = async (stateDir: string) => JSON.parse(await readFile(path.join(stateDir, "proof-hashes.json"), "utf8")) as Record<string, string>;

describe("proof-hashes.json, a cache in the state dir", () => {
  it("a wrong hash kept for an unchanged proof file is not a refusal: the file is hashed, the start goes on, and the entry is mended", async () => {
    const stateDir = await tempDir("review-start-hashes-");
    const files = await committedFiles();
    await writeFile(path.join(stateDir, "proof-hashes.json"), JSON.stringify(Object.fromEntries(files.map((f) => [f.key, `0x${"ab".repeat(32)}`]))));
    forgetProofHashes(); // as a new process
    const stack = await startDevStack({ stateDir });
    await stack.stop();
    const kept = await readKept(stateDir);
    for (const f of files) expect(kept[f.key]).toBe(f.sha256);
  });

  it("keeps only the hashes of the files this launch checked: entries of files gone or rebuilt are dropped", async () => {
    const stateDir = await tempDir("review-start-hashes-");
    const stale = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`1:${i + 1}:4:5:6`, `0x${"cd".repeat(32)}`]));
    await writeFile(path.join(stateDir, "proof-hashes.json"), JSON.stringify(stale));
    forgetProofHashes();
    const stack = await startDevStack({ stateDir });
    await stack.stop();
    const kept = await readKept(stateDir);
    expect(Object.keys(kept).sort()).toEqual((await committedFiles()).map((f) => f.key).sort());
  });

  it("an oversized file is not read (a cache of a few entries is a few hundred bytes)", async () => {
    const stateDir = await tempDir("review-start-hashes-");
    const files = await committedFiles();
    const entries = JSON.stringify(Object.fromEntries(files.map((f) => [f.key, f.sha256])));
    await writeFile(path.join(stateDir, "proof-hashes.json"), `${entries}${" ".repeat(8 * 1024 * 1024)}`);
    forgetProofHashes();
    expect(await readProofHashes(stateDir)).toBeUndefined();
  });
});
