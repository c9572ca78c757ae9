// The harness's public API: what test suites and scripts import.
export { startDevStack, PersistedStateError, type DevStack, type DevStackOptions, type StackDiagnostics } from "./stack.ts";
export { startChain, ChainStartError, CHAIN_ID, type Chain, type DevAccount } from "./chain/chain.ts";
export { ForkUpstreamError, resolveForkPoint, type ForkPoint } from "./chain/fork.ts";
export { PinError } from "./deployment/pin.ts";
export { SnapshotError, type StackSnapshot } from "./dev/snapshot.ts";
export { BundleError } from "./dev/bundle.ts";
export { traceOf, type Trace, type TracedCall } from "./dev/trace.ts";
export type { ActionControls } from "./dev/action-controls.ts";
export { ACTION_ROUTES, DEFAULT_SWAP_PRICES } from "./deployment/deploy.ts";
export { StackAlreadyRunningError } from "./state-dir/leftovers.ts";
export { StackInfo } from "./state-dir/stack-info.ts";
export { loadFixtures, inspectFixtures, buildFixtures, type CompiledFixtures } from "./deployment/fixtures.ts";
export { DEV_ASSETS, DEV_TOKEN_GRANT } from "./deployment/deploy.ts";
export type { StepEvent, ProgressListener } from "./part/progress.ts";
export { redactUrl } from "../src/redact.ts";
