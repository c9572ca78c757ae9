import { rename, rm, writeFile } from "node:fs/promises";

/**
 * Replaces a file whole or not at all (temp file + rename); a failed write or rename leaves no temp file.
 * Not writeFileAtomic's body: manifest.ts is one of the committed genesis's inputs (genesis.ts), and a
 * change to it would make that genesis stale.
 */
export async function replaceFile(file: string, data: Uint8Array | string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(tmp, data);
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}
