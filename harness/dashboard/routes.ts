import type { FastifyInstance } from "fastify";
import type { Address } from "viem";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { ServerResponse } from "node:http";
import { z } from "zod";
import { ProblemError } from "../../src/problem.ts";
import type { RelayControl } from "../../src/relay/control.ts";
import { OPERATION_STATES } from "../../src/schemas/operation-states.ts";
import { HEALTH_PATH } from "../../src/paths.ts";
import { jsonRpc } from "../chain/index.ts";
import { isGenesisBlock } from "../deployment/index.ts";
import type { RpcFaultProxy } from "../chain/index.ts";
import type { Trace } from "../trace/index.ts";
import type { ReplayAnswer } from "../replay/index.ts";
import { dashboardAssets, type Asset } from "./assets.ts";
import { manifestHtml, servedManifest } from "./manifest.ts";
import { countsHtml, opsPageHtml } from "./ops.ts";
import { accountsHtml, assetBookOf, chainReader, poolHtml, reservationHtml } from "./pool.ts";
import { pageHtml } from "./page.ts";
import { codeChanges } from "../../src/code-change.ts";
import { pushEvent } from "./push.ts";
import { esc, healthHtml, operationHtml, replayHtml, type AssetBook, type HealthView } from "./view.ts";

/** The page's own policy: its scripts and styles from this origin only, and its push channel. */
const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/** Health is read from the chain: pushed this often while a page listens, and after every control. */
const HEALTH_EVERY_MS = 5_000;
/** After an on-chain change, health and the Pool are read again at most this often (a relay burst is a few reads). */
const CHAIN_CHANGE_MS = 1_000;
/** States an operation reaches in a new block: the Pool and the head may have moved. */
const ON_CHAIN = new Set(["included", "confirmed", "reverted"]);

/** What the dashboard reads of the dev tools' deployment switch: it shows which deployment is served, and asks that runtime for its config. */
export interface ServedDeployments {
  serving(): "original" | "alternate";
  servedRuntime(): FastifyInstance;
}

export interface DashboardDeps {
  prefix: string;
  rpcUrl: string;
  relayer: `0x${string}`;
  control: RelayControl | null;
  faults: RpcFaultProxy;
  deployments: ServedDeployments;
  /** An operation's decoded call trace (stack.trace), or undefined for an unknown id. */
  trace: (operationId: string) => Promise<Trace | undefined>;
  /** An operation replayed on the chain as it is now (stack.replay, nothing sent). */
  replay: (operationId: string) => Promise<ReplayAnswer>;
  /** The dev accounts (stack.accounts), with their anvil index: the Accounts panel's rows. */
  accounts: ReadonlyArray<{ address: Address; anvilIndex: number }>;
}

const unanswered = (error: unknown) => `<p class="failure">the chain did not answer: ${esc(String((error as Error).message).split("\n")[0]?.slice(0, 200))}</p>`;

/** Runs `work` once at a time; asked again while it runs, it runs once more after (a burst is two runs). */
function coalesced(work: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const run = () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void work()
      .catch(() => {})
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          run();
        }
      });
  };
  return run;
}

const OpsQuery = z.strictObject({
  kind: z.enum(["", "send", "withdraw", "action", "finalize"]).optional(),
  state: z.enum(["", ...OPERATION_STATES]).optional(),
  since: z.string().regex(/^[0-9]{0,9}$/).optional(),
  before: z.string().max(200).regex(/^\S+ \S+$/).optional(),
  /** An operation id or a transaction hash (any of its attempts'). */
  q: z.string().max(100).optional(),
});
const ById = z.strictObject({ id: z.string().min(1).max(100) });

/**
 * The dashboard (GET {prefix}/dashboard) and its push channel (GET {prefix}/events), registered in the
 * dev-only scope: loopback clients under an allowed Host only, and absent from an operator's runtime.
 * The list comes a page at a time ({prefix}/dashboard/ops); the channel then sends each operation as it
 * changes (batched per event-loop turn, rendered once for every page), and health, the Pool and the
 * manifest after controls, on-chain changes, and health every few seconds.
 * Nobody listening costs the runtime nothing: no store listener, no timer, no chain read.
 */
