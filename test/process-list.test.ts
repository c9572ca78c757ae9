import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { listProcesses } from "../harness/process/index.ts";

// listProcesses reads /proc on Linux instead of spawning ps: it must list what ps lists, as ps shows it.
describe("listProcesses", () => {
  it("lists a child with its parent and its whole command line, as ps does", async () => {
    const marker = `process-list-${process.pid}-${Date.now()}`;
    const child = execa(process.execPath, ["-e", "setTimeout(() => {}, 30_000)", marker], { reject: false });
    try {
      const pid = child.pid as number;
      const listed = (await listProcesses()).find((p) => p.pid === pid);
      expect(listed).toEqual({ pid, ppid: process.pid, args: `${process.execPath} -e setTimeout(() => {}, 30_000) ${marker}` });
      const { stdout } = await execa("ps", ["-o", "pid=,ppid=,args=", "-p", String(pid)]);
      expect(stdout.trim().split(/\s+/).slice(0, 2).map(Number)).toEqual([pid, process.pid]);
      expect(stdout.trim().replace(/^\d+\s+\d+\s+/, "")).toBe(listed?.args);
    } finally {
      child.kill("SIGKILL");
      await child;
    }
    expect((await listProcesses()).some((p) => p.pid === child.pid)).toBe(false);
  });

  it("lists this process and its parent, each once", async () => {
    const all = await listProcesses();
    expect(all.filter((p) => p.pid === process.pid)).toEqual([{ pid: process.pid, ppid: process.ppid, args: expect.stringContaining("node") }]);
    expect(all.filter((p) => p.pid === process.ppid)).toHaveLength(1);
  });
});
