import { open } from "node:fs/promises";
import path from "node:path";
import { knownProofHashes, rememberProofHashes } from "../../src/proof-artifacts.ts";
import { writeFileAtomic } from "../files/index.ts";

/**
 * The proof files' sha256 kept in the state dir across launches (12 MB hashed at every start otherwise),
 * by file identity as git's index keeps them: a file changed since has another identity and is hashed
 * again; one changed too recently to tell is not kept (src/proof-artifacts.ts).
 */
const FILE = "proof-hashes.json";
/** A few proof files' entries take a few hundred bytes: a larger file is not this cache, and is not read. */
const MAX_BYTES = 64 * 1024;

/** What an earlier launch from this state dir kept; the text read, to write only what changed. */
export async function readProofHashes(stateDir: string): Promise<string | undefined> {
  const text = await readCapped(path.join(stateDir, FILE));
  if (text === undefined) return undefined;
  try {
    rememberProofHashes(JSON.parse(text));
  } catch {
    // a damaged cache is only a cache: the files are hashed
  }
  return text;
}

/** Keeps the hashes this process knows for the next launch (a cache: a failed write is ignored). */
export async function writeProofHashes(stateDir: string, read: string | undefined): Promise<void> {
  const text = `${JSON.stringify(knownProofHashes(), null, 1)}\n`;
  if (text !== read) await writeFileAtomic(path.join(stateDir, FILE), text).catch(() => {});
}

/** The file's text if it is at most MAX_BYTES (read from one handle: what was sized is what is read). */
async function readCapped(file: string): Promise<string | undefined> {
  const handle = await open(file, "r").catch(() => undefined);
  if (!handle) return undefined;
  try {
    if ((await handle.stat()).size > MAX_BYTES) return undefined;
    const buffer = Buffer.alloc(MAX_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return bytesRead > MAX_BYTES ? undefined : buffer.subarray(0, bytesRead).toString("utf8");
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}
