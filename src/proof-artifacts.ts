import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { DeploymentConfig } from "./config/deployment-config.ts";

export class ArtifactMismatchError extends Error {
  override name = "ArtifactMismatchError";
}

export interface LoadedArtifact {
  bytes: Buffer;
  contentType: string;
  etag: string;
}

/**
 * Reads every proof file the manifest lists and checks its size and sha256. The runtime keeps the
 * checked bytes and serves those, so what a client downloads is exactly what was verified at start.
 */
export async function loadProofArtifacts(config: DeploymentConfig, dir: string): Promise<Map<string, LoadedArtifact>> {
  const loaded = new Map<string, LoadedArtifact>();
  for (const artifact of config.queue.proof.artifacts) {
    if (artifact.name !== path.basename(artifact.name)) throw new ArtifactMismatchError(`artifact name ${artifact.name} is not a plain file name`);
    let bytes: Buffer;
    try {
      bytes = await readFile(path.join(dir, artifact.name));
    } catch {
      throw new ArtifactMismatchError(`proof artifact ${artifact.name} is missing from ${dir}`);
    }
    const sha256 = `0x${createHash("sha256").update(bytes).digest("hex")}`;
    if (sha256 !== artifact.sha256 || bytes.length !== artifact.size) {
      throw new ArtifactMismatchError(
        `proof artifact ${artifact.name} is ${bytes.length} bytes with sha256 ${sha256}; the manifest says ${artifact.size} bytes, ${artifact.sha256}`,
      );
    }
    loaded.set(artifact.name, { bytes, contentType: artifact.contentType, etag: `"${sha256.slice(2)}"` });
  }
  return loaded;
}
