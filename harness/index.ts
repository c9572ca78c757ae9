// The harness's public API: what test suites and scripts import.
import "../src/node-version-guard.ts"; // first: one line on an older Node, before anything needing 22 runs
export { startDevStack, PersistedStateError, type DevStack, type DevStackOptions, type StackDiagnostics } from "./stack.ts";
export { startChain, ChainStartError, AnvilExitedError, CHAIN_ID, type Chain, type DevAccount } from "./chain.ts";
export { PortInUseError } from "./ports.ts";
export { AllowedHostError } from "./allowed-hosts.ts";
export { ForkUpstreamError, resolveForkPoint, type ForkPoint } from "./fork.ts";
export { PinError } from "./pin.ts";
export { SnapshotError, type StackSnapshot } from "./snapshot.ts";
export { BundleError } from "./bundle.ts";
export { traceOf, type Trace, type TracedCall } from "./trace.ts";
export type { ActionControls } from "./action-controls.ts";
export { ACTION_ROUTES, DEFAULT_SWAP_PRICES } from "./deploy.ts";
export { StackAlreadyRunningError } from "./leftovers.ts";
export { StackInfo } from "./stack-info.ts";
export { loadFixtures, inspectFixtures, buildFixtures, type CompiledFixtures } from "./fixtures.ts";
export { DEV_ASSETS, DEV_TOKEN_GRANT } from "./deploy.ts";
export type { StepEvent, ProgressListener } from "./progress.ts";
export { redactUrl } from "../src/redact.ts";
