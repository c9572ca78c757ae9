import { relayControl } from "../../src/relay/control.ts";
import type { RpcFaultProxy } from "../chain/index.ts";
import { definePart, type StackPart } from "../part/index.ts";
import type { StackRuntime } from "../runtime/index.ts";
import type { ControlLock } from "./control-lock.ts";
import { createSnapshots, SnapshotError, type StackSnapshot } from "./snapshot.ts";

export interface SnapshotControls<S> {
  take(): Promise<StackSnapshot>;
  revert(snapshot: StackSnapshot): Promise<void>;
  /** Back to the clean state, taken when the stack started. */
  reset(): Promise<void>;
  /** Hardhat's loadFixture for the whole stack (see DevStack.loadFixture). */
  loadFixture<T>(stack: S, setup: (stack: S) => Promise<T>): Promise<T>;
}

/**
 * Snapshots of the whole stack, chain and operation store together, the clean one taken as the stack is
 * ready; a revert also clears the faults and goes back to the original deployment. Each takes the dev
 * controls' lock (a fixture's setup runs outside it: it may use the controls).
 */
export function snapshotsPart<S>(args: {
  chain: { rpcUrl: string };
  /** A fork's anvil fork (the forwarder at the fork point): what a reset that falls back forks again. */
  fork?: { url: string; blockNumber: bigint } | undefined;
  runtime: StackRuntime;
  faults: RpcFaultProxy;
  /** The deployment switch (harness/dev): a revert goes back to the original deployment. */
  deployments: { discard(): Promise<void> };
  lock: ControlLock;
  /** Run after each revert, inside the lock: what the stack's baseline keeps whatever the snapshot (its patches). */
  afterRevert?: () => Promise<void>;
}): StackPart<SnapshotControls<S>> {
  return definePart("snapshots", async () => {
    const { faults, deployments, lock } = args;
    const log = args.runtime.app.log;
    const snapshots = createSnapshots({
      rpcUrl: args.chain.rpcUrl,
      control: relayControl(args.runtime.app),
      fork: args.fork,
      onReload: (why, snapshot) => log.warn({ detail: why }, `reset fell back: anvil's snapshot of block ${snapshot.blockNumber} was gone, so the clean chain was reloaded from its dump (new snapshot ids taken for next time)`),
    });
    // The clean state, taken now and kept whole (a dump): reset() goes back to it whatever happened to anvil's ids.
    const clean = await snapshots.take({ durable: true });
    const loaded = new Map<(stack: S) => Promise<unknown>, { snapshot: StackSnapshot; value: unknown }>();
    const take = () => lock.run(() => snapshots.take());
    const revert = (snapshot: StackSnapshot) =>
      lock.run(async () => {
        // A fault belongs to the moment it was switched on; the alternate deployment may be reverted away.
        faults.clear();
        await deployments.discard();
        await snapshots.revert(snapshot);
        await args.afterRevert?.();
        for (const [setup, fixture] of loaded) if (!snapshots.has(fixture.snapshot)) loaded.delete(setup);
      });
    return {
      take,
      revert,
      reset: () => revert(clean),
      async loadFixture<T>(stack: S, setup: (stack: S) => Promise<T>): Promise<T> {
        const known = loaded.get(setup);
        if (known) {
          try {
            await revert(known.snapshot);
            return known.value as T;
          } catch (error) {
            // Its snapshot lost (a reorg of its block, or a reload): built again below, from the clean state.
            // (A reset in between drops it too, as any revert drops later snapshots: see revert() above.)
            if (!(error instanceof SnapshotError) || snapshots.has(known.snapshot)) throw error;
            loaded.delete(setup);
            log.warn({ detail: error.message }, "a named fixture's snapshot was lost: its setup runs again");
          }
        }
        await revert(clean);
        const value = await setup(stack);
        loaded.set(setup, { snapshot: await take(), value });
        return value;
      },
    };
  });
}
