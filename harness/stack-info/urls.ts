/**
 * Every URL of a stack that the CLI's summary prints, named once: its key in stack.json (and the CLI's
 * --json line), its variable under `exec` (QUEUE_DEVSTACK_<env>), its label in the summary. All three
 * are made from this list, so none names a URL the others lack.
 */
export const STACK_URLS = [
  { key: "rpcUrl", env: "RPC_URL", label: "RPC URL", note: "anvil" },
  { key: "queueUrl", env: "QUEUE_URL", label: "queue", note: "the {base_url}" },
  { key: "configUrl", env: "CONFIG_URL", label: "config", note: "the manifest, as the queue serves it" },
  { key: "docsUrl", env: "DOCS_URL", label: "API docs", note: "Swagger UI" },
  { key: "dashboardUrl", env: "DASHBOARD_URL", label: "dashboard", note: "" },
] as const;

export type StackUrlKey = (typeof STACK_URLS)[number]["key"];
