import { describe, expect, it } from "vitest";
import { printable, printableJsonLine } from "../src/printable.ts";

// What the CLI, trace and ctl print from a bundle, a chain or an upstream.
describe("printable", () => {
  it("escapes terminal controls and keeps a value on one line", () => {
    expect(printable("a\u001b]52;c;aGk=\u0007b\nc\u009bd\u007f")).toBe("a\\x1b]52;c;aGk=\\x07b\\x0ac\\x9bd\\x7f");
  });

  it("escapes the invisible characters that reorder or hide text (bidi overrides, isolates, zero-width)", () => {
    // Printed raw, "USDC\u202e\u2066cdsu" would read as another symbol.
    expect(printable("USDC\u202e\u2066cdsu\u2069")).toBe("USDC\\u{202e}\\u{2066}cdsu\\u{2069}");
    expect(printable("pay\u200bal \u200d\u200e\u200f\u061c\u2060\ufeff")).toBe("pay\\u{200b}al \\u{200d}\\u{200e}\\u{200f}\\u{61c}\\u{2060}\\u{feff}");
  });

  it("leaves ordinary text alone, accents, right-to-left letters and emoji included", () => {
    for (const text of ["dUSDC", "Wrapped Ether (Sepolia)", "café", "שקל", "🦊 0x1f", "\\x1b is shown as text"]) expect(printable(text)).toBe(text);
  });

  it("escapes a JSON log line's C1 and invisible characters as JSON escapes: the same value, nothing raw on the terminal", () => {
    const value = { msg: "reverted: \u009b2J\u001b[31m fake \u202eUSDC\u200b", n: 1 };
    const line = `${JSON.stringify(value)}\n`;
    expect(line).toMatch(/[\u009b\u202e\u200b]/); // JSON.stringify leaves them raw
    const safe = printableJsonLine(line);
    expect(safe).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u200b-\u200f]/);
    expect(safe.endsWith("}\n")).toBe(true);
    expect(JSON.parse(safe)).toEqual(value);
  });
});
