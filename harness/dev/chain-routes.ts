import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { Problem, ProblemError } from "../../src/problem.ts";
import { JsonRpcError, jsonRpc } from "../chain/index.ts";
import { DEV_PREFIX, describeDev, rpc, type DevDeps } from "./dev-route-kit.ts";

const head = async (url: string) => {
  const block = await rpc<{ number: string; timestamp: string } | null>(url, "eth_getBlockByNumber", ["latest", false]);
  // anvil answers no head after a failed revert to a snapshot whose block a reorg replaced, until a block is mined.
  if (!block) throw new ProblemError("chain_unavailable", "anvil has no head block right now (a revert to a lost snapshot leaves it so): mine a block or reset the stack", { headers: { "retry-after": "1" } });
  return { number: Number(block.number), timestamp: Number(block.timestamp) };
};
const Head = z.strictObject({ number: z.int(), timestamp: z.int() }).meta({ description: "the chain's head after the control" });

/**
 * Dev controls over HTTP of the chain itself, for client developers testing what their code does when
 * the chain misbehaves: mine, move time, hold and release mining, drop a transaction, reorg.
 */
export const chainRoutes: FastifyPluginAsyncZod<DevDeps> = async (app, deps) => {
  app.post(`${DEV_PREFIX}/mine`, {
    schema: { ...describeDev("mine blocks", "Mines `blocks` empty blocks at once (default 1)."), body: z.strictObject({ blocks: z.int().min(1).max(10_000).default(1) }).default({ blocks: 1 }), response: { 200: Head, default: Problem } },
    handler: async (request) =>
      deps.lock.run(async () => {
        await rpc(deps.rpcUrl, "anvil_mine", [`0x${request.body.blocks.toString(16)}`]);
        return head(deps.rpcUrl);
      }),
  });

  app.post(`${DEV_PREFIX}/time`, {
    schema: { ...describeDev("move time", "Moves chain time forward by `seconds` and mines a block with it (deadlines and quotes lapse)."), body: z.strictObject({ seconds: z.int().min(1).max(10 * 365 * 86_400) }), response: { 200: Head, default: Problem } },
    handler: async (request) =>
      deps.lock.run(async () => {
        await rpc(deps.rpcUrl, "evm_increaseTime", [request.body.seconds]);
        await rpc(deps.rpcUrl, "evm_mine");
        return head(deps.rpcUrl);
      }),
  });

  app.post(`${DEV_PREFIX}/mining`, {
    schema: {
      ...describeDev("hold or release mining", "`hold`: no block is mined (transactions wait in the mempool: operations stay `submitted`). `auto`: a block per transaction again, and one is mined at once with whatever waited."),
      body: z.strictObject({ mode: z.enum(["hold", "auto"]) }),
      response: { 200: z.strictObject({ mode: z.enum(["hold", "auto"]), head: Head }), default: Problem },
    },
    handler: async (request) =>
      deps.lock.run(async () => {
        await rpc(deps.rpcUrl, "evm_setAutomine", [request.body.mode === "auto"]);
        // anvil's evm_setAutomine(false) leaves interval mining on: held means no block at all.
        if (request.body.mode === "hold") await rpc(deps.rpcUrl, "evm_setIntervalMining", [0]);
        if (request.body.mode === "auto") await rpc(deps.rpcUrl, "evm_mine");
        return { mode: request.body.mode, head: await head(deps.rpcUrl) };
      }),
  });

  app.post(`${DEV_PREFIX}/drop`, {
    schema: {
      ...describeDev("drop an operation's transaction from the mempool", "Removes the operation's broadcast transaction from anvil's mempool, as a node that lost it would. The relayer notices the transaction is gone and broadcasts the same signed bytes again (hold mining first to see it: the operation stays `submitted`)."),
      body: z.strictObject({ operationId: z.string().min(1).max(100) }),
      response: { 200: z.strictObject({ dropped: z.string().regex(/^0x[0-9a-f]{64}$/) }), default: Problem },
    },
    handler: async (request) =>
      deps.lock.run(async () => {
        const op = deps.control?.operation(request.body.operationId);
        if (!op) throw new ProblemError("operation_not_found", `no operation ${request.body.operationId}`);
        const attempt = op.attempts.at(-1);
        if (!attempt || op.minedHash) throw new ProblemError("wrong_route", `operation ${op.id} has no transaction waiting in the mempool (${op.state})`);
        await rpc(deps.rpcUrl, "anvil_dropTransaction", [attempt.hash]);
        return { dropped: attempt.hash };
      }),
  });

  app.post(`${DEV_PREFIX}/reorg`, {
    schema: {
      ...describeDev(
        "reorg the last blocks",
        "Replaces the last `depth` blocks with empty ones (same height, new hashes) and sends their transactions again, as a node does after a reorg: with automine they are mined at once in new blocks (an operation is `included` in another block), with mining held they wait in the mempool (an operation goes back to `submitted`). An operation already `confirmed` stays so: start the stack with more `--confirmations` to see its reorg. It cannot go deeper than the chain's history (a chain loaded without its past states keeps none below the block it was loaded at).",
      ),
      body: z.strictObject({ depth: z.int().min(1).max(64).default(1) }).default({ depth: 1 }),
      response: {
        200: z.strictObject({ depth: z.int(), head: Head, resent: z.array(z.string()).meta({ description: "the reorged blocks' transactions, sent again in order" }), mined: z.boolean().meta({ description: "whether they were mined again at once (automine)" }) }),
        default: Problem,
      },
    },
    handler: async (request) =>
      deps.lock.run(async () => {
        const { depth } = request.body;
        const top = (await head(deps.rpcUrl)).number;
        if (depth > top) throw new ProblemError("wrong_route", `the chain has only ${top} blocks`);
        const raws: Array<{ hash: string; raw: string }> = [];
        for (let n = top - depth + 1; n <= top; n++) {
          const block = await rpc<{ transactions: string[] } | null>(deps.rpcUrl, "eth_getBlockByNumber", [`0x${n.toString(16)}`, false]);
          // A block anvil cannot answer for below its head (one being mined, or a chain a failed revert left headless): try again.
          if (!block) throw new ProblemError("chain_unavailable", `anvil has no block ${n} below its head ${top} right now; try again`, { headers: { "retry-after": "1" } });
          for (const hash of block.transactions) raws.push({ hash, raw: await rpc<string>(deps.rpcUrl, "eth_getRawTransactionByHash", [hash]) });
        }
        // anvil_reorg drops the transactions of the blocks it replaces; a real node puts them back in its pool.
        await jsonRpc(deps.rpcUrl, "anvil_reorg", [depth, []]).catch((error: unknown) => {
          throw error instanceof JsonRpcError
            ? new ProblemError("wrong_route", `anvil cannot reorg ${depth} block(s) here (${error.message}): it keeps no state below the block its chain was loaded at`)
            : error;
        });
        for (const { raw } of raws) {
          // The relayer may have re-broadcast its own bytes already: "already known" is the same transaction.
          await jsonRpc(deps.rpcUrl, "eth_sendRawTransaction", [raw]).catch(() => {});
        }
        const mined = await rpc<boolean>(deps.rpcUrl, "anvil_getAutomine");
        // With automine, anvil mines them one block each after it answers: the answer waits for that (at
        // most 2 s), so it says the head they were mined to, and the next control meets a still chain.
        for (const started = performance.now(); mined && raws.length > 0 && performance.now() - started < 2_000; ) {
          if (Number((await rpc<{ pending: string }>(deps.rpcUrl, "txpool_status")).pending) === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        return { depth, head: await head(deps.rpcUrl), resent: raws.map((r) => r.hash), mined };
      }),
  });
};
