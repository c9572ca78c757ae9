import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { writeFileAtomic } from "../harness/files/index.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

const tempDir = withTempDirs();

// One helper for every file the harness writes whole: the state dir's files (manifest, stack.json, the
// process record, patches) and a bundle saved where a user says.
describe("writeFileAtomic", () => {
  it("writes the file whole, making its folder first", async () => {
    const file = path.join(await tempDir("devstack-atomic-"), "made", "stack.json");
    await writeFileAtomic(file, "one\n");
    await writeFileAtomic(file, Buffer.from("two\n"));
    expect(await readFile(file, "utf8")).toBe("two\n");
    expect(await readdir(path.dirname(file))).toEqual(["stack.json"]);
  });

  it("with makeFolder false, refuses a path whose folder is missing and makes nothing", async () => {
    const dir = await tempDir("devstack-atomic-");
    await expect(writeFileAtomic(path.join(dir, "missing", "repro.qdbundle"), "x", { makeFolder: false })).rejects.toThrow(/ENOENT/);
    expect(await readdir(dir)).toEqual([]);
  });

  it("leaves no temp file when the rename fails, whether it makes the folder or not", async () => {
    const dir = await tempDir("devstack-atomic-");
    // A non-empty folder where the file goes: the write of the temp file succeeds, its rename fails.
    await mkdir(path.join(dir, "taken"));
    await writeFile(path.join(dir, "taken", "inside"), "");
    for (const options of [{}, { makeFolder: false }]) {
      await expect(writeFileAtomic(path.join(dir, "taken"), "x", options)).rejects.toThrow();
      expect(await readdir(dir)).toEqual(["taken"]);
    }
  });
});
