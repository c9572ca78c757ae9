import { request } from "node:http";
import { stat } from "node:fs/promises";
import path from "node:path";
import { startDevStack } from "../../harness/index.ts";
import { ACTION_ROUTES } from "../../harness/deployment/index.ts";

// A quote storm against one local stack: BENCH_CLIENTS clients (each its own loopback address, so its own
// per-client cap) ask POST /quote as fast as they are answered for BENCH_SECONDS. Quotes live 2 s and are
// kept 2 s past expiry. Every second: the quotes stored (queue_quotes_stored in /metrics), the store file's
// size, and the answers so far. The count must stay flat: the last third's peak no more than 1.25 times the
// middle third's (exit 1 otherwise). Before issue 25, every quote was kept for ever.
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 40);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);

const stack = await startDevStack({ runtime: { quotes: { validForSeconds: 2, keepExpiredSeconds: 2 } } });
try {
  const usdc = stack.manifest.assets.find((a) => a.decimals === 6)?.address;
  const weth = stack.manifest.assets.find((a) => a.decimals === 18)?.address;
  const body = JSON.stringify({
    deployment: { chainId: stack.manifest.chainId, poolAddress: stack.manifest.poolAddress, domain: stack.manifest.domain },
    route: ACTION_ROUTES.swap, assetIn: usdc, assetOut: weth, amountIn: "30000000",
  });
  const { port } = new URL(stack.queueUrl);
  const answers = new Map<number, number>();
  /** One POST /quote from `localAddress`; resolves with its status. */
  const ask = (localAddress: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, path: "/api/queue/quote", method: "POST", localAddress, headers: { "content-type": "application/json" } }, (res) => {
        res.resume().on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", reject).end(body);
    });
  const metric = async () => Number(/^queue_quotes_stored (\d+)/m.exec(await (await fetch(`${stack.queueUrl}/metrics`)).text())?.[1]);
  const storeFile = path.join(stack.stateDir, "queue.sqlite");

  const endAt = Date.now() + SECONDS * 1000;
  const storm = Array.from({ length: CLIENTS }, async (_, i) => {
    while (Date.now() < endAt) {
      const status = await ask(`127.0.0.${i + 2}`);
      answers.set(status, (answers.get(status) ?? 0) + 1);
      // A capped client waits a little, as a client honouring Retry-After would not (a storm does not).
      if (status === 429) await new Promise((r) => setTimeout(r, 50));
    }
  });
  const samples: number[] = [];
  while (Date.now() < endAt) {
    await new Promise((r) => setTimeout(r, 1000));
    const stored = await metric();
    samples.push(stored);
    const bytes = (await stat(storeFile)).size + (await stat(`${storeFile}-wal`).catch(() => ({ size: 0 }))).size;
    console.log(`t=${samples.length}s quotes stored ${stored}, store ${(bytes / 1024).toFixed(0)} KiB, answers ${JSON.stringify(Object.fromEntries(answers))}`);
  }
  await Promise.all(storm);
  const third = Math.floor(samples.length / 3);
  const middle = Math.max(...samples.slice(third, 2 * third));
  const last = Math.max(...samples.slice(2 * third));
  const issued = answers.get(200) ?? 0;
  console.log(`quotes issued ${issued}; peak stored: middle third ${middle}, last third ${last} (${(last / middle).toFixed(2)}x)`);
  if (!(last <= middle * 1.25) || issued <= last) {
    console.error("the store grew under the storm");
    process.exitCode = 1;
  }
} finally {
  await stack.stop();
}
