import { z } from "zod";

const Hex = z.custom<`0x${string}`>((v) => typeof v === "string" && /^0x[0-9a-fA-F]*$/.test(v), "a 0x-prefixed hex string");

const Layout = z.strictObject({
  contractName: z.string(),
  sourceName: z.string(),
  deployedBytecode: Hex,
  immutables: z.record(z.string(), z.strictObject({ type: z.string(), refs: z.array(z.strictObject({ start: z.int().min(0), length: z.int().min(1).max(32) })) })),
  storage: z.array(z.strictObject({ label: z.string(), slot: z.string(), offset: z.int(), type: z.string() })),
});

/**
 * One patched contract, as `<state dir>/patches.json` keeps it (and a bundle carries it): what it is
 * now, what it was before its first patch, and, on a stack loaded from a bundle that carried this patch,
 * the code it was loaded with. So a reset puts the patch back, unpatch goes back to the code the stack
 * started with (and from there to the original), and every later patch is checked against the deployed
 * contract's own layout and immutables.
 */
export const PatchRecord = z.strictObject({
  name: z.string(),
  address: Hex,
  /** The file the code came from, and the contract in it ("contracts/Pool.sol:Pool"). */
  source: z.string(),
  codeHash: Hex,
  code: Hex,
  originalCodeHash: Hex,
  originalCode: Hex,
  /** The deployed contract's own layout: every patch of it is checked against this one. */
  originalLayout: Layout,
  patchedAt: z.string(),
  /**
   * The patch the stack was loaded with (a bundle's): unpatch after any later patch puts it back (the
   * record is then this one again: same patchedAt), and only then the original. Absent on a stack not loaded patched.
   */
  loaded: z.strictObject({ source: z.string(), codeHash: Hex, code: Hex, patchedAt: z.string() }).optional(),
});
export type PatchRecord = z.output<typeof PatchRecord>;

export const PatchRecords = z.array(PatchRecord).max(64);

export const PATCHES_FILE = "patches.json";
