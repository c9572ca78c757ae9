/**
 * The docs' code blocks named `<folder>/<path>` (```ts hardhat-project/hardhat.config.ts), by path in
 * that folder: a project of its own that a consumer part writes, installs and runs.
 */
export function folderFiles(readme: string, folder: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const match of readme.matchAll(new RegExp(`^\`\`\`\\w+ ${folder}/([\\w./-]+)\\n([\\s\\S]*?)^\`\`\`$`, "gm"))) files.set(match[1] as string, match[2] as string);
  return files;
}
