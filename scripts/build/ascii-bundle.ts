import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * The source with each non-ASCII character written as `\u{…}`. For esbuild's output only: it escapes such
 * characters in code (its default charset), so the ones left are in comments, where an escape reads the
 * same. One of them is enough for V8 to hold the whole file's source as a two-byte string (issue 32).
 */
export function asciiOnly(source: string): string {
  return source.replace(/[^\x00-\x7f]/gu, (c) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`);
}

/** Makes ASCII-only each .js file under folder (its subfolders too) written at or after since (ms since the epoch): a build's output. */
export async function makeBuildAscii(folder: string, since: number): Promise<void> {
  for (const entry of await readdir(folder, { recursive: true })) {
    const file = path.join(folder, entry);
    if (!file.endsWith(".js") || (await stat(file)).mtimeMs < since) continue;
    const source = await readFile(file, "utf8");
    const ascii = asciiOnly(source);
    if (ascii !== source) await writeFile(file, ascii);
  }
}
