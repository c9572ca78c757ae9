import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

/**
 * A preload (`node --import`) that lists every module the process resolves (node:module's in-thread
 * hooks), one URL a line, in the file LOADED_MODULES_OUT. Returns its URL, and a reader of that list.
 */
export async function loadedModulesPreload(dir: string): Promise<{ preload: string; out: string; read: () => Promise<string[]> }> {
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
  const read = async () => [...new Set((await readFile(out, "utf8")).split("\n").filter(Boolean))];
  return { preload: pathToFileURL(file).href, out, read };
}
