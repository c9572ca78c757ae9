import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Writes a file whole or not at all (temp file + rename); a failed write or rename leaves no temp file.
 * Its folder is made first, unless `makeFolder` is false: a path a user gave (stack.save's, say) is
 * written where it names, or refused, never with folders made on the way.
 */
export async function writeFileAtomic(file: string, data: Uint8Array | string, options: { makeFolder?: boolean } = {}): Promise<void> {
  if (options.makeFolder !== false) await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(tmp, data);
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}
