import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * The project a .sol file belongs to, as forge and Hardhat find it: the folder its source unit names are
 * relative to (so `../` imports resolve), the remappings solc applies to its imports, and the folders a
 * bare import is looked for in.
 */
export interface SolidityProject {
  /** The nearest folder above the file holding one of PROJECT_MARKERS; else the nearest git root; else the filesystem's root. */
  root: string;
  /** What made it the root: the marker's file name, `.git`, or `/` (none). */
  marker: string;
  /** solc's form (`[context:]prefix=target`), targets relative to root: remappings.txt's first, then foundry.toml's. */
  remappings: string[];
  /** Absolute: foundry.toml's `libs`, else `lib` if it exists or `node_modules` does not, else `node_modules` (forge's default). */
  libs: string[];
}

const HARDHAT_CONFIGS = ["ts", "js", "mjs", "cjs", "mts", "cts"].map((ext) => `hardhat.config.${ext}`);
/** What makes a folder a project's root, as forge (foundry.toml, remappings.txt), Hardhat (its config) and npm (package.json) see it. */
const PROJECT_MARKERS = ["foundry.toml", "remappings.txt", ...HARDHAT_CONFIGS, "package.json"];

/** The project of `file` (absolute): its root, remappings and libs. */
export function solidityProject(file: string): SolidityProject {
  const found = nearest(path.dirname(file), PROJECT_MARKERS) ?? nearest(path.dirname(file), [".git"]);
  const root = found?.dir ?? path.parse(file).root;
  const toml = readText(path.join(root, "foundry.toml"));
  const config = toml === undefined ? {} : foundryProfile(toml, process.env.FOUNDRY_PROFILE ?? "default");
  const listed = [...lines(readText(path.join(root, "remappings.txt"))), ...(config.remappings ?? [])];
  // forge keeps the first of a context and prefix given twice (remappings.txt before foundry.toml); solc would keep the last.
  const seen = new Set<string>();
  const remappings = listed.map((r) => remapping(r, root)).filter((r): r is Remapping => r !== undefined && !seen.has(r.key) && Boolean(seen.add(r.key)));
  const libs = config.libs ?? [existsSync(path.join(root, "lib")) || !existsSync(path.join(root, "node_modules")) ? "lib" : "node_modules"];
  return { root, marker: found?.marker ?? "/", remappings: remappings.map((r) => r.text), libs: libs.map((lib) => path.resolve(root, lib)) };
}

function nearest(from: string, markers: string[]): { dir: string; marker: string } | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const marker = markers.find((m) => existsSync(path.join(dir, m)));
    if (marker) return { dir, marker };
    if (path.dirname(dir) === dir) return undefined;
  }
}

const readText = (file: string): string | undefined => (existsSync(file) ? readFileSync(file, "utf8") : undefined);
const lines = (text: string | undefined): string[] => (text ?? "").split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));

interface Remapping {
  /** context and prefix: a second remapping of both is dropped. */
  key: string;
  text: string;
}

/**
 * One remapping in solc's form, its target relative to the root when inside it: a file reached both
 * through it and by a relative import then has one source unit name, not two (solc would declare its
 * contracts twice).
 */
function remapping(line: string, root: string): Remapping | undefined {
  const equals = line.indexOf("=");
  if (equals <= 0) return undefined;
  const left = line.slice(0, equals);
  const colon = left.indexOf(":");
  const [context, prefix] = colon < 0 ? ["", left] : [left.slice(0, colon), left.slice(colon + 1)];
  const absolute = path.resolve(root, line.slice(equals + 1));
  const inside = path.relative(root, absolute);
  let target = inside.startsWith("..") || path.isAbsolute(inside) ? absolute : inside.split(path.sep).join("/");
  // forge's form: a folder's prefix maps to a folder (the root itself is the empty target).
  if (prefix.endsWith("/") && target !== "" && !target.endsWith("/")) target += "/";
  return { key: `${context}:${prefix}`, text: `${context ? `${context}:` : ""}${prefix}=${target}` };
}

/** foundry.toml's `remappings` and `libs` (arrays of strings) of a profile, else of `[profile.default]`. */
export function foundryProfile(toml: string, profile: string): { remappings?: string[]; libs?: string[] } {
  const tables = new Map<string, Record<string, string[]>>();
  let table = "";
  let pending: { key: string; text: string } | undefined;
  for (const raw of toml.split(/\r?\n/)) {
    const line = withoutComment(raw);
    if (pending) {
      pending.text += `\n${line}`;
    } else {
      const header = /^\s*\[\s*([^\]]+?)\s*\]\s*$/.exec(line);
      if (header) {
        table = header[1] as string;
        continue;
      }
      const entry = /^\s*([\w.-]+)\s*=\s*(.*)$/.exec(line);
      if (!entry || !["remappings", "libs"].includes(entry[1] as string)) continue;
      pending = { key: entry[1] as string, text: entry[2] as string };
    }
    if (balanced(pending.text)) {
      const values = [...pending.text.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)].map((m) => (m[1] !== undefined ? (JSON.parse(`"${m[1]}"`) as string) : (m[2] as string)));
      tables.set(table, { ...tables.get(table), [pending.key]: values });
      pending = undefined;
    }
  }
  const chosen = tables.get(`profile.${profile}`) ?? {};
  const fallback = tables.get("profile.default") ?? {};
  return { remappings: chosen.remappings ?? fallback.remappings, libs: chosen.libs ?? fallback.libs };
}

/** A line up to its comment (a # outside a string). */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "#") return line.slice(0, i);
  }
  return line;
}

/** An array's text is whole once its brackets close (strings aside). */
function balanced(text: string): boolean {
  const bare = text.replace(/"(?:[^"\\]|\\.)*"|'[^']*'/g, "");
  return (bare.match(/\[/g)?.length ?? 0) <= (bare.match(/\]/g)?.length ?? 0);
}
