// A Markdown page as GitHub reads it: its prose (fenced code left out) and its headings' anchors.

/** The page's lines outside fenced code blocks, with their line numbers. */
export function prose(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let fenced = false;
  text.split("\n").forEach((line, i) => {
    if (line.startsWith("```")) fenced = !fenced;
    else if (!fenced) out.push({ line: i + 1, text: line });
  });
  return out;
}

/** GitHub's anchor for a heading: markup dropped, lower case, punctuation gone, spaces as hyphens. */
function slug(heading: string): string {
  const plain = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/`/g, "");
  return plain.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

/** The anchors of a page's headings (a repeated heading gets -1, -2, … as on GitHub). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text: line } of prose(text)) {
    const heading = /^#{1,6} (.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}
