import { QUEUE_PATHS } from "../paths.ts";
import type { DeploymentConfig } from "./deployment-config.ts";

const OWN_PATHS: ReadonlySet<string> = new Set(Object.values(QUEUE_PATHS));
/** A proof file's path: the artifacts prefix and one file name. */
const ARTIFACT_PATH = new RegExp(`^${QUEUE_PATHS.artifacts}/[A-Za-z0-9._-]+$`);

/**
 * Where a manifest sends its readers must be this runtime's own routes: the endpoints exactly as it
 * serves them, every route's paths among them, and each proof file under its artifacts prefix. A
 * manifest may come from elsewhere (a bundle), and apps fetch what it names. Null, or what differs.
 */
export function manifestPathProblem(config: DeploymentConfig): string | null {
  for (const [name, path] of Object.entries(QUEUE_PATHS)) {
    const given = (config.queue.endpoints as Record<string, string>)[name];
    if (given !== path) return `queue.endpoints.${name} is ${JSON.stringify(given)}: this runtime serves it at ${path}`;
  }
  for (const [index, route] of config.routes.entries()) {
    const paths = route.action === "external" ? { quote: route.quote, submit: route.submit, status: route.status, finalize: route.finalize } : { submit: route.submit, status: route.status };
    for (const [name, path] of Object.entries(paths)) {
      if (!OWN_PATHS.has(path)) return `routes.${index}.${name} is ${JSON.stringify(path)}: not a route of this runtime`;
    }
  }
  for (const [index, artifact] of config.queue.proof.artifacts.entries()) {
    if (!ARTIFACT_PATH.test(artifact.path)) return `queue.proof.artifacts.${index}.path is ${JSON.stringify(artifact.path)}: not a file under ${QUEUE_PATHS.artifacts}/`;
  }
  return null;
}
