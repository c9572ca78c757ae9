import { writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

/**
 * A preload (`node --import`) that makes the CLI signal itself (INTERRUPT_SIGNAL) at a chosen point of its
 * start, every run whatever the machine's load: as it prints a step's progress line (INTERRUPT_AT_STEP),
 * or as the n-th gunzip to give bytes out gives its first (INTERRUPT_AT_GUNZIP=n: in the middle of a
 * part's decompression). The signal is raised synchronously there, so the CLI's handler runs at the event
 * loop's next turn, before anything that takes more turns than that can end. Returns its URL.
 */
export async function interruptPreload(dir: string): Promise<string> {
  const file = path.join(dir, "interrupt-at.mjs");
  await writeFile(
    file,
    `import zlib from "node:zlib";
let sent = false;
const interrupt = () => {
  if (sent) return;
  sent = true;
  process.kill(process.pid, process.env.INTERRUPT_SIGNAL);
};
for (const stream of [process.stdout, process.stderr]) {
  const write = stream.write.bind(stream);
  stream.write = (chunk, ...rest) => {
    const written = write(chunk, ...rest);
    if (process.env.INTERRUPT_AT_STEP && String(chunk).startsWith(\`  \${process.env.INTERRUPT_AT_STEP} \`)) interrupt();
    return written;
  };
}
// zlib's exports are read-only: its Gunzip's prototype is not. A gunzip pushes each chunk it gives out.
const push = zlib.Gunzip.prototype.push;
const seen = new WeakSet();
let gunzips = 0;
zlib.Gunzip.prototype.push = function (chunk, ...rest) {
  const pushed = push.call(this, chunk, ...rest);
  if (chunk && !seen.has(this)) {
    seen.add(this);
    if (++gunzips === Number(process.env.INTERRUPT_AT_GUNZIP)) interrupt();
  }
  return pushed;
};
`,
  );
  return pathToFileURL(file).href;
}
