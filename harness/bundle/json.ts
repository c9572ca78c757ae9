import { OverCapError } from "./bounded-gunzip.ts";

/**
 * JSON.parse of a bundle's part, with a cap on how many values it holds. A byte cap alone does not
 * bound memory: `[{},{},…]` costs about 100 bytes of heap per 3 bytes of text, so a 128 MiB part of it
 * took node past 4 GB. The structural characters outside strings (`{`, `[`, `,`) are counted first, in
 * one pass over the bytes with nothing allocated, and more than `maxValues` is refused unparsed.
 */
export function parseJsonBounded(bytes: Uint8Array, maxValues: number): unknown {
  let values = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i] as number;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 0x5c) escaped = true;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if ((c === 0x7b || c === 0x5b || c === 0x2c) && ++values > maxValues) {
      throw new OverCapError(`holds more than ${maxValues.toLocaleString("en-US")} JSON values`);
    }
  }
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch (error) {
    throw new Error(`it is not JSON (${String((error as Error).message).split("\n")[0]})`);
  }
}
