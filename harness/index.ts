// The harness's public API: what test suites and scripts import.
import "../src/node-version-guard.ts"; // first: one line on an older Node, before anything needing 22 runs
export { startDevStack, PersistedStateError, PROOFS_VARIABLE } from "./stack.ts";
export type { DevStackOptions } from "./stack-options.ts";
export type { DevStack, StackDiagnostics } from "./dev-stack.ts";
export { startChain, ChainStartError, AnvilExitedError, CHAIN_ID, type Chain, type DevAccount } from "./chain/index.ts";
export { PortInUseError } from "./chain/index.ts";
export { AllowedHostError } from "./dev/index.ts";
export { ForkUpstreamError, resolveForkPoint, type ForkPoint } from "./chain/index.ts";
export { PinError } from "./deployment/index.ts";
export { SnapshotError, type StackSnapshot } from "./snapshot/index.ts";
export { BundleError, type BundleErrorParameters, type BundlePart } from "./bundle/index.ts";
export { QueueDevstackError, type QueueDevstackErrorOptions } from "../src/errors/index.ts";
export { traceOf, type Trace, type TracedCall } from "./trace/index.ts";
export type { ReplayAnswer, ReplayOptions, FrameChange, TraceDiff, DiffFrame } from "./replay/index.ts";
export type { ActionControls } from "./dev/index.ts";
export { ACTION_ROUTES, DEFAULT_SWAP_PRICES } from "./deployment/index.ts";
export { StackAlreadyRunningError } from "./state-dir/index.ts";
export { StackInfo } from "./stack-info/index.ts";
export { loadFixtures, inspectFixtures, buildFixtures, type CompiledFixtures } from "./deployment/index.ts";
export { DEV_ASSETS, DEV_TOKEN_GRANT } from "./deployment/index.ts";
export type { StepEvent, ProgressListener } from "./part/index.ts";
export { redactUrl } from "../src/redact.ts";
export { stackEnvironment, ENV_PREFIX } from "./exec/index.ts";
export { defineStackFixture, type StackFixture } from "./stack-fixture.ts";
export { diagnosticsText } from "./diagnostics-text.ts";
export { PatchError, type PatchResult } from "./patch/index.ts";
export { seed, SEED_SCENARIOS, SEED_CONFIRMATIONS, SeedError, type SeedResult, type SeededAccount, type SeededOperation, type SeededState, type SeedScenario } from "./seed/index.ts";
