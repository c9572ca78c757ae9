import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyInstance } from "fastify";
import { QUEUE_PATHS } from "../../src/paths.ts";
import { relayControl } from "../../src/relay/control.ts";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";

export type ServedDeployment = "original" | "alternate";

export interface DeploymentSwitch {
  /** Which deployment the stack's queue URL serves now. */
  serving(): ServedDeployment;
  /** The runtime the queue URL serves now (read-only use: the dashboard asks it for its config). */
  servedRuntime(): FastifyInstance;
  /**
   * Serve the other deployment from the same URL: GET /config answers its configuration, relays go to
   * its Pool. The alternate (a second copy of the fixtures, with its own relayer) is deployed on first use.
   */
  serve(which: ServedDeployment): Promise<{ serving: ServedDeployment; poolAddress: string }>;
  /** Back to the original, the alternate closed and forgotten (a snapshot revert may have undone it). */
  discard(): Promise<void>;
}

const STATUS_PATHS = new Set<string>([QUEUE_PATHS.sendStatus, QUEUE_PATHS.withdrawStatus]);

/**
 * A served configuration that changes mid-flight (spec rules 7 and 8), as when an operator redeploys:
 * the stack's URL serves another deployment's runtime, while the one it replaced keeps relaying what it
 * accepted. Status questions about an operation go to the runtime that holds it, so a client can
 * settle the pending operation of the old deployment before preparing another. Dev routes stay with
 * the stack's own runtime. It swaps the HTTP server's request handler: the server, its port and its
 * timeouts stay the same.
 */
export function deploymentSwitch(args: {
  original: FastifyInstance;
  devPrefix: string;
  buildAlternate: () => Promise<{ runtime: FastifyInstance; config: DeploymentConfig }>;
  originalConfig: DeploymentConfig;
}): DeploymentSwitch {
  const { original } = args;
  let alternate: { runtime: FastifyInstance; config: DeploymentConfig } | null = null;
  let building: Promise<{ runtime: FastifyInstance; config: DeploymentConfig }> | null = null;
  let serving: ServedDeployment = "original";
  let installed = false;

  const holds = (app: FastifyInstance, id: string) => relayControl(app)?.operation(id) !== undefined;
  const target = (req: IncomingMessage): FastifyInstance => {
    if (!alternate) return original;
    const url = new URL(req.url ?? "/", "http://stack");
    if (url.pathname.startsWith(args.devPrefix)) return original;
    const active = serving === "original" ? original : alternate.runtime;
    const other = serving === "original" ? alternate.runtime : original;
    const id = STATUS_PATHS.has(url.pathname) ? url.searchParams.get("id") : null;
    return id !== null && !holds(active, id) && holds(other, id) ? other : active;
  };
  const install = () => {
    if (installed) return;
    installed = true;
    const server = original.server;
    server.removeAllListeners("request");
    server.on("request", (req: IncomingMessage, res: ServerResponse) => target(req).routing(req, res));
  };

  return {
    serving: () => serving,
    servedRuntime: () => (serving === "alternate" && alternate ? alternate.runtime : original),
    async serve(which) {
      if (which === "alternate") {
        building ??= args.buildAlternate().then(async (built) => {
          await built.runtime.ready();
          return built;
        });
        try {
          alternate = await building;
        } catch (error) {
          building = null;
          throw error;
        }
        install();
      }
      serving = which;
      return { serving, poolAddress: (which === "alternate" && alternate ? alternate.config : args.originalConfig).poolAddress };
    },
    async discard() {
      serving = "original";
      const closing = alternate?.runtime;
      alternate = null;
      building = null;
      await closing?.close();
    },
  };
}
