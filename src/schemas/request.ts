import { z } from "zod";
import { Address, Bytes32 } from "../config/primitives.ts";

/**
 * A decimal integer string within [min, max]. The format check aborts (zod 4 otherwise runs the range
 * refinement on a value that already failed it), and the refinement cannot throw either: BigInt() of
 * "1e10" or "١٢٣" throws, and a throw inside a schema is a 500, not a 400 naming the field.
 */
function decimalInteger(pattern: RegExp, message: string, range: { min: bigint; max: bigint; message: string }) {
  return z
    .string()
    .regex(pattern, { message, abort: true })
    .refine((v) => pattern.test(v) && BigInt(v) >= range.min && BigInt(v) <= range.max, range.message);
}

const Uint = decimalInteger(/^(0|[1-9][0-9]{0,77})$/, "expected a non-negative integer in decimal", {
  min: 0n,
  max: 2n ** 256n - 1n,
  message: "exceeds uint256",
}).meta({ description: "uint256 as a decimal string" });
const Int = decimalInteger(/^-?(0|[1-9][0-9]{0,76})$/, "expected an integer in decimal", {
  min: -(2n ** 255n),
  max: 2n ** 255n - 1n,
  message: "exceeds int256",
}).meta({ description: "int256 as a decimal string" });
/** A note ciphertext: bounded, so one request cannot make the relayer pay for megabytes of calldata. */
const Ciphertext = z
  .string()
  .regex(/^0x([0-9a-fA-F]{2}){0,512}$/, "expected 0x-prefixed hex of at most 512 bytes")
  .meta({ description: "encrypted note opening (for the recipient), at most 512 bytes" });
/** The Pool's uint64 fields: a larger value cannot even be encoded (viem throws), so it is the client's error, named. */
const Uint64 = decimalInteger(/^(0|[1-9][0-9]{0,19})$/, "expected a non-negative integer in decimal", {
  min: 0n,
  max: 2n ** 64n - 1n,
  message: "exceeds uint64",
}).meta({ description: "uint64 as a decimal string" });
const Pair = z.tuple([Uint, Uint]);

/** Quote ids: "qt_" and the 32 bytes the action carries on chain as its quoteId. */
export const QuoteId = z
  .string()
  .regex(/^qt_[0-9a-f]{64}$/, "expected qt_ followed by 64 lower-case hex digits")
  .meta({ description: "quote id: qt_ and 64 hex digits; the action's on-chain quoteId is 0x and the same digits" });

/** An approved external action's terms (Pool.Action), exactly as the cited quote set them. */
export const ActionTermsRequest = z
  .strictObject({
    quoteId: QuoteId,
    routeId: Bytes32,
    outputAsset: Address,
    minOutput: Uint,
    outputPrecommitment: Uint.meta({ description: "Poseidon2(notePublicKey, blinding) of the output note; the blinding stays with the client" }),
    deadline: Uint64.meta({ description: "unix seconds (uint64): settled by then, or refunded" }),
    finalizeFee: Uint,
    finalizer: Address.meta({ description: "who alone may finalize it for its fee until deadline + the Pool's FINALIZE_GRACE: the quote's relayer" }),
  })
  .meta({ description: "An external action: a withdrawal to the route's adapter with a quote's terms, which the proof binds (Pool.hashActionExtData)" });

export const DeploymentRef = z
  .strictObject({
    chainId: z.int(),
    poolAddress: Address,
    domain: Bytes32,
  })
  .meta({ description: "The deployment the proof was made for: must be this runtime's (spec rules 7 and 8)" });

/**
 * POST /send-relay and /withdraw-relay: a prepared join-split, as the client's library produces it.
 * Proof and public execution fields only (spec §1 rule 4). Strict: an unknown member (a note opening
 * or a spend secret sent by mistake) is refused, and never logged or stored.
 */
export const RelayRequest = z
  .strictObject({
    deployment: DeploymentRef,
    proof: z.strictObject({ a: Pair, b: z.tuple([Pair, Pair]), c: Pair }).meta({ description: "Groth16 proof, in the Solidity verifier's layout" }),
    publicInputs: z
      .strictObject({
        root: Uint,
        publicAmount: Uint,
        extDataHash: Uint,
        asset: Address,
        domain: Uint,
        inputNullifiers: Pair,
        outputCommitments: Pair,
      })
      .meta({ description: "The proof's public inputs (Pool.PublicInputs)" }),
    extData: z
      .strictObject({
        recipient: Address,
        extAmount: Int.meta({ description: "0 for a send; minus the withdrawn amount for a withdrawal" }),
        relayer: Address.meta({ description: "must be this runtime's relayer (config relayFees.relayer)" }),
        fee: Uint.meta({ description: "relay fee in the asset's base units, at least the configured fee" }),
        encryptedOutput1: Ciphertext,
        encryptedOutput2: Ciphertext,
      })
      .meta({ description: "Public execution fields the proof binds through extDataHash (Pool.ExtData)" }),
    action: ActionTermsRequest.optional(),
  })
  .meta({ id: "RelayRequest", description: "A prepared private send, withdrawal, or external action (a withdrawal with `action`)" });

export type RelayRequest = z.output<typeof RelayRequest>;

/** POST /finalize: turn a reservation (an action's reserved output) into a note. Public fields only. */
export const FinalizeRequest = z
  .strictObject({
    deployment: DeploymentRef,
    reservationId: Bytes32.meta({ description: "the Pool's reservation id: the action's status answer names it (action.reservationId)" }),
  })
  .meta({ id: "FinalizeRequest", description: "A reservation to finalize: its settled output (or, failed or past its deadline, its refund) becomes a note" });
export type FinalizeRequest = z.output<typeof FinalizeRequest>;

export const IdempotencyKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, "Idempotency-Key must be 1 to 255 visible ASCII characters")
  .optional();

/** An action's terms in the Pool's types (Pool.Action). */
export function toActionArg(action: NonNullable<RelayRequest["action"]>) {
  return {
    routeId: action.routeId as `0x${string}`,
    outputAsset: action.outputAsset as `0x${string}`,
    minOutput: BigInt(action.minOutput),
    outputPrecommitment: BigInt(action.outputPrecommitment),
    deadline: BigInt(action.deadline),
    finalizeFee: BigInt(action.finalizeFee),
    quoteId: `0x${action.quoteId.slice(3)}` as `0x${string}`,
    finalizer: action.finalizer as `0x${string}`,
  };
}

/** The request in the Pool's types, for encoding the transaction. */
export function toPoolArgs(request: RelayRequest) {
  const big = (v: string) => BigInt(v);
  const pair = (p: readonly [string, string]) => [big(p[0]), big(p[1])] as const;
  const { proof, publicInputs: pi, extData: ext } = request;
  return [
    { a: pair(proof.a), b: [pair(proof.b[0]), pair(proof.b[1])] as const, c: pair(proof.c) },
    {
      root: big(pi.root),
      publicAmount: big(pi.publicAmount),
      extDataHash: big(pi.extDataHash),
      asset: pi.asset as `0x${string}`,
      domain: big(pi.domain),
      inputNullifiers: pair(pi.inputNullifiers),
      outputCommitments: pair(pi.outputCommitments),
    },
    {
      recipient: ext.recipient as `0x${string}`,
      extAmount: big(ext.extAmount),
      relayer: ext.relayer as `0x${string}`,
      fee: big(ext.fee),
      encryptedOutput1: ext.encryptedOutput1 as `0x${string}`,
      encryptedOutput2: ext.encryptedOutput2 as `0x${string}`,
    },
  ] as const;
}
