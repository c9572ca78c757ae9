import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import { open as openFile, type FileHandle } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import type { DeploymentConfig } from "./config/deployment-config.ts";

export class ArtifactMismatchError extends Error {
  override name = "ArtifactMismatchError";
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
        const checked = await check(handle);
        if (checked.sha256 !== artifact.sha256 || checked.size !== artifact.size) {
          throw new ArtifactMismatchError(
            `proof artifact ${artifact.name} is ${checked.size} bytes with sha256 ${checked.sha256}; the manifest says ${artifact.size} bytes, ${artifact.sha256}`,
          );
        }
        let changed = checked.changed;
        const open = async () => {
          // Written to in place since it was checked (its change time moved): checked again before it is served.
          const now = await handle.stat();
          if (now.ctimeMs !== changed) {
            const again = await check(handle);
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
 * change times): a stack started again in the same process (a test suite, a fixture) does not hash 12 MB
 * again. Any write to a file, or another file in its place, changes its identity.
 */
const checkedFiles = new Map<string, string>();
const identity = (stats: Stats) => `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;

/** The open file's size and sha256, and its change time as of before they were read. */
async function check(handle: FileHandle): Promise<{ size: number; sha256: string; changed: number }> {
  const stats = await handle.stat();
  const key = identity(stats);
  let sha256 = checkedFiles.get(key);
  if (sha256 === undefined) {
    // Streamed through the hash: the whole file in one buffer would stay in malloc's arena, 12 MB of every
    // idle runtime's resident memory.
    const hash = createHash("sha256");
    let size = 0;
    for await (const chunk of handle.createReadStream({ start: 0, autoClose: false, emitClose: false }) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      size += chunk.length;
    }
    // Not the size it had: written to while read, so not what was asked for (and not remembered).
    if (size !== stats.size) return { size, sha256: "0x", changed: stats.ctimeMs };
    sha256 = `0x${hash.digest("hex")}`;
    checkedFiles.set(key, sha256);
  }
  return { size: stats.size, sha256, changed: stats.ctimeMs };
}
