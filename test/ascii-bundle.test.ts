import { readFile, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { asciiOnly, makeBuildAscii } from "../scripts/build/ascii-bundle.ts";
import { withTempDirs } from "./support/temp-dirs.ts";

const tempDir = withTempDirs();
const ASCII = /^[\x00-\x7f]*$/;

// A module as zod's locales and noble's comments are written: esbuild keeps such comments in the bundle.
const SOURCE = `export function message(code) {
  switch (code) {
    case "union":
      return "Entrada invàlida";
    // Could also be "Tipus d'unió invàlid" but "Entrada invàlida" is more general
    case "window":
      return \`2^(𝑊−1) \${/é+/u.test("éé")}\`;
    default:
      return "—";
  }
}
`;

// The CLI bundle (scripts/build/build-cli.ts) in ASCII: one other character made V8 hold its 4.6 MB source as
// two bytes a character, 8.8 MB of an idle stack's heap (issue 32, item 5).
describe("the CLI bundle's source is ASCII", () => {
  it("esbuild leaves a comment's characters as written; makeBuildAscii escapes them, and the module answers the same", async () => {
    const dir = await tempDir("ascii-bundle-");
    const entry = path.join(dir, "entry.js");
    await writeFile(entry, SOURCE);
    const since = Date.now();
    const outdir = path.join(dir, "out");
    await build({ entryPoints: [entry], outdir, bundle: true, platform: "node", format: "esm", logLevel: "silent" });
    const built = path.join(outdir, "entry.js");
    expect(await readFile(built, "utf8")).not.toMatch(ASCII);
    await makeBuildAscii(outdir, since);
    const ascii = await readFile(built, "utf8");
    expect(ascii).toMatch(ASCII);
    expect(ascii).toContain("Tipus d'uni\\u{f3} inv\\u{e0}lid");
    const original = await import(pathToFileURL(entry).href);
    const escaped = await import(pathToFileURL(built).href);
    for (const code of ["union", "window", "other"]) expect(escaped.message(code)).toBe(original.message(code));
  });

  it("leaves files written before the build as they are (tsc's output beside the bundle)", async () => {
    const dir = await tempDir("ascii-bundle-");
    const older = path.join(dir, "older.js");
    await writeFile(older, SOURCE);
    await utimes(older, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    await makeBuildAscii(dir, Date.now() - 1000);
    expect(await readFile(older, "utf8")).toBe(SOURCE);
  });

  it("asciiOnly: astral characters as one escape each, ASCII unchanged", () => {
    expect(asciiOnly("// 𝑊 − é\nconst a = '\\u{e9}';")).toBe("// \\u{1d44a} \\u{2212} \\u{e9}\nconst a = '\\u{e9}';");
  });
});
