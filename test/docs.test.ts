import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { anchors, prose } from "./support/markdown.ts";

// The documentation as a reader meets it, in the repository and in the packed tarball: README.md and
// docs/*.md link to each other and to a few files; every relative link must reach a file (and, with
// #anchor, a heading of it) that is there, in the tarball too; and no paragraph, nor any table cell, runs over 120 words
// (issue 30, items 10 and 22; issue 40, item 15).
const repo = path.resolve(import.meta.dirname, "..");
const PAGES = ["README.md", ...readdirSync(path.join(repo, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];
const MAX_WORDS = 120;

/** The page's relative link targets (inline code and URLs with a scheme left out), with their lines. */
function relativeLinks(text: string): Array<{ line: number; target: string }> {
  const out: Array<{ line: number; target: string }> = [];
  for (const { line, text: raw } of prose(text)) {
    const bare = raw.replace(/`[^`]*`/g, "");
    for (const match of bare.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1] as string;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) out.push({ line, target });
    }
  }
  return out;
}

/** Every broken relative link of the pages: a missing file, a missing heading, or (given `shipped`) a file not in it. */
function brokenLinks(read: (file: string) => string | undefined, pages: string[], shipped?: Set<string>): string[] {
  const broken: string[] = [];
  for (const page of pages) {
    for (const { line, target } of relativeLinks(read(page) ?? "")) {
      const [file = "", anchor] = target.split("#");
      const resolved = file === "" ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), decodeURIComponent(file)));
      const where = `${page}:${line} links to ${target}`;
      const content = read(resolved);
      if (content === undefined) broken.push(`${where}: there is no ${resolved}`);
      else if (shipped !== undefined && !shipped.has(resolved)) broken.push(`${where}: ${resolved} is not in the package (package.json "files")`);
      else if (anchor !== undefined && resolved.endsWith(".md") && !anchors(content).has(anchor)) broken.push(`${where}: ${resolved} has no heading #${anchor}`);
    }
  }
  return broken;
}

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** A table row's cells, as GitHub splits it: at each pipe not escaped (a pipe in a cell's code is written \\|). */
const cells = (row: string) => row.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "").split(/(?<!\\)\|/);

/** The paragraphs (one a line) and table cells over MAX_WORDS: `line (N words)`, or `line, cell C (N words)`. */
function overLong(text: string): string[] {
  return prose(text).flatMap(({ line, text: row }) => {
    if (!row.startsWith("|")) return words(row) > MAX_WORDS ? [`${line} (${words(row)} words)`] : [];
    return cells(row).flatMap((cell, i) => (words(cell) > MAX_WORDS ? [`${line}, cell ${i + 1} (${words(cell)} words)`] : []));
  });
}

const readRepo = (file: string): string | undefined => {
  const full = path.join(repo, file);
  return existsSync(full) && statSync(full).isFile() ? readFileSync(full, "utf8") : undefined;
};

describe("the link check itself", () => {
  const files: Record<string, string> = {
    "README.md": "# Title\n\nSee [a](docs/a.md#two-words), [b](docs/b.md), [c](#nowhere), `[d](docs/d.md)` and [e](https://x.example/e.md).\n",
    "docs/a.md": "# A\n\n## Two `words`\n\n```\n[f](missing.md)\n```\n![png](pic.png)\n",
    "docs/pic.png": "",
  };
  const read = (file: string) => files[file];

  it("finds a missing file and a missing heading, and passes code, inline code and absolute URLs", () => {
    expect(brokenLinks(read, ["README.md", "docs/a.md"])).toEqual([
      "README.md:3 links to docs/b.md: there is no docs/b.md",
      "README.md:3 links to #nowhere: README.md has no heading #nowhere",
    ]);
  });

  it("finds a link to a file the package does not ship", () => {
    expect(brokenLinks(read, ["docs/a.md"], new Set(["docs/a.md"]))).toEqual(["docs/a.md:8 links to pic.png: docs/pic.png is not in the package (package.json \"files\")"]);
  });
});

describe("the length check itself", () => {
  const long = Array.from({ length: MAX_WORDS + 1 }, () => "word").join(" ");
  it("counts each table cell on its own, a paragraph whole, and code not at all", () => {
    const page = [`${long}`, "", "| a | b |", "| --- | --- |", `| short | ${long} |`, `| ${long.replace("word word", "word \\| word")} | x |`, "```", long, "```"].join("\n");
    expect(overLong(page)).toEqual([`1 (${MAX_WORDS + 1} words)`, `5, cell 2 (${MAX_WORDS + 1} words)`, `6, cell 1 (${MAX_WORDS + 2} words)`]);
  });
});

