#!/usr/bin/env node
// Minimal repro of an anvil bug, with bare anvil and no code of queue-devstack: after a mined
// transaction, `evm_revert(snapshot)` answers `true` while the chain's head stays at the later block.
// Cause (anvil 1.7.1): eth_sendTransaction answers before automine has mined the transaction, and
// evm_revert does not take the backend's mining lock, so a revert meeting a block being mined is undone
// by that block's last writes (head and hash; sometimes with the state reverted: foundry-rs/foundry#6463).
// On foundry's master, evm_snapshot and evm_revert take the mining lock (48a39edb5c, #15343); no release
// has it as of v1.7.1. queue-devstack's workaround: harness/dev/snapshot.ts (quiesce, then check and fall back).
//
//   node scripts/anvil-revert-repro.mjs [cycles] [variant]
//
// Each cycle: eth_sendTransaction (automine mines it in a new block), then, depending on the variant,
// something sent alone, then evm_revert(snapshot) and eth_blockNumber, then evm_snapshot for the next
// cycle (anvil's snapshot ids are single-use). A cycle fails when the revert answered true but the head
// is not back at the snapshot's block.
//   plain          nothing before the revert
//   automine-off   evm_setAutomine(false) before the revert (then back on after it)
//   interval-0     evm_setIntervalMining(0) before the revert
//
// Prints one line per failed cycle and a summary; exits 1 if any cycle failed. ANVIL=<path> picks the binary
// (default: the one @foundry-rs/anvil installed here).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import net from "node:net";
import path from "node:path";

const cycles = Number(process.argv[2] ?? 2000);
const variant = process.argv[3] ?? "plain";
if (!["plain", "automine-off", "interval-0"].includes(variant)) throw new Error(`unknown variant ${variant}`);

const anvilPath =
  process.env.ANVIL ??
  path.join(path.dirname(createRequire(import.meta.url).resolve(`@foundry-rs/anvil-${process.platform}-${process.arch === "x64" ? "amd64" : process.arch}/package.json`)), "bin", "anvil");

const port = await new Promise((resolve) => {
  const server = net.createServer().listen(0, "127.0.0.1", () => {
    const { port } = server.address();
    server.close(() => resolve(port));
  });
});
const anvil = spawn(anvilPath, ["--port", String(port), "--host", "127.0.0.1", "--silent"], { stdio: "ignore" });
const stop = () => anvil.kill("SIGTERM");
process.on("SIGINT", () => {
  stop();
  process.exit(130);
});

const url = `http://127.0.0.1:${port}`;
let id = 0;
async function rpc(method, params = []) {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }) });
  const body = await response.json();
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

try {
  for (let i = 0; ; i++) {
    try {
      await rpc("eth_blockNumber");
      break;
    } catch {
      if (i > 100) throw new Error("anvil did not start");
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  console.log(`anvil ${(await rpc("web3_clientVersion"))}, ${cycles} cycles, variant ${variant}`);
  const [from, to] = await rpc("eth_accounts");
  let expected = await rpc("eth_blockNumber");
  let snapshot = await rpc("evm_snapshot");
  let failed = 0;
  let first = null;
  for (let cycle = 0; cycle < cycles; cycle++) {
    await rpc("eth_sendTransaction", [{ from, to, value: "0x1" }]);
    if (variant === "automine-off") await rpc("evm_setAutomine", [false]);
    if (variant === "interval-0") await rpc("evm_setIntervalMining", [0]);
    const reverted = await rpc("evm_revert", [snapshot]);
    const head = await rpc("eth_blockNumber");
    if (variant === "automine-off") await rpc("evm_setAutomine", [true]);
    if (reverted === true && head !== expected) {
      failed++;
      first ??= cycle;
      if (failed <= 10) console.log(`cycle ${cycle}: evm_revert answered true, but the head is at block ${Number(head)}, not ${Number(expected)}`);
      expected = head; // go on from where the chain is
    }
    snapshot = await rpc("evm_snapshot");
  }
  console.log(`${failed} of ${cycles} cycles failed${first === null ? "" : ` (first at cycle ${first})`}`);
  process.exitCode = failed > 0 ? 1 : 0;
} finally {
  stop();
}
