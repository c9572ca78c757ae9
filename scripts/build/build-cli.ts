import path from "node:path";
import { bundleCli } from "./cli-bundle.ts";

// `npm run build`'s last step: tsc's dist/scripts/cli/dev-stack.js replaced by the CLI bundle and its
// chunks (scripts/build/cli-bundle.ts says what is bundled and why). The build's folder: dist/, or
// another one given (the consumer test builds in a temp folder of its own).
const dist = path.resolve(process.argv[2] ?? "dist");
const cli = path.join(dist, "scripts", "cli", "dev-stack.js");
await bundleCli(cli, path.dirname(cli), path.dirname(dist));