describe("README.md and docs/*.md", () => {
  it("link only to files and headings that exist", () => {
    expect(PAGES.length).toBeGreaterThan(10);
    expect(brokenLinks(readRepo, PAGES)).toEqual([]);
  });

  it("link only to files the packed package holds, where the package ships the page, and name only fixtures' files it holds", async () => {
    const { stdout } = await execa("npm", ["pack", "--dry-run", "--ignore-scripts", "--json"], { cwd: repo });
    const [packed] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
    const shipped = new Set((packed?.files ?? []).map((f) => f.path));
    const shippedPages = PAGES.filter((page) => shipped.has(page));
    expect(shippedPages).toEqual(PAGES);
    expect(brokenLinks(readRepo, shippedPages, shipped)).toEqual([]);
    // The fixtures' files the pages name in code (`contracts-fixtures/…`, a file or a folder) are in it too:
    // a reader of the installed package looks for them there (issue 40, item 5).
    const named = PAGES.flatMap((page) =>
      prose(readFileSync(path.join(repo, page), "utf8")).flatMap(({ line, text }) => [...text.matchAll(/`(contracts-fixtures\/[^`\s]*)`/g)].map((m) => ({ where: `${page}:${line}`, file: m[1] as string }))),
    );
    expect(named.length).toBeGreaterThan(5);
    const inPackage = (file: string) => (file.endsWith("/") ? [...shipped].some((f) => f.startsWith(file)) : shipped.has(file));
    expect(named.filter(({ file }) => !inPackage(file)).map(({ where, file }) => `${where} names ${file}`)).toEqual([]);
  });

  it("contributing.md's layout has a row for every folder of harness/ and src/", () => {
    const layout = readFileSync(path.join(repo, "docs", "contributing.md"), "utf8");
    const rows = new Set([...layout.matchAll(/^\| `([\w./-]+\/)` \|/gm)].map((m) => m[1] as string));
    const folders = ["harness", "src"].flatMap((floor) =>
      readdirSync(path.join(repo, floor), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => `${floor}/${entry.name}/`),
    );
    expect(folders.length).toBeGreaterThan(20);
    expect(folders.filter((folder) => !rows.has(folder))).toEqual([]);
  });

  it(`have no paragraph and no table cell over ${MAX_WORDS} words (code aside)`, () => {
    const long = PAGES.flatMap((page) => overLong(readFileSync(path.join(repo, page), "utf8")).map((where) => `${page}:${where}`));
    expect(long).toEqual([]);
  });

  it("fast-tests.md's example of a broken constraint is the one its example file checks (which the consumer test runs)", () => {
    const page = readFileSync(path.join(repo, "docs", "fast-tests.md"), "utf8");
    const said = /for example `(template \w+, line \d+)`/.exec(page)?.[1];
    expect(said).toBeDefined();
    expect(page).toContain(`expect(String(error)).toContain("${said}")`);
  });

  it("the fixtures' sources state the solc and OpenZeppelin versions they were compiled with, and the patching page installs those", () => {
    const installed = (pkg: string) => (JSON.parse(readFileSync(path.join(repo, "node_modules", pkg, "package.json"), "utf8")) as { version: string }).version;
    const install = `npm install -D solc@${installed("solc")} @openzeppelin/contracts@${installed("@openzeppelin/contracts")}`;
    const sources = readFileSync(path.join(repo, "contracts-fixtures", "contracts", "README.md"), "utf8");
    expect(sources).toContain(`**solc ${installed("solc")}**`);
    expect(sources).toContain(`**OpenZeppelin Contracts ${installed("@openzeppelin/contracts")}**`);
    expect(sources).toContain(install);
    expect(readFileSync(path.join(repo, "docs", "patching.md"), "utf8")).toContain(install);
  });

  it("the README shows both ways to start a stack and advises git-ignoring the state dir", () => {
    const readme = readFileSync(path.join(repo, "README.md"), "utf8");
    expect(readme).toContain("npm run dev-stack");
    expect(readme).toContain("npx queue-devstack");
    expect(readme).toMatch(/\.gitignore/);
  });
});
