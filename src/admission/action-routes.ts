import type { DeploymentConfig, ExternalActionRoute } from "../config/deployment-config.ts";
import { ProblemError } from "../problem.ts";

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The configured external route a request names (422 route_not_approved otherwise). */
export function externalRoute(config: DeploymentConfig, id: string): ExternalActionRoute {
  const route = config.routes.find((r): r is ExternalActionRoute => r.action === "external" && r.id === id.toLowerCase());
  if (!route) throw new ProblemError("route_not_approved", `route ${id} is not an approved action route of this deployment (config routes)`);
  return route;
}

/**
 * The route's fees for an asset. None is no quote, never a fee of 0 (the manifest schema requires an
 * entry for each external route and asset; this holds for a config built without it too).
 */
export function feeEntry(config: DeploymentConfig, route: ExternalActionRoute, asset: string) {
  const entry = config.relayFees.actions.find((f) => same(f.route, route.id) && same(f.asset, asset));
  if (!entry) {
    throw new ProblemError("unsupported_asset", `route ${route.name} has no relay fee for ${asset} (config relayFees.actions): it quotes nothing in it`, {
      extensions: { route: route.id, asset },
    });
  }
  return entry;
}
