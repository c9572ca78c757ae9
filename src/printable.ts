/**
 * Text from outside (a bundle, a chain, an upstream) made safe to print on a terminal:
 * - control characters (C0, DEL, C1 — ESC, CSI and OSC among them) are shown escaped (`\x1b`), so
 *   such text cannot clear the screen, move the cursor, retitle the window or write the clipboard.
 *   Newlines too: a value is printed as one line.
 * - invisible format characters are shown escaped (`\u{202e}`): the bidi overrides, embeddings and
 *   isolates reorder what follows them ("Trojan Source"), and zero-width ones hide text, so a token
 *   symbol or an error could read as something it is not.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const code = c.codePointAt(0) as number;
    return code <= 0x9f ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  });
}

/**
 * A JSON log line made safe to print the same way, and still the same JSON: JSON.stringify escapes C0
 * but leaves C1 (a CSI in a revert's text from a loaded chain) and the invisible characters raw; each is
 * written as its `\uXXXX` escape instead, which parses back to the same value. The line's end is kept.
 */
export function printableJsonLine(line: string): string {
  return line.replace(UNPRINTABLE, (c) => (c === "\n" ? c : `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, "0")}`));
}

// C0, DEL, C1; the Arabic letter mark, zero-width space/non-joiner/joiner, LRM/RLM, the bidi
// embeddings and overrides, the word joiner and invisible operators, the bidi isolates, and the BOM.
export const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/** Printable text that is not only controls: what a name shown to a person may hold. */
export const PRINTABLE_TEXT = /^[^\u0000-\u001f\u007f-\u009f]*$/;
