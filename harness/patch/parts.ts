import { rm } from "node:fs/promises";
import path from "node:path";
import type { PublicClient } from "viem";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";
import type { CompiledFixtures } from "../deployment/index.ts";
import { definePart, timed, type StackPart } from "../part/index.ts";
import type { DevStackOptions } from "../stack-options.ts";
import { createPatcher, loadPatchRecords, type Patcher } from "./patcher.ts";
import { PATCHES_FILE } from "./records.ts";

/**
 * The stack's patcher, with the patches it starts with: those its state dir holds (a loaded bundle's, a
 * resumed stack's), then each `--patch Name=<path>` in order. Before the runtime starts, which checks
 * the patched chain against the patched manifest as any other.
 */
export function patchPart(
  options: Pick<DevStackOptions, "patch" | "persist" | "load" | "onProgress">,
  args: { chain: { client: PublicClient; rpcUrl: string }; manifest: DeploymentConfig; dir: { stateDir: string; manifestPath: string; resume: boolean }; contracts: { fixtures: CompiledFixtures } },
): StackPart<Patcher> {
  return definePart("patches", async (onStop) => {
    const file = path.join(args.dir.stateDir, PATCHES_FILE);
    // A new chain has no patch yet, whatever an earlier stack left; a persisted stack keeps its records.
    if (!args.dir.resume) await rm(file, { force: true });
    if (!options.persist) onStop(() => rm(file, { force: true }));
    const patcher = createPatcher({ client: args.chain.client, rpcUrl: args.chain.rpcUrl, manifest: args.manifest, manifestPath: args.dir.manifestPath, stateDir: args.dir.stateDir, fixtures: args.contracts.fixtures });
    patcher.restore(await loadPatchRecords({ stateDir: args.dir.stateDir, client: args.chain.client }), { loaded: options.load !== undefined });
    for (const spec of options.patch ?? []) {
      const at = spec.indexOf("=");
      if (at <= 0 || at === spec.length - 1) throw new Error(`--patch ${spec}: give it as <contract>=<path>, as Pool=contracts/Pool.sol`);
      const [target, source] = [spec.slice(0, at), spec.slice(at + 1)];
      await timed(options.onProgress, `patch ${target}`, () => patcher.patch(target, source), (r) => `${r.name} ${r.address} now ${r.source} (code ${r.codeHash.slice(0, 10)}…)`);
    }
    return patcher;
  });
}
