/**
 * node:util's parseArgs reads "-1" after "--runs" as another option, and says the value is missing (or
 * "ambiguous"). A negative number there is the option's value, a wrong one: joined to its option
 * ("--runs=-1"), it reaches the option's own check, which says what the option wants.
 *
 * @example
 * joinNegativeValues(["--runs", "-1"], { runs: { type: "string" } }); // ["--runs=-1"]
 */
export function joinNegativeValues(args: readonly string[], options: Readonly<Record<string, { type: "string" | "boolean"; short?: string }>>): string[] {
  const takesValue = (arg: string) => {
    if (arg.startsWith("--")) return options[arg.slice(2)]?.type === "string";
    return arg.length === 2 && Object.values(options).some((o) => o.type === "string" && o.short === arg.slice(1));
  };
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    if (arg === "--") return [...joined, ...args.slice(i)]; // the rest is a command's, untouched
    if (next !== undefined && /^-[0-9.]/.test(next) && takesValue(arg)) {
      joined.push(arg.startsWith("--") ? `${arg}=${next}` : `${arg}${next}`); // a short option takes its value joined: -n-1
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}
