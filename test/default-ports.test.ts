import { createServer } from "node:net";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { DEFAULT_PORTS_PRELOAD } from "./support/default-ports.ts";

// Tests use free ports, never a default one (issue 30, item 20): a stack a developer runs on 8545 and
// 8700 must not make a test fail, nor a test take those ports from it. Every process of the run refuses them.
describe("the run's default ports", () => {
  it("are refused in a worker and in every Node process it starts, before anything is bound", async () => {
    expect(process.env.NODE_OPTIONS).toContain(`--import=${DEFAULT_PORTS_PRELOAD}`);
    for (const port of [8545, 8700]) {
      const server = createServer();
      try {
        expect(() => server.listen(port, "127.0.0.1")).toThrow(`never on the default port ${port}`);
      } finally {
        server.close();
      }
    }
    const child = await execa(process.execPath, ["-e", `require("node:net").createServer().listen({ port: 8545, host: "127.0.0.1" })`], { reject: false });
    expect(child.exitCode).toBe(1);
    expect(child.stderr).toContain("never on the default port 8545");
    // A free port still works.
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, "127.0.0.1", resolve));
    await new Promise((resolve) => free.close(resolve));
  });
});
