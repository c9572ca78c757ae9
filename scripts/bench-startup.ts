import path from "node:path";
import { execa } from "execa";
import { anvilBinaryPath } from "../harness/chain/index.ts";
import { launchToFirstOutput } from "./cli-launch.ts";
import { median } from "./stats.ts";

// Launch-to-ready of the whole local stack as a user starts it — the compiled CLI of the package
// (`queue-devstack --json`, what `npx queue-devstack` runs), until it prints its line — against a bare
// anvil answering eth_chainId, measured alternately in the same run. Medians and their ratio. It builds
// the package first (npm run build), and also reports the CLI run from source (npm run dev-stack).
const RUNS = Number(process.env.BENCH_RUNS ?? 9);


const CLI = {
  compiled: [path.join("dist", "scripts", "queue-devstack.js")],
  source: ["--experimental-strip-types", "--no-warnings", path.join("scripts", "dev-stack.ts")],
};

function stackOnce(entry: string[]): Promise<number> {
  return launchToFirstOutput((stateDir) => [...entry, "--json", "--chain-port", "0", "--queue-port", "0", "--state-dir", stateDir], "bench-stack-");
}

async function anvilOnce(): Promise<number> {
  const started = performance.now();
  const child = execa(anvilBinaryPath(), ["--port", "0", "--chain-id", "11155111"], { reject: false });
  const port = await new Promise<string>((resolve) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /Listening on \S+:(\d+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
  });
  for (;;) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      });
      if (((await r.json()) as { result?: string }).result === "0xaa36a7") break;
    } catch {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  const elapsed = performance.now() - started;
  child.kill("SIGINT");
  await child;
  return elapsed;
}

await execa("npm", ["run", "build", "--silent"]);
const compiled: number[] = [];
const source: number[] = [];
const anvil: number[] = [];
await stackOnce(CLI.compiled); // warm-up: file cache, Node's compile cache
await stackOnce(CLI.source);
for (let i = 0; i < RUNS; i++) {
  anvil.push(await anvilOnce());
  compiled.push(await stackOnce(CLI.compiled));
  source.push(await stackOnce(CLI.source));
}
const a = median(anvil);
const line = (label: string, xs: number[]) =>
  console.log(`${label.padEnd(40)} median ${median(xs).toFixed(0)} ms  (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`);
console.log(`runs: ${RUNS} each, alternating`);
line("local stack, installed CLI -> ready", compiled);
line("local stack, from source -> ready", source);
line("bare anvil launch -> eth_chainId", anvil);
console.log(`ratio installed CLI / bare anvil: ${(median(compiled) / a).toFixed(1)}x`);
