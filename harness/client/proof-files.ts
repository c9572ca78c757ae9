import { createHash } from "node:crypto";
import type { DeploymentConfig, ProofArtifact } from "../../src/config/deployment-config.ts";
import { sameOriginUrl } from "./same-origin.ts";
import { QueueDevstackError } from "../../src/errors/index.ts";

export class ArtifactIntegrityError extends QueueDevstackError {
  override name = "ArtifactIntegrityError";
  readonly code = "artifact_integrity_failed";
}

/**
 * The sha256 (0x hex) of each proof file as the app reviewed it (spec rule 6). Only these files are
 * ever proved or verified with: a queue that serves others, even with matching hashes in its own
 * config, is refused. ReviewedDeployment carries them.
 */
export interface ProofFilePins {
  wasmSha256: string;
  zkeySha256: string;
  verificationKeySha256: string;
}

/** The proof files' bytes: the witness generator, the proving key and the verification key (JSON). */
export interface ProofFiles {
  wasm: Uint8Array;
  zkey: Uint8Array;
  verificationKey: Uint8Array;
}

type Role = keyof ProofFiles;
const PIN_OF = { wasm: "wasmSha256", zkey: "zkeySha256", verificationKey: "verificationKeySha256" } as const satisfies Record<Role, keyof ProofFilePins>;
const ROLES = Object.keys(PIN_OF) as Role[];

export const sha256Of = (bytes: Uint8Array): string => `0x${createHash("sha256").update(bytes).digest("hex")}`;
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Refuses proof files that are not the pinned ones. */
export function checkProofFiles(files: ProofFiles, pins: ProofFilePins): void {
  for (const role of ROLES) {
    const sha256 = sha256Of(files[role]);
    if (!same(sha256, pins[PIN_OF[role]])) throw new ArtifactIntegrityError(`${role}: sha256 ${sha256}, the reviewed pin is ${pins[PIN_OF[role]]}`);
  }
}

/** The config's one entry for a role; a config listing none or several is refused. */
export function artifactOf(config: DeploymentConfig, role: Role): ProofArtifact {
  const listed = config.queue.proof.artifacts.filter((a) => a.role === role);
  if (listed.length !== 1) throw new ArtifactIntegrityError(`the config lists ${listed.length} ${role} files, not one`);
  return listed[0] as ProofArtifact;
}

/**
 * Downloads the proof files a config lists from the queue. A config whose files are not the reviewed
 * ones is refused before anything is downloaded; each file's bytes are then checked against the
 * reviewed pin (and the config's size), so a queue cannot substitute files by listing their hashes.
 * (The config itself must first pass the client's rule-6 check: createQueueClient's beforePrepare.)
 */
export async function fetchProofFiles(queueUrl: string, config: DeploymentConfig, pins: ProofFilePins, fetchFn: typeof fetch = fetch): Promise<ProofFiles> {
  const artifacts = ROLES.map((role) => {
    const artifact = artifactOf(config, role);
    const pin = pins[PIN_OF[role]];
    if (!same(artifact.sha256, pin)) throw new ArtifactIntegrityError(`${artifact.name}: the config lists sha256 ${artifact.sha256}, the reviewed pin is ${pin}`);
    return { role, artifact, pin };
  });
  const files: Partial<ProofFiles> = {};
  for (const { role, artifact, pin } of artifacts) {
    const response = await fetchFn(sameOriginUrl(artifact.path, queueUrl));
    if (!response.ok) throw new ArtifactIntegrityError(`GET ${artifact.path} answered ${response.status}`);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const sha256 = sha256Of(bytes);
    if (!same(sha256, pin) || bytes.length !== artifact.size) {
      throw new ArtifactIntegrityError(`${artifact.name}: got ${bytes.length} bytes with sha256 ${sha256}, the config says ${artifact.size} bytes and the reviewed pin is ${pin}`);
    }
    files[role] = bytes;
  }
  return files as ProofFiles;
}
