// The options of `queue-devstack` (and of `exec`, which takes the same): one row each. parseArgs's
// configuration, --help's Options and Environment (help.ts) and docs/cli.md's table
// (test/cli-options.test.ts checks it) are made from these rows, so a new option is one row here.
// Imports nothing: --help and a mistake in the command line answer before anything else is loaded.

/** One option of the command line. */
export type CliOption = {
  readonly type: "string" | "boolean";
  /** What its value looks like, in --help and the docs: `<url>`, `groth16|dev`. */
  readonly value?: string;
  readonly short?: string;
  /** Repeatable: its values come as a list. */
  readonly multiple?: true;
  /** parseArgs's default. None: the stack (or the checks after the parse) decides. */
  readonly default?: string | boolean;
  /** Under exec, where it differs (`null`: none). */
  readonly execDefault?: string | null;
  /** The variable read when the option is not given, and its line under --help's Environment. */
  readonly env?: { readonly name: string; readonly help: string };
  /** Its lines under --help's Options. None: the help says it elsewhere (--runs, in exec's usage). */
  readonly help?: readonly string[];
  /** Its row in docs/cli.md: the default in words (else made from `default`), and what it does. */
  readonly docs: { readonly default?: string; readonly text: string };
};

export const CLI_OPTIONS = {
  "fork-url": {
    type: "string",
    value: "<url>",
    env: { name: "DEVSTACK_FORK_URL", help: "the fork RPC, when --fork-url is not given" },
    help: ["fork this Sepolia RPC (prefer env DEVSTACK_FORK_URL: a command line is visible in ps);", "default: a fresh local chain"],
    docs: {
      default: "none",
      text: "fork this RPC instead of a fresh chain. It must report chain id 11155111, or the stack refuses to start. Credentials in it (userinfo, query, key-like path segments) are never printed or written, and never reach anvil: anvil forks a loopback forwarder owned by the stack, which adds them. Prefer the environment variable: your own command line is visible to every local user in `ps`.",
    },
  },
  "fork-block-number": {
    type: "string",
    value: "<n>",
    help: ["fork at block n; default: the upstream's latest, pinned at start"],
    docs: {
      default: "the upstream's latest, resolved once",
      text: "fork at this block. Without it the latest block is pinned at start and recorded in stack.json, so the run can be repeated exactly.",
    },
  },
  "fork-cache": {
    type: "string",
    value: "<dir>",
    help: ["where the upstream's immutable answers are kept, to replay a pinned fork offline", "(default ~/.cache/queue-devstack/fork-rpc)"],
    docs: {
      default: "`~/.cache/queue-devstack/fork-rpc` (`$XDG_CACHE_HOME/…`)",
      text: "keep the upstream's answers that cannot change, and serve them when it cannot be reached, so a fork at the same `--fork-block-number` starts again offline. See [The fork cache](#the-fork-cache).",
    },
  },
  pool: {
    type: "string",
    value: "<address>",
    help: ["pin this existing Pool on the fork instead of deploying the fixtures"],
    docs: { default: "deploy the fixtures", text: "fork mode: pin this existing Pool instead of deploying; its companions are read from it." },
  },
  "deployment-block": {
    type: "string",
    value: "<n>",
    help: ["the pinned Pool's deployment block; default: found on the chain"],
    docs: { default: "found on the chain", text: "the pinned Pool's deployment block. Checked: code at `n`, none at `n-1`. Without it, the first block with code is found by bisection." },
  },
  proofs: {
    type: "string",
    value: "groth16|dev",
    help: ["what the Pool's verifier expects (default groth16, real proofs); dev: DEVELOPMENT ONLY,", "clients compute the full witness but prove nothing (not with --pool)"],
    // QUEUE_DEVSTACK_PROOFS is the harness's default for every stack (ignored with --pool), not read here.
    docs: { default: "`groth16` (or `$QUEUE_DEVSTACK_PROOFS`)", text: "what the Pool's verifier expects. `dev`: dev proofs, development only; not with `--pool` ([Fast tests](fast-tests.md))." },
  },
  "state-dir": {
    type: "string",
    value: "<dir>",
    default: ".devstack",
    // exec: a temp state dir and free ports, so that two runs (CI jobs, a stack already up) never collide.
    execDefault: null,
    help: ["where manifest.json, stack.json and the operation store go (default .devstack)"],
    docs: {
      text: "where `manifest.json`, `stack.json`, `processes.json` and `queue.sqlite` (and `chain-state.json` with `--persist`) go. No key of the relayer and no fork credential is ever written there.",
    },
  },
  persist: {
    type: "boolean",
    default: false,
    help: ["keep the chain in the state dir and resume it next time, also after a crash (local mode)"],
    docs: { text: "keep the chain in `<state-dir>/chain-state.json` (written atomically on every new block and on exit) and resume it on the next start, also after a crash (local mode)." },
  },
  load: {
    type: "string",
    value: "<file>",
    help: [
      "start from a repro bundle (save; local or fork): the same chain, manifest and operations",
      "(into an empty state dir: pass --state-dir when .devstack holds a stack);",
      "its live operations wait for ctl relayer resume",
    ],
    docs: {
      text: "start from a [repro bundle](bundles.md) (`queue-devstack save`, `stack.save(file)`), local or fork: the same chain (blocks, hashes, balances, notes), manifest and operations, those in flight waiting for `ctl relayer resume`; into an empty state dir; a fork's bundle needs no upstream. A damaged or crafted bundle (a part over its cap or failing its check), or one of another format version, is refused in one `BundleError` line before anything starts (what only the running chain shows, once what started is stopped), the state dir left as found.",
    },
  },
  patch: {
    type: "string",
    value: "<contract>=<path>",
    multiple: true,
    help: ["once the Pool is deployed, pinned or loaded, patch a contract's code in place", "(repeatable: Pool=contracts/Pool.sol); see queue-devstack patch"],
    docs: {
      text: "once the Pool is deployed, pinned or loaded, and before the runtime starts, replace that contract's code with the file's (a `.sol` file or a Hardhat artifact), storage kept; repeatable, in order; with `--load` and `--fork-url … --pool …` too. A refused patch fails the start in one line. See [Patching](patching.md).",
    },
  },
  "chain-port": {
    type: "string",
    value: "<port>",
    default: "8545",
    execDefault: "0",
    help: ["anvil's port (default 8545; 0 = any free port)"],
    docs: { text: "anvil's port; `0` = any free port." },
  },
  "queue-port": {
    type: "string",
    value: "<port>",
    default: "8700",
    execDefault: "0",
    help: ["the queue runtime's port (default 8700; 0 = any free port)"],
    docs: { text: "the queue runtime's port; `0` = any free port." },
  },
  host: {
    type: "string",
    value: "<ip>",
    default: "127.0.0.1",
    help: ["interface to bind (default 127.0.0.1)"],
    docs: { text: "interface for both. Loopback unless you say otherwise." },
  },
  confirmations: {
    type: "string",
    value: "<n>",
    help: ["blocks before a relayed operation is confirmed (default 1; 2 with --seed)"],
    docs: { default: "1 (2 with `--seed`)", text: "blocks before a relayed operation is confirmed (mine more with `anvil_mine` to advance)" },
  },
  seed: {
    type: "string",
    value: "<scenario>",
    help: ["once started, put the stack in a state an app can render (demo: shielded balances, an", "operation in every state); it leaves the relayer paused and mining held (docs/seeding.md)"],
    docs: {
      text: "once started, and before the ready line, put the stack in a state an app can render (`demo`: shielded balances, an operation in every state, a swap awaiting finalize), leaving the relayer paused and mining held. Not with `exec`, `--load` or `--pool`; an unknown name is a usage error. See [Seeded scenarios](seeding.md).",
    },
  },
  "cors-origin": {
    type: "string",
    value: "<origin>",
    multiple: true,
    help: ["also let this browser origin call the queue (repeatable; any localhost port always may)"],
    docs: {
      default: "loopback origins only",
      text: "also let this browser origin call the queue and drive the dev controls (repeatable; see [Browsers (CORS)](queue-api.md#browsers-cors) and [Cross-site requests](dev-controls.md#cross-site-requests))",
    },
  },
  "allowed-host": {
    type: "string",
    value: "<name>",
    multiple: true,
    help: [
      "also answer the dev routes (/api/dev/*) under this Host name (repeatable; .name for its",
      "subdomains too); localhost, 127.0.0.0/8, [::1] and --host always may (DNS rebinding protection)",
    ],
    docs: {
      default: "loopback names and `--host` only",
      text: "also answer the dev routes under this `Host` name (repeatable): a name (`devbox.local`), an IP address, or `.name` for a name and all its subdomains. See [DNS rebinding](dev-controls.md#dns-rebinding).",
    },
  },
  json: {
    type: "boolean",
    default: false,
    help: ["print one JSON line (stack.json) when ready, nothing else on stdout"],
    docs: { text: "print one JSON line, the content of stack.json, on stdout when ready, and nothing else there: progress, the summary and `--verbose` request logs go to stderr." },
  },
  verbose: {
    type: "boolean",
    default: false,
    help: ["log every queue request"],
    docs: { text: "log every queue request." },
  },
  runs: {
    type: "string",
    value: "<n>",
    docs: { default: "1", text: "`exec` only: run the command n times, the stack reset (not restarted) between runs, until one fails." },
  },
  help: {
    type: "boolean",
    short: "h",
    default: false,
    help: ["show this help"],
    docs: { text: "print the usage, the options and the environment variables, and exit." },
  },
} as const satisfies Record<string, CliOption>;

