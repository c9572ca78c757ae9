import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * The docs' code blocks named `<folder>/<path>` (```ts hardhat-project/hardhat.config.ts), by path in
 * that folder: a project of its own that a consumer part writes, installs and runs.
 */
export function folderFiles(readme: string, folder: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const match of readme.matchAll(new RegExp(`^\`\`\`\\w+ ${folder}/([\\w./-]+)\\n([\\s\\S]*?)^\`\`\`$`, "gm"))) files.set(match[1] as string, match[2] as string);
  return files;
}

/** Writes those files under `dir`, each in its folder. */
export async function writeFolderFiles(dir: string, files: Map<string, string>): Promise<void> {
  for (const [name, text] of files) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), text);
  }
}
