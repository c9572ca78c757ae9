import { createHash } from "node:crypto";
import type { DeploymentConfig } from "../../src/config/deployment-config.ts";

export class ArtifactIntegrityError extends Error {
  override name = "ArtifactIntegrityError";
}

export interface ProofFiles {
  wasm: Uint8Array;
  zkey: Uint8Array;
  verificationKey: unknown;
}

/**
 * Downloads the proof files a config lists from the queue and refuses any whose size or sha256 is not
 * the config's. (The config itself must first pass the client's rule-6 check against reviewed data.)
 */
export async function fetchProofFiles(queueUrl: string, config: DeploymentConfig, fetchFn: typeof fetch = fetch): Promise<ProofFiles> {
  const byRole = new Map<string, Uint8Array>();
  for (const artifact of config.queue.proof.artifacts) {
    const response = await fetchFn(new URL(artifact.path, queueUrl));
    if (!response.ok) throw new ArtifactIntegrityError(`GET ${artifact.path} answered ${response.status}`);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const sha256 = `0x${createHash("sha256").update(bytes).digest("hex")}`;
    if (sha256 !== artifact.sha256 || bytes.length !== artifact.size) {
      throw new ArtifactIntegrityError(`${artifact.name}: got ${bytes.length} bytes with sha256 ${sha256}, the config says ${artifact.size} bytes, ${artifact.sha256}`);
    }
    byRole.set(artifact.role, bytes);
  }
  const wasm = byRole.get("wasm");
  const zkey = byRole.get("zkey");
  const vk = byRole.get("verificationKey");
  if (!wasm || !zkey || !vk) throw new ArtifactIntegrityError("the config does not list a wasm, a zkey and a verification key");
  return { wasm, zkey, verificationKey: JSON.parse(Buffer.from(vk).toString("utf8")) };
}
