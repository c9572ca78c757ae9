import type { FastifyInstance } from "fastify";
import type { ServerResponse } from "node:http";
import { ProblemError } from "../../src/problem.ts";
import type { RelayControl } from "../../src/relay/control.ts";
import { HEALTH_PATH } from "../../src/paths.ts";
import { jsonRpc } from "../chain/index.ts";
import type { RpcFaultProxy } from "../chain/index.ts";
import type { Trace } from "./trace.ts";
import { dashboardAssets, type Asset } from "./dashboard-assets.ts";
import { esc, healthHtml, operationChange, operationHtml, pageHtml, type HealthView } from "./dashboard-view.ts";

/** The page's own policy: its scripts and styles from this origin only, and its push channel. */
const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/** The newest operations a page starts with. */
const FIRST_PAGE = 200;
/** Health is read from the chain: pushed this often while a page listens, and after every control. */
const HEALTH_EVERY_MS = 5_000;

interface DashboardDeps {
  prefix: string;
  rpcUrl: string;
  relayer: `0x${string}`;
  control: RelayControl | null;
  faults: RpcFaultProxy;
  /** An operation's decoded call trace (stack.trace), or undefined for an unknown id. */
  trace: (operationId: string) => Promise<Trace | undefined>;
}

/** One Server-Sent Event; each line of the data gets its own `data:` field. */
const event = (name: string, data: string) => `event: ${name}\n${data.split("\n").map((line) => `data: ${line}\n`).join("")}\n`;

/**
 * The dashboard (GET {prefix}/dashboard) and its push channel (GET {prefix}/events), registered in the
 * dev-only scope: loopback clients under an allowed Host only, and absent from an operator's runtime.
 * The channel sends the list once as a page connects, then each operation as it changes (batched per
 * event-loop turn, rendered once for every page), and health after controls and every few seconds.
 * Nobody listening costs the runtime nothing: no store listener, no timer.
 */
export async function registerDashboard(dev: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const { prefix, control } = deps;
  let assets: Map<string, Asset> | undefined;
  const pages = new Set<{ res: ServerResponse; known: Set<string> }>();

  const send = (name: string, data: string) => {
    for (const page of pages) page.res.write(event(name, data));
  };
  const list = () => (control?.operationsSince(new Date(0).toISOString()) ?? []).slice(-FIRST_PAGE).reverse();

  // The store's changes, coalesced: a burst of writes to one operation is one push of its latest state.
  let pending: Set<string> | null = null;
  let listAgain = false;
  const flush = () => {
    const ids = pending ?? new Set<string>();
    pending = null;
    if (listAgain) {
      listAgain = false;
      const ops = list();
      for (const page of pages) page.known = new Set(ops.map((op) => op.id));
      send("ops", ops.map((op) => operationHtml(op, prefix)).join(""));
      return;
    }
    for (const id of ids) {
      const op = control?.operation(id);
      if (!op) continue;
      const [update, insert] = [operationChange(op, true, prefix), operationChange(op, false, prefix)];
      for (const page of pages) {
        page.res.write(event("op", page.known.has(id) ? update : insert));
        page.known.add(id);
      }
    }
  };
  const onChange = (id: string | null) => {
    if (pending === null) {
      pending = new Set();
      setImmediate(flush);
    }
    if (id === null) listAgain = true;
    else pending.add(id);
  };

  const healthView = async (): Promise<HealthView> => {
    const health = await dev.inject({ method: "GET", url: HEALTH_PATH });
    const rpc = <T>(method: string, params: unknown[] = []) => jsonRpc<T>(deps.rpcUrl, method, params);
    const [block, automine, balance, nonce] = await Promise.all([
      rpc<{ number: string; timestamp: string }>("eth_getBlockByNumber", ["latest", false]),
      rpc<boolean>("anvil_getAutomine"),
      rpc<string>("eth_getBalance", [deps.relayer, "latest"]),
      rpc<string>("eth_getTransactionCount", [deps.relayer, "latest"]),
    ]);
    return {
      health: { status: health.statusCode, body: health.json() },
      relayer: control ? { address: deps.relayer, balanceWei: BigInt(balance), nonce: Number(nonce) } : null,
      head: { number: Number(block.number), timestamp: Number(block.timestamp) },
      mining: automine ? "auto" : "hold",
      engine: control ? (control.paused() ? "paused" : "running") : null,
      faults: deps.faults.state(),
    };
  };
  const pushHealth = async () => {
    if (pages.size === 0) return;
    const html = await healthView().then(healthHtml, (error: unknown) => `<p class="failure">the chain did not answer: ${String((error as Error).message).slice(0, 200)}</p>`);
    send("health", html);
  };

  let unlisten: (() => void) | null = null;
  let healthTimer: NodeJS.Timeout | null = null;
  const closePage = (page: { res: ServerResponse; known: Set<string> }) => {
    if (!pages.delete(page)) return;
    page.res.end();
    if (pages.size > 0) return;
    unlisten?.();
    unlisten = null;
    if (healthTimer) clearInterval(healthTimer);
    healthTimer = null;
  };

  dev.get(`${prefix}/dashboard`, { schema: { hide: true } }, async (_request, reply) =>
    reply.header("content-security-policy", PAGE_CSP).header("cache-control", "no-store").type("text/html; charset=utf-8").send(pageHtml(prefix)),
  );

  dev.get<{ Params: { name: string } }>(`${prefix}/dashboard/assets/:name`, { schema: { hide: true } }, async (request, reply) => {
    assets ??= dashboardAssets();
    const asset = assets.get(request.params.name);
    if (!asset) throw new ProblemError("route_not_found", `no dashboard asset ${request.params.name}`);
    return reply.header("cache-control", "no-cache").type(asset.type).send(asset.body);
  });

  dev.get<{ Querystring: { id?: string } }>(`${prefix}/dashboard/trace`, { schema: { hide: true } }, async (request, reply) => {
    const trace = await deps.trace(String(request.query.id ?? "")).catch((error: unknown) => new Error((error as Error).message));
    const html = trace === undefined ? "no such operation" : trace instanceof Error ? `no trace: ${trace.message}` : trace.text;
    return reply.type("text/html; charset=utf-8").send(esc(html));
  });

  dev.get(`${prefix}/events`, { schema: { hide: true } }, (request, reply) => {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", connection: "keep-alive" });
    const ops = list();
    const page = { res, known: new Set(ops.map((op) => op.id)) };
    pages.add(page);
    unlisten ??= control?.onChange(onChange) ?? null;
    healthTimer ??= setInterval(() => void pushHealth(), HEALTH_EVERY_MS).unref();
    res.write(event("ops", ops.map((op) => operationHtml(op, prefix)).join("")));
    void pushHealth();
    request.raw.on("close", () => closePage(page));
    res.on("error", () => closePage(page)); // a page gone mid-write: forget it, nothing else
  });

  // A control changed something: every page hears of it at once (from the page, the CLI or a test).
  dev.addHook("onResponse", async (request) => {
    if (request.method === "POST") await pushHealth();
  });
  // An open push channel must not hold the server's close: end them before it waits on connections.
  dev.addHook("preClose", async () => {
    for (const page of [...pages]) closePage(page);
  });
}
