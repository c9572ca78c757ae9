import { QUEUE_PATHS } from "../../src/paths.ts";
import { OPENAPI_PATHS } from "../../src/openapi.ts";
import { DEV_PREFIX } from "../dev/index.ts";
import type { StackUrlKey } from "../stack-info/index.ts";

/** A stack's URLs, from anvil's and the queue's. */
export function stackUrls(rpcUrl: string, queueUrl: string): Record<StackUrlKey, string> {
  return {
    rpcUrl,
    queueUrl,
    configUrl: `${queueUrl}${QUEUE_PATHS.config}`,
    docsUrl: `${queueUrl}${OPENAPI_PATHS.docs}`,
    dashboardUrl: `${queueUrl}${DEV_PREFIX}/dashboard`,
  };
}
