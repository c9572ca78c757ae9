import type { FastifyInstance } from "fastify";
import { ProblemError } from "../../src/problem.ts";
import { registerDashboard } from "../dashboard/index.ts";
import { replayRoutes } from "../replay/index.ts";
import { hostAllowed, hostnameOf, type AllowedHosts } from "./allowed-hosts.ts";
import { refuseCrossOrigin, type AllowedOrigins } from "./cross-origin.ts";
import { DEV_PREFIX, describeDev, type DevDeps } from "./dev-route-kit.ts";
import { DEV_PROBLEMS, devProblem } from "./problems/index.ts";
import { documentProblems } from "../../src/openapi.ts";
import { chainRoutes } from "./chain-routes.ts";
import { traceRoutes } from "./trace-routes.ts";
import { bundleRoutes } from "./bundle-routes.ts";
import { relayerRoutes } from "./relayer-routes.ts";
import { faultRoutes } from "./fault-routes.ts";
import { configRoutes } from "./config-routes.ts";
import { resetRoutes } from "./reset-routes.ts";

// The dev-only scope and the dev route groups registered in it, one file per group, each a Fastify
// plugin with its schemas (as src/routes/ registers the runtime's).

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/**
 * The scope every dev-only route is registered in (the controls below, and any dev page): loopback
 * clients only, and only under an allowed Host name. Hooks of an encapsulated plugin run for the
 * routes registered inside it, whatever their path.
 */
export async function registerDevOnly(app: FastifyInstance, hosts: AllowedHosts, origins: AllowedOrigins, routes: (dev: FastifyInstance) => Promise<void>): Promise<void> {
  await app.register(async (dev: FastifyInstance) => {
    dev.addHook("onRequest", async (request) => {
      // Not for anyone who can reach a non-loopback bind: they see no such routes.
      if (!LOOPBACK.test(request.ip)) throw new ProblemError("route_not_found", `no route ${request.method} ${request.url.split("?")[0]}`);
      // A loopback client under a name it does not own: a page on a domain rebound to 127.0.0.1.
      const hostname = hostnameOf(request.headers.host);
      if (hostname === undefined || !hostAllowed(hostname, hosts)) {
        throw devProblem(
          "host_not_allowed",
          `the dev routes answer only under localhost, a loopback address or the stack's own address (DNS rebinding protection)${hostname === undefined ? "" : `; to allow ${hostname}, start the stack with --allowed-host ${hostname} (allowedHosts)`}`,
        );
      }
    });
    // A change asked by another site's page (a no-cors POST needs no preflight): 403 cross_origin_refused.
    refuseCrossOrigin(dev, origins);
    await routes(dev);
  });
}

export async function registerDevRoutes(app: FastifyInstance, deps: DevDeps & { allowedHosts: AllowedHosts; allowedOrigins: AllowedOrigins }): Promise<void> {
  documentProblems(app, DEV_PROBLEMS);
  await registerDevOnly(app, deps.allowedHosts, deps.allowedOrigins, async (dev) => {
    await dev.register(chainRoutes as never, deps);
    await dev.register(traceRoutes as never, deps);
    await dev.register(bundleRoutes as never, deps);
    await dev.register(relayerRoutes as never, deps);
    await dev.register(faultRoutes as never, deps);
    await dev.register(configRoutes as never, deps);
    await dev.register(resetRoutes as never, deps);
    await dev.register(replayRoutes as never, { devPrefix: DEV_PREFIX, replayer: deps.replayer, describe: describeDev });
    // The page is in this scope too: loopback clients and Host names only, like every control it calls.
    await registerDashboard(dev, { prefix: DEV_PREFIX, rpcUrl: deps.rpcUrl, relayer: deps.relayer, control: deps.control, faults: deps.faults, deployments: deps.deployments, trace: deps.trace, replay: (id) => deps.replayer.replay(id), accounts: deps.accounts });
  });
}
