import { cp, rm, appendFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURES_DIR, inspectFixtures } from "../harness/deployment/index.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

const tempDir = withTempDirs();

describe("compiled fixtures", () => {
  it("the committed compiled.json is current with the sources (run npm run build:contracts if not)", async () => {
    expect((await inspectFixtures()).status).toBe("fresh");
  });

  it("stale or missing output is detected, not used", async () => {
    const dir = await tempDir("fixtures-");
    for (const entry of ["contracts", "hardhat.config.ts", "compiled.json"]) {
      await cp(path.join(FIXTURES_DIR, entry), path.join(dir, entry), { recursive: true });
    }
    expect((await inspectFixtures(dir)).status).toBe("fresh");
    await appendFile(path.join(dir, "contracts", "Pool.sol"), "\n// an edit\n");
    expect((await inspectFixtures(dir)).status).toBe("stale");
    await rm(path.join(dir, "compiled.json"));
    expect((await inspectFixtures(dir)).status).toBe("missing");
  });
});
