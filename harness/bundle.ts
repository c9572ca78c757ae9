import { mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { z } from "zod";
import type { RelayControl } from "../src/relay/control.ts";
import { jsonRpc } from "./json-rpc.ts";

/**
 * A repro bundle: one file holding a local stack — its chain (anvil_dumpState, with the blocks), the
 * manifest's bytes, and a copy of the operation store — that startDevStack({ load }) brings back on
 * another machine: the same addresses, blocks and block hashes, roots, balances, notes and operation
 * history; operations in flight resume. It holds no key and no credential: the relayer's key is
 * anvil's known dev key, re-derived at load.
 */
export const BUNDLE_FORMAT = "queue-devstack-bundle";
export const BUNDLE_VERSION = 1;

const Bundle = z.strictObject({
  format: z.literal(BUNDLE_FORMAT),
  version: z.int(),
  createdAt: z.string(),
  mode: z.literal("local"),
  /** anvil's state JSON (gzip, base64): what --load-state takes. */
  chain: z.string(),
  manifest: z.string(),
  /** The SQLite operation store (gzip, base64). */
  store: z.string(),
});

export class BundleError extends Error {
  override name = "BundleError";
}

/** Writes the bundle atomically. */
export async function saveBundle(args: { file: string; rpcUrl: string; manifestPath: string; control: RelayControl | null; mode: "local" | "fork" }): Promise<{ bytes: number }> {
  const bytes = await bundleBytes(args);
  const tmp = `${args.file}.${process.pid}.tmp`;
  await writeFile(tmp, bytes);
  await rename(tmp, args.file);
  return { bytes: bytes.length };
}

/** The bundle's bytes, taken with the relayer paused so chain and store describe the same moment. */
export async function bundleBytes(args: { rpcUrl: string; manifestPath: string; control: RelayControl | null; mode: "local" | "fork" }): Promise<Buffer> {
  if (args.mode !== "local") throw new BundleError("a fork is reproduced by its pinned block (stack.json records it): saving a fork stack is not supported yet");
  if (!args.control) throw new BundleError("this stack's runtime has no relayer: nothing to save its operations from");
  const scratch = await mkdtemp(path.join(tmpdir(), "queue-devstack-bundle-"));
  try {
    await args.control.pause();
    let chain: string;
    const storeCopy = path.join(scratch, "queue.sqlite");
    try {
      chain = await jsonRpc<string>(args.rpcUrl, "anvil_dumpState").catch((error: unknown) => {
        throw new BundleError(`anvil did not dump its state: ${(error as Error).message}`);
      });
      args.control.backupStore(storeCopy);
    } finally {
      args.control.resume();
    }
    const bundle: z.output<typeof Bundle> = {
      format: BUNDLE_FORMAT,
      version: BUNDLE_VERSION,
      createdAt: new Date().toISOString(),
      mode: "local",
      chain: Buffer.from(chain.slice(2), "hex").toString("base64"), // already gzip
      manifest: await readFile(args.manifestPath, "utf8"),
      store: gzipSync(await readFile(storeCopy)).toString("base64"),
    };
    return gzipSync(JSON.stringify(bundle));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Checks a bundle and writes its chain, manifest and store into a state dir; refuses anything else, writing nothing. */
export async function unpackBundle(file: string, files: { chainState: string; manifest: string; store: string }): Promise<void> {
  let bundle: z.output<typeof Bundle>;
  try {
    const parsed = JSON.parse(gunzipSync(await readFile(file)).toString("utf8")) as { format?: unknown; version?: unknown };
    if (parsed.format !== BUNDLE_FORMAT) throw new BundleError(`${file} is not a queue-devstack bundle`);
    if (parsed.version !== BUNDLE_VERSION) throw new BundleError(`${file} is a bundle of format version ${String(parsed.version)}; this queue-devstack reads version ${BUNDLE_VERSION}`);
    bundle = Bundle.parse(parsed);
  } catch (error) {
    if (error instanceof BundleError) throw error;
    throw new BundleError(`${file} is not a readable bundle (damaged or truncated): ${(error as Error).message.split("\n")[0]}`);
  }
  await writeFile(files.chainState, gunzipSync(Buffer.from(bundle.chain, "base64")));
  await writeFile(files.manifest, bundle.manifest);
  await writeFile(files.store, gunzipSync(Buffer.from(bundle.store, "base64")));
}
