import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { helpText } from "../scripts/cli/help.ts";
import { CLI_OPTIONS, optionLabel, parseArgsOptions, type CliOption } from "../scripts/cli/options.ts";
import { cliDocsTable } from "./support/cli-docs-table.ts";

// The CLI's options are one table (scripts/cli/options.ts): parseArgs, --help and docs/cli.md's table
// follow it, so a new option is one row there (issue 42, item 2).
const rows: [string, CliOption][] = Object.entries(CLI_OPTIONS);

describe("the CLI's option table", () => {
  it("is docs/cli.md's options table, row for row: none missing, none added, each cell the same", async () => {
    const page = await readFile("docs/cli.md", "utf8");
    const start = page.indexOf("| option | default | meaning |");
    expect(start, "docs/cli.md has no options table").toBeGreaterThan(-1);
    const end = page.indexOf("\n\n", start);
    // On a difference, the expected table is the one to paste into docs/cli.md.
    expect(page.slice(start, end < 0 ? undefined : end)).toBe(cliDocsTable());
  });

  it("gives --help each option with its lines, and each variable an option reads", () => {
    const help = helpText();
    for (const [name, option] of rows) {
      // An option without lines of its own is said in a command's usage (exec's --runs).
      expect(help, name).toContain(`--${name}`);
      if (option.help) expect(help, name).toContain(`  ${optionLabel(name, option).padEnd(28)}${option.help.join(`\n${" ".repeat(30)}`)}\n`);
      if (option.env) expect(help, name).toContain(`  ${option.env.name.padEnd(28)}${option.env.help}\n`);
    }
  });

  it("is what parseArgs takes: each row, its type, short name, repetition and default (exec's where it has one)", () => {
    expect(Object.keys(parseArgsOptions(false))).toEqual(rows.map(([name]) => name));
    expect(parseArgsOptions(false)["state-dir"]).toEqual({ type: "string", default: ".devstack" });
    expect(parseArgsOptions(true)["state-dir"]).toEqual({ type: "string" });
    expect(parseArgsOptions(true)["chain-port"]).toEqual({ type: "string", default: "0" });
    expect(parseArgsOptions(false).help).toEqual({ type: "boolean", short: "h", default: false });
    expect(parseArgsOptions(false).patch).toEqual({ type: "string", multiple: true });
  });
});
