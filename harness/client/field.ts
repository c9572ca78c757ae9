import { randomBytes } from "node:crypto";

import { FIELD_SIZE } from "../../src/chain/ext-data.ts";

/** The BN254 scalar field: every circuit value lives here. */
export { FIELD_SIZE };

/** A uniformly random field element (rejection sampling over 254 bits). */
export function randomFieldElement(): bigint {
  for (;;) {
    const bytes = randomBytes(32);
    bytes[0] = (bytes[0] as number) & 0x3f;
    const value = BigInt(`0x${bytes.toString("hex")}`);
    if (value < FIELD_SIZE && value !== 0n) return value;
  }
}

/** x mod p, for negative values too (publicAmount of a withdrawal is p - x). */
export function toField(value: bigint): bigint {
  const r = value % FIELD_SIZE;
  return r < 0n ? r + FIELD_SIZE : r;
}