export type CliOptionName = keyof typeof CLI_OPTIONS;

/** How an option is written in --help and the docs: `--fork-url <url>`, `-h, --help`. */
export function optionLabel(name: string, option: CliOption): string {
  return `${option.short ? `-${option.short}, ` : ""}--${name}${option.value ? ` ${option.value}` : ""}`;
}

/** A row's parseArgs configuration, typed as parseArgs wants it (a default makes the value always set). */
type ParseArgsOption<O extends CliOption> = { type: O["type"] } & (O extends { short: string } ? { short: string } : unknown) &
  (O extends { multiple: true } ? { multiple: true } : unknown) &
  (O extends { execDefault: null } ? { default?: string } : O extends { default: infer D } ? { default: D extends boolean ? boolean : string } : unknown);

/** parseArgs's `options`, from the rows; under exec, the exec defaults. */
export function parseArgsOptions(exec: boolean): { [K in CliOptionName]: ParseArgsOption<(typeof CLI_OPTIONS)[K]> } {
  const rows: [string, CliOption][] = Object.entries(CLI_OPTIONS);
  return Object.fromEntries(
    rows.map(([name, { type, short, multiple, default: fallback, execDefault }]) => {
      const value = exec && execDefault !== undefined ? execDefault : fallback;
      return [name, { type, ...(short ? { short } : {}), ...(multiple ? { multiple } : {}), ...(value === undefined || value === null ? {} : { default: value }) }];
    }),
  ) as never;
}

/** An option's environment variable, when the option is not given (an empty one counts as unset). */
export function fromEnvironment(name: CliOptionName): string | undefined {
  const option: CliOption = CLI_OPTIONS[name];
  return (option.env && process.env[option.env.name]) || undefined;
}
