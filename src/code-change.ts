import { createHash } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { PublicClient } from "viem";
import { DeploymentConfig } from "./config/deployment-config.ts";
import { DeploymentMismatchError, verifyDeployment } from "./chain/verify-deployment.ts";
import { PatchedContract } from "./config/patched-contract.ts";

export { PatchedContract };

/**
 * How a development harness tells the runtime that it replaced a contract's code (anvil_setCode): the
 * manifest it now serves, differing from the one the runtime checked at start in code hashes only, and
 * what was patched (its health says so). Not an HTTP route: only code in the runtime's own process can
 * reach it, and the chain is checked against the new manifest first, so the runtime accepts the code it
 * was told of and no other.
 */
export interface CodeChanges {
  accept(manifest: Uint8Array, patched: readonly PatchedContract[]): Promise<void>;
  /** What the runtime was told is patched (its health's `patched`). */
  patched(): readonly PatchedContract[];
}

const attached = new WeakMap<FastifyInstance, CodeChanges>();

/** The manifest's code hashes, each by where it stands: all a code change may alter. */
function withoutCodeHashes(config: DeploymentConfig): string {
  const copy = structuredClone(config);
  copy.poolRuntimeCodeHash = "";
  copy.queue.proof.verifier.runtimeCodeHash = "";
  for (const route of copy.routes) if (route.action === "external") route.adapter.runtimeCodeHash = "";
  return JSON.stringify(copy);
}

/**
 * The part of the runtime's context a code change rewrites (a RuntimeContext is one). Spelled out, not
 * picked from RuntimeContext: this module's types are public (src/server.ts re-exports it), and
 * RuntimeContext's would bring Node's Buffer into a consumer's types.
 */
export interface CodeChangeContext {
  config: DeploymentConfig;
  configBytes: Uint8Array;
  configEtag: string;
  patched: PatchedContract[];
}

export function attachCodeChanges(app: FastifyInstance, context: CodeChangeContext, chain: PublicClient): void {
  attached.set(app, {
    async accept(bytes, patched) {
      const next = DeploymentConfig.parse(JSON.parse(Buffer.from(bytes).toString("utf8")));
      if (withoutCodeHashes(next) !== withoutCodeHashes(context.config)) {
        throw new DeploymentMismatchError("a code change may alter the manifest's code hashes only: this one changes more");
      }
      await verifyDeployment(chain, next);
      // In place: the relayer and the quoter hold this same object.
      context.config.poolRuntimeCodeHash = next.poolRuntimeCodeHash;
      context.config.queue.proof.verifier.runtimeCodeHash = next.queue.proof.verifier.runtimeCodeHash;
      next.routes.forEach((route, i) => {
        const current = context.config.routes[i];
        if (route.action === "external" && current?.action === "external") current.adapter.runtimeCodeHash = route.adapter.runtimeCodeHash;
      });
      context.configBytes = Buffer.from(bytes);
      context.configEtag = `"${createHash("sha256").update(context.configBytes).digest("base64url")}"`;
      context.patched = [...patched];
    },
    patched: () => context.patched,
  });
}

/** The runtime's code-change entry, for the harness that started it (undefined for an app that is not a queue runtime). */
export function codeChanges(app: FastifyInstance): CodeChanges | undefined {
  return attached.get(app);
}
