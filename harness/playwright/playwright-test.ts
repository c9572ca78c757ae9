import { createRequire } from "node:module";

/**
 * @playwright/test, required when this module is evaluated rather than imported statically: on an older
 * Node, `import "queue-devstack/playwright"` gives the guard's one line before anything fails to resolve,
 * and a project without @playwright/test (an optional peer) is told what to install. Its ESM entry
 * re-exports this same CommonJS module, so the runner and these fixtures share one `test`.
 */
function load(): typeof import("@playwright/test") {
  try {
    return createRequire(import.meta.url)("@playwright/test") as typeof import("@playwright/test");
  } catch (error) {
    if ((error as { code?: string }).code !== "MODULE_NOT_FOUND") throw error;
    throw new Error("queue-devstack/playwright needs @playwright/test: npm install -D @playwright/test", { cause: error });
  }
}

export const playwright = load();
