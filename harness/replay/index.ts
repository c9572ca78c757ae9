// Replay an operation: its stored request judged again by the relayer's own checks and simulation on
// the chain as it is now (or at a block), its call trace diffed against the original's, and, when
// asked, relayed again as a new operation linked to the original. The dev routes and the dashboard
// serve it; `queue-devstack replay` and stack.replay call it.
export { replayer, type Replayer, type ReplayDeps } from "./replay.ts";
export { replayRoutes, type ReplayRoutesOptions } from "./routes.ts";
export { diffTraces, describeChange } from "./trace-diff.ts";
export { pinnedChain } from "./pinned-chain.ts";
export { ReplayAnswer, ReplayOptions, ReplayLinks, TraceDiff, FrameChange, type DiffFrame } from "./schemas.ts";
