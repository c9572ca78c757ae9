import { UNPRINTABLE } from "../../src/printable.ts";

/** Words a shell reads as they are: no quoting needed. */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * A command line as a shell (bash, zsh) would read it back into the same words, for printing: plain
 * words as they are, others in single quotes ('\'' for a quote), and a word with control or invisible
 * characters as $'…' with those escaped, so printing it cannot move the cursor or hide text.
 */
export function shellCommandLine(words: readonly string[]): string {
  return words.map(shellWord).join(" ");
}

function shellWord(word: string): string {
  if (PLAIN.test(word)) return word;
  if (!new RegExp(UNPRINTABLE.source).test(word)) return `'${word.replaceAll("'", `'\\''`)}'`;
  const escaped = word.replace(new RegExp(`[\\\\']|${UNPRINTABLE.source}`, "g"), (c) => {
    if (c === "\\" || c === "'") return `\\${c}`;
    const code = c.codePointAt(0) as number;
    return code < 0x80 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
  return `$'${escaped}'`;
}
