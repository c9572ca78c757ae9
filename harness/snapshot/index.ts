// Snapshots of the whole stack, chain and operation store together: the core of stack.snapshot, revert,
// reset and loadFixture; and the control lock that runs the stack's dev controls one at a time (the
// stack creates it and hands it to the dev routes, the snapshots, the patcher, replays and saves). Part: snapshots.
export { snapshotsPart, type SnapshotControls } from "./parts.ts";
export { SnapshotError, snapshotHooks, type StackSnapshot } from "./snapshot.ts";
export { controlLock, type ControlLock } from "./control-lock.ts";
