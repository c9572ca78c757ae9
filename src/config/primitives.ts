import { isAddress } from "viem";
import { z } from "zod";

/**
 * A 20-byte address: all lower-case, or EIP-55 checksummed (a wrong checksum is refused). No
 * transform, so the same schema both validates input and serializes output.
 */
export const Address = z
  .string()
  // The pattern is for the OpenAPI document (and its readers); the refinement also checks EIP-55.
  .regex(/^0x[0-9a-fA-F]{40}$/, { message: "not a 20-byte hex address" })
  .refine((value) => isAddress(value, { strict: true }), { message: "not a 20-byte hex address (or a bad EIP-55 checksum)", abort: true })
  .meta({ description: "20-byte address, EIP-55 checksummed in responses", example: "0x5FbDB2315678afecb367f032d93F642f64180aa3" });

/** A 32-byte value in lower-case hex (hashes, field elements). */
export const Bytes32 = z
  .string()
  .regex(/^0x[0-9a-f]{64}$/, "expected 0x followed by 64 lower-case hex digits")
  .meta({ description: "32 bytes, 0x-prefixed lower-case hex" });

/** A non-negative integer carried as a decimal string, for values that may exceed 2^53 (token amounts). */
export const UintString = z
  .string()
  .regex(/^(0|[1-9][0-9]*)$/, "expected a non-negative integer in decimal")
  .meta({ description: "non-negative integer as a decimal string (base units)", example: "1000000" });

export const BlockNumber = z.int().nonnegative().meta({ description: "block number" });

/** An ABI as served: a JSON array of ABI items (kept opaque; viem parses it on the client). */
export const Abi = z.array(z.looseObject({ type: z.string() })).meta({ description: "Solidity JSON ABI" });
