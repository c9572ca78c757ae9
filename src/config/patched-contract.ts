import { z } from "zod";

/** A contract whose runtime code a development harness replaced in place, as the runtime was told of it. */
export const PatchedContract = z
  .strictObject({
    name: z.string().meta({ description: "the contract, as the manifest knows it (Pool, verifier, an adapter's route, an asset's symbol)" }),
    address: z.string(),
    codeHash: z.string().meta({ description: "keccak256 of the runtime code it now has" }),
    source: z.string().meta({ description: "what the code was built from (a file, and the contract in it)" }),
  })
  .meta({ id: "PatchedContract" });
export type PatchedContract = z.output<typeof PatchedContract>;
