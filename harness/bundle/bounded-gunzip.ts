import { createWriteStream } from "node:fs";
import { Readable, Transform, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { QueueDevstackError } from "../../src/errors/index.ts";

/** A decompressed part went over its cap: counted as it streamed, so no more than the cap was held or written. */
export class OverCapError extends QueueDevstackError {
  override name = "OverCapError";
  readonly code = "over_cap";
}

/**
 * Gunzips a stream, in chunks (the event loop keeps turning: a signal is handled meanwhile), counting
 * the bytes out and stopping at `cap`: a small gzip that expands to gigabytes costs at most `cap`.
 * Into a file (nothing held in memory), or into memory when `to` is null. An aborted `signal` destroys
 * the streams at once (a Ctrl-C while a part unpacks) and rejects with an AbortError.
 * Typed Uint8Array (a Buffer at run time): the public types name no Node global.
 */
export async function gunzipBounded(from: Readable | Uint8Array, cap: number, to: string | null, signal?: AbortSignal): Promise<Uint8Array | null> {
  const options = signal ? { signal } : {};
  let total = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      if (total > cap) done(new OverCapError(`expands to more than ${formatBytes(cap)}`));
      else done(null, chunk);
    },
  });
  const source = from instanceof Readable ? from : Readable.from([Buffer.from(from.buffer, from.byteOffset, from.byteLength)]);
  if (to !== null) {
    await pipeline(source, createGunzip(), counter, createWriteStream(to), options);
    return null;
  }
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  await pipeline(source, createGunzip(), counter, sink, options);
  return Buffer.concat(chunks, total);
}

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}
