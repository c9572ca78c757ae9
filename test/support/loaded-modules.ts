import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

/**
 * A preload (`node --import`) that lists every module the process resolves (node:module's in-thread
 * hooks), one URL a line, in the file LOADED_MODULES_OUT. Returns its URL, and a reader of that list.
 */
export async function loadedModulesPreload(dir: string): Promise<{ preload: string; out: string; read: (written?: string) => Promise<string[]> }> {
  const file = path.join(dir, "loaded-modules.mjs");
  const out = path.join(dir, "loaded-modules.txt");
  await writeFile(
    file,
    `import { registerHooks } from "node:module";
import { appendFileSync } from "node:fs";
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    appendFileSync(process.env.LOADED_MODULES_OUT, resolved.url + "\\n");
    return resolved;
  },
});
`,
  );
  // Each launch may write a file of its own (LOADED_MODULES_OUT), so that launches can run side by side.
  const read = async (written = out) => [...new Set((await readFile(written, "utf8")).split("\n").filter(Boolean))];
  return { preload: pathToFileURL(file).href, out, read };
}
