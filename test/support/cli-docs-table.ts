import { CLI_OPTIONS, optionLabel, type CliOption } from "../../scripts/cli/options.ts";

/** A table cell: a | inside would end it. */
const cell = (text: string) => text.replaceAll("|", "\\|");

/** The default in words: the row's own, else its parseArgs default; after the variable read first, if any. */
function defaultInWords({ docs, default: fallback, env }: CliOption): string {
  const words = docs.default ?? (fallback === undefined ? "none" : typeof fallback === "boolean" ? (fallback ? "on" : "off") : `\`${fallback}\``);
  return env ? `env \`${env.name}\`, else ${words}` : words;
}

/** docs/cli.md's options table, as the CLI's option table (scripts/cli/options.ts) makes it: one row per option, in its order. */
export function cliDocsTable(): string {
  const rows: [string, CliOption][] = Object.entries(CLI_OPTIONS);
  const lines = rows.map(([name, option]) => `| ${cell(`\`${optionLabel(name, option)}\``)} | ${cell(defaultInWords(option))} | ${cell(option.docs.text)} |`);
  return ["| option | default | meaning |", "| --- | --- | --- |", ...lines].join("\n");
}