export async function registerDashboard(scope: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const dev = scope.withTypeProvider<ZodTypeProvider>();
  const { prefix, control } = deps;
  let assets: Map<string, Asset> | undefined;
  let client: ReturnType<typeof chainReader> | undefined;
  const reader = () => (client ??= chainReader(deps.rpcUrl));
  const pages = new Set<{ res: ServerResponse }>();
  // The stack's own deployment's assets, for an operation's amounts: asked of its runtime once, when first needed (it must be ready).
  let assetBook: AssetBook | undefined;
  const assetsOfOwnDeployment = async () => (assetBook ??= assetBookOf((await servedManifest(dev)).config));

  // A page that stopped reading is dropped, its unsent events with it (it reconnects and reloads).
  const send = (name: string, data: string, to: Iterable<{ res: ServerResponse }> = pages) => pushEvent(to, name, data, (page) => closePage(page, { unread: true }));

  const healthView = async (): Promise<HealthView> => {
    const health = await dev.inject({ method: "GET", url: HEALTH_PATH });
    const rpc = <T>(method: string, params: unknown[] = []) => jsonRpc<T>(deps.rpcUrl, method, params);
    const [block, pending, automine, interval, balance, nonce] = await Promise.all([
      rpc<{ number: string; timestamp: string }>("eth_getBlockByNumber", ["latest", false]),
      rpc<{ timestamp: string }>("eth_getBlockByNumber", ["pending", false]),
      rpc<boolean>("anvil_getAutomine"),
      rpc<number | null>("anvil_getIntervalMining"),
      rpc<string>("eth_getBalance", [deps.relayer, "latest"]),
      rpc<string>("eth_getTransactionCount", [deps.relayer, "latest"]),
    ]);
    return {
      health: { status: health.statusCode, body: health.json() },
      relayer: control ? { address: deps.relayer, balanceWei: BigInt(balance), nonce: Number(nonce) } : null,
      head: { number: Number(block.number), timestamp: Number(block.timestamp), ageS: Math.max(0, Number(pending.timestamp) - Number(block.timestamp)), genesis: isGenesisBlock(BigInt(block.number), BigInt(block.timestamp)) },
      // Automine off is not held while anvil mines on an interval (a test's evm_setIntervalMining).
      mining: automine ? "auto" : interval ? `every ${interval} s` : "hold",
      engine: control ? (control.paused() ? "paused" : "running") : null,
      faults: deps.faults.state(),
      serving: deps.deployments.serving(),
    };
  };

  // The Pool is read again when the head moved since it was last shown (a deposit, a relay) or a control ran.
  let poolHead = -1;
  const pushPool = coalesced(async () => {
    if (pages.size === 0) return;
    const served = await servedManifest(deps.deployments.servedRuntime());
    send("pool", await poolHtml(reader(), control, served.config).catch(unanswered));
  });
  const pushHealth = coalesced(async () => {
    if (pages.size === 0) return;
    const view = await healthView().catch((error: unknown) => error as Error);
    send("health", view instanceof Error ? unanswered(view) : healthHtml(view));
    if (!(view instanceof Error) && view.head.number !== poolHead) {
      poolHead = view.head.number;
      pushPool();
    }
  });
  // An operation mined: health and the Pool again, soon, once for a burst of them.
  let chainTimer: NodeJS.Timeout | null = null;
  let chainReadAt = 0;
  const chainMovedSoon = () => {
    if (chainTimer) return;
    chainTimer = setTimeout(() => {
      chainTimer = null;
      chainReadAt = Date.now();
      pushHealth();
    }, Math.max(0, chainReadAt + CHAIN_CHANGE_MS - Date.now())).unref();
  };
  const pushManifest = coalesced(async () => {
    if (pages.size === 0) return;
    const served = await servedManifest(deps.deployments.servedRuntime());
    send("manifest", manifestHtml(served, deps.deployments.serving()));
  });

  // The store's changes, coalesced: a burst of writes to one operation is one push of its latest state.
  let pending: Set<string> | null = null;
  let listAgain = false;
  const flush = () => {
    const ids = pending ?? new Set<string>();
    pending = null;
    // The counts per state once for the whole batch.
    if (control) send("counts", countsHtml(control));
    if (listAgain) {
      // Many changed at once (a reset): each page asks for its list again, with its own filters.
      listAgain = false;
      send("ops", "reload");
      pushHealth();
      return;
    }
    let chainMoved = false;
    for (const id of ids) {
      const op = control?.operation(id);
      if (!op) continue;
      chainMoved ||= ON_CHAIN.has(op.state);
      send("op", operationHtml(op, prefix, control?.requiredConfirmations() ?? 1, assetBook));
    }
    if (chainMoved) chainMovedSoon();
  };
  const onChange = (id: string | null) => {
    if (pending === null) {
      pending = new Set();
      setImmediate(flush);
    }
    if (id === null) listAgain = true;
    else pending.add(id);
  };

  let unlisten: (() => void) | null = null;
  let healthTimer: NodeJS.Timeout | null = null;
  const closePage = (page: { res: ServerResponse }, { unread = false } = {}) => {
    if (!pages.delete(page)) return;
    if (unread) page.res.destroy();
    else page.res.end();
    if (pages.size > 0) return;
    unlisten?.();
    unlisten = null;
    if (healthTimer) clearInterval(healthTimer);
    healthTimer = null;
    if (chainTimer) clearTimeout(chainTimer);
    chainTimer = null;
  };

  dev.get(`${prefix}/dashboard`, { schema: { hide: true } }, async (_request, reply) => {
    const proofs = (await servedManifest(deps.deployments.servedRuntime())).config.queue.proof.system;
    const patched = codeChanges(deps.deployments.servedRuntime())?.patched() ?? [];
    return reply.header("content-security-policy", PAGE_CSP).header("cache-control", "no-store").type("text/html; charset=utf-8").send(pageHtml(prefix, proofs, patched));
  });

  dev.get<{ Params: { name: string } }>(`${prefix}/dashboard/assets/:name`, { schema: { hide: true } }, async (request, reply) => {
    assets ??= dashboardAssets();
    const asset = assets.get(request.params.name);
    if (!asset) throw new ProblemError("route_not_found", `no dashboard asset ${request.params.name}`);
    return reply.header("cache-control", "no-cache").type(asset.type).send(asset.body);
  });

  dev.get(`${prefix}/dashboard/ops`, { schema: { hide: true, querystring: OpsQuery } }, async (request, reply) => {
    const { since, ...rest } = request.query;
    const assets = await assetsOfOwnDeployment().catch(() => undefined);
    return reply.header("cache-control", "no-store").type("text/html; charset=utf-8").send(opsPageHtml(control, { ...rest, ...(since ? { since: Number(since) } : {}) }, prefix, Date.now(), assets));
  });

  // Read when the panel is opened, and again with the Pool while it is open (the page asks).
  dev.get(`${prefix}/dashboard/accounts`, { schema: { hide: true } }, async (_request, reply) => {
    const served = await servedManifest(deps.deployments.servedRuntime());
    const html = await accountsHtml(reader(), deps.accounts, served.config).catch(unanswered);
    return reply.header("cache-control", "no-store").type("text/html; charset=utf-8").send(html);
  });

  dev.get(`${prefix}/dashboard/trace`, { schema: { hide: true, querystring: ById } }, async (request, reply) => {
    const trace = await deps.trace(request.query.id).catch((error: unknown) => new Error((error as Error).message));
    const html = trace === undefined ? "no such operation" : trace instanceof Error ? `no trace: ${trace.message}` : trace.text;
    return reply.type("text/html; charset=utf-8").send(esc(html));
  });

  // A replay sends nothing: its answer (or why there is none) replaces the entry's replay panel.
  dev.get(`${prefix}/dashboard/replay`, { schema: { hide: true, querystring: ById } }, async (request, reply) => {
    const answer = await deps.replay(request.query.id).catch((error: unknown) => error as Error);
    return reply.header("cache-control", "no-store").type("text/html; charset=utf-8").send(replayHtml(answer));
  });

  dev.get(`${prefix}/dashboard/reservation`, { schema: { hide: true, querystring: ById } }, async (request, reply) => {
    const op = control?.operation(request.query.id);
    if (!control || !op) throw new ProblemError("operation_not_found", `no operation ${request.query.id}`);
    return reply.type("text/html; charset=utf-8").send(await reservationHtml(reader(), control, op));
  });

  dev.get(`${prefix}/events`, { schema: { hide: true } }, (request, reply) => {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", connection: "keep-alive" });
    const page = { res };
    pages.add(page);
    void assetsOfOwnDeployment().catch(() => {}); // before the first push of an operation, as a rule
    // Listening before the page asks for its list: a change made meanwhile is pushed, not lost.
    unlisten ??= control?.onChange(onChange) ?? null;
    healthTimer ??= setInterval(pushHealth, HEALTH_EVERY_MS).unref();
    send("ops", "reload", [page]);
    if (control) send("counts", countsHtml(control), [page]);
    poolHead = -1;
    pushHealth();
    pushManifest();
    request.raw.on("close", () => closePage(page));
    res.on("error", () => closePage(page)); // a page gone mid-write: forget it, nothing else
  });

  // A control changed something: every page hears of it at once (from the page, the CLI or a test).
  dev.addHook("onResponse", async (request) => {
    if (request.method !== "POST" || pages.size === 0) return;
    poolHead = -1;
    pushHealth();
    pushManifest();
  });
  // An open push channel must not hold the server's close: end them before it waits on connections.
  dev.addHook("preClose", async () => {
    for (const page of [...pages]) closePage(page);
  });
}
