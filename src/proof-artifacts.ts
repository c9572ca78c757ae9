import { createHash } from "node:crypto";
import type { BigIntStats } from "node:fs";
import { open as openFile, type FileHandle } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import type { DeploymentConfig } from "./config/deployment-config.ts";
import { QueueDevstackError } from "./errors/index.ts";

export class ArtifactMismatchError extends QueueDevstackError {
  override name = "ArtifactMismatchError";
  readonly code = "artifact_mismatch";
}

/**
 * A proof file, checked against the manifest at start and held open: it is served from that open file,
 * so a file replaced since (a rebuild writes a new one) does not change what is served, and its 12 MB
 * are read when asked for, not kept in memory by every idle runtime.
 */
export interface LoadedArtifact {
  contentType: string;
  etag: string;
  size: number;
  /**
   * The checked bytes as a stream; undefined if the open file was written to in place since it was
   * checked and no longer holds them.
   */
  open(): Promise<Readable | undefined>;
}

/** The proof files, each with the file handle it is served from: close() releases them. */
export interface ProofArtifacts {
  byName: ReadonlyMap<string, LoadedArtifact>;
  close(): Promise<void>;
}

/**
 * Opens every proof file the manifest lists and checks its size and sha256; it is served from the handle
 * checked, so what a client downloads is exactly what was verified at start.
 */
export async function loadProofArtifacts(config: DeploymentConfig, dir: string): Promise<ProofArtifacts> {
  const handles: FileHandle[] = [];
  const close = async () => void (await Promise.all(handles.splice(0).map((handle) => handle.close().catch(() => {}))));
  try {
    const loaded = await Promise.all(
      config.queue.proof.artifacts.map(async (artifact): Promise<[string, LoadedArtifact]> => {
        if (artifact.name !== path.basename(artifact.name)) throw new ArtifactMismatchError(`artifact name ${artifact.name} is not a plain file name`);
        let handle: FileHandle;
        try {
          handle = await openFile(path.join(dir, artifact.name), "r");
        } catch {
          throw new ArtifactMismatchError(`proof artifact ${artifact.name} is missing from ${dir}`);
        }
        handles.push(handle);
        const checked = await check(handle, artifact.sha256);
        if (checked.sha256 !== artifact.sha256 || checked.size !== artifact.size) {
          throw new ArtifactMismatchError(
            `proof artifact ${artifact.name} is ${checked.size} bytes with sha256 ${checked.sha256}; the manifest says ${artifact.size} bytes, ${artifact.sha256}`,
          );
        }
        let changed = checked.changed;
        const open = async () => {
          // Written to in place since it was checked (its change time moved): checked again before it is served.
          const now = await handle.stat({ bigint: true });
          if (now.ctimeNs !== changed) {
            const again = await check(handle, artifact.sha256);
            if (again.sha256 !== artifact.sha256 || again.size !== artifact.size) return undefined;
            changed = again.changed;
          }
          return handle.createReadStream({ start: 0, end: artifact.size - 1, autoClose: false, emitClose: false });
        };
        return [artifact.name, { contentType: artifact.contentType, etag: `"${artifact.sha256.slice(2)}"`, size: artifact.size, open }];
      }),
    );
    return { byName: new Map(loaded), close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Hashes proof files ahead of loadProofArtifacts (a dev stack does it while anvil boots): their sha256 is
 * remembered by file identity, so the check at start finds them hashed unless a file changed since.
 * A file that cannot be read is left to that check to report.
 */
export async function hashProofFiles(dir: string, names: readonly string[]): Promise<void> {
  await Promise.all(
    names.map(async (name) => {
      const handle = await openFile(path.join(dir, path.basename(name)), "r").catch(() => undefined);
      try {
        if (handle) await check(handle);
      } catch {
        // reported by loadProofArtifacts
      } finally {
        await handle?.close();
      }
    }),
  );
}

/**
 * sha256 of the files this process has checked, by their identity (device, inode, size, modification and
 * change times in nanoseconds, as git's index keeps them): a stack started again in the same process (a
 * test suite, a fixture) does not hash 12 MB again. Any write to a file, or another file in its place,
 * changes its identity. Each says whether the file was settled when its hashing began (see SETTLED_NS),
 * and whether this process used it (one kept by an earlier process may be of a file gone since).
 */
const checkedFiles = new Map<string, { sha256: string; settled: boolean; used: boolean }>();
const identity = (stats: BigIntStats) => `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
const nowNs = () => BigInt(Date.now()) * 1_000_000n;

/**
 * A file's identity is trusted for its hash only if it was last changed this long before its hashing
 * began: a write within the file system's timestamp granularity (up to 2 s) after the hash could leave
 * the identity as it was (git's "racily clean" entries; a dev stack's proof files are months old).
 */
const SETTLED_NS = 2_000_000_000n;

/**
 * The hashes checked so far, to keep across processes (a dev stack's state dir): only those of files
 * settled when hashed (see SETTLED_NS), and used by this process (a kept entry of a file rebuilt or gone
 * is not kept again, so the cache does not grow launch after launch). Given back with
 * rememberProofHashes, a file whose identity changed since is hashed again, as by a new process.
 */
export function knownProofHashes(): Record<string, string> {
  const known: Record<string, string> = {};
  for (const [key, { sha256, settled, used }] of checkedFiles) if (settled && used) known[key] = sha256;
  return known;
}

/** Hashes kept by an earlier process (knownProofHashes), by file identity; anything malformed is ignored. */
export function rememberProofHashes(known: unknown): void {
  if (typeof known !== "object" || known === null) return;
  for (const [key, sha256] of Object.entries(known)) {
    if (/^\d+:\d+:\d+:\d+:\d+$/.test(key) && typeof sha256 === "string" && /^0x[0-9a-f]{64}$/.test(sha256) && !checkedFiles.has(key)) {
      // Kept because it was settled when hashed: kept again.
      checkedFiles.set(key, { sha256, settled: true, used: false });
    }
  }
}

/** Forgets every hash (a test's stand-in for a new process). */
export function forgetProofHashes(): void {
  checkedFiles.clear();
}

/**
 * The open file's size and sha256, and its change time (ns) as of before they were read. A hash kept for
 * its identity is taken unless another one is `expected` (a cache in a user's folder may be edited or
 * damaged): then the file is hashed.
 */
async function check(handle: FileHandle, expected?: string): Promise<{ size: number; sha256: string; changed: bigint }> {
  const stats = await handle.stat({ bigint: true });
  const key = identity(stats);
  const size = Number(stats.size);
  const known = checkedFiles.get(key);
  if (known !== undefined && (expected === undefined || known.sha256 === expected)) {
    known.used = true;
    return { size, sha256: known.sha256, changed: stats.ctimeNs };
  }
  const settled = stats.ctimeNs < nowNs() - SETTLED_NS;
  // Streamed through the hash: the whole file in one buffer would stay in malloc's arena, 12 MB of every
  // idle runtime's resident memory.
  const hash = createHash("sha256");
  let read = 0;
  for await (const chunk of handle.createReadStream({ start: 0, autoClose: false, emitClose: false }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    read += chunk.length;
  }
  // Not the size it had: written to while read, so not what was asked for (and not remembered).
  if (read !== size) return { size: read, sha256: "0x", changed: stats.ctimeNs };
  const sha256 = `0x${hash.digest("hex")}`;
  checkedFiles.set(key, { sha256, settled, used: true });
  return { size, sha256, changed: stats.ctimeNs };
}
