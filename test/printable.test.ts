import { describe, expect, it } from "vitest";
import { printable } from "../src/printable.ts";

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
});
