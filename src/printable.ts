/**
 * Text from outside (a bundle, a chain, an upstream) made safe to print on a terminal: control
 * characters (C0, DEL, C1 — ESC, CSI and OSC among them) are shown escaped, so such text cannot
 * clear the screen, move the cursor, retitle the window or write the clipboard. Newlines too: a
 * value is printed as one line.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** Printable text that is not only controls: what a name shown to a person may hold. */
export const PRINTABLE_TEXT = /^[^\u0000-\u001f\u007f-\u009f]*$/;
