import { z } from "zod";
import { Address, Bytes32, UintString } from "../config/primitives.ts";
import { SEPOLIA_CHAIN_ID } from "../config/deployment-config.ts";
import { DeploymentRef, QuoteId } from "./request.ts";

export { QuoteId };

// The format check aborts, and the range check re-tests the format: BigInt() must never see "1e10".
const POSITIVE = /^[1-9][0-9]{0,74}$/;
const PositiveAmount = z
  .string()
  .regex(POSITIVE, { message: "expected a positive integer in decimal", abort: true })
  .refine((v) => POSITIVE.test(v) && BigInt(v) < 2n ** 248n, "must be below 2^248")
  .meta({ description: "positive integer as a decimal string (base units)", example: "1000000" });

export const QuoteRequest = z
  .strictObject({
    deployment: DeploymentRef,
    route: Bytes32.meta({ description: "an external route's id from the config's routes" }),
    assetIn: Address,
    assetOut: Address,
    amountIn: PositiveAmount.meta({ description: "input amount, base units of assetIn" }),
  })
  .meta({ id: "QuoteRequest", description: "What to quote: a route, a pair of assets and the input amount" });
export type QuoteRequest = z.output<typeof QuoteRequest>;

/**
 * EIP-712: the domain binds chain id and Pool; name and version are ours, so no other signer's quotes match.
 * The signature is a receipt for the client (what this relayer promised, for this Pool): nothing on chain
 * verifies it. The Pool is the verifyingContract only to scope the receipt to one deployment; what the
 * chain enforces is the action's terms, which the proof binds (hashActionExtData).
 */
export const QUOTE_EIP712_NAME = "queue-devstack quote" as const;
export const QUOTE_EIP712_VERSION = "1" as const;
export const QUOTE_TYPES = {
  Quote: [
    { name: "configDomain", type: "bytes32" },
    { name: "quoteId", type: "bytes32" },
    { name: "route", type: "bytes32" },
    { name: "assetIn", type: "address" },
    { name: "assetOut", type: "address" },
    { name: "amountIn", type: "uint256" },
    { name: "expectedOutput", type: "uint256" },
    { name: "minOutput", type: "uint256" },
    { name: "actionFee", type: "uint256" },
    { name: "finalizeFee", type: "uint256" },
    { name: "deadline", type: "uint64" },
    { name: "expiry", type: "uint64" },
    { name: "relayer", type: "address" },
  ],
} as const;

const QuoteMessage = z.strictObject({
  configDomain: Bytes32,
  quoteId: Bytes32,
  route: Bytes32,
  assetIn: Address,
  assetOut: Address,
  amountIn: UintString,
  expectedOutput: UintString,
  minOutput: UintString,
  actionFee: UintString,
  finalizeFee: UintString,
  deadline: UintString,
  expiry: UintString,
  relayer: Address,
});

export const Quote = z
  .strictObject({
    quoteId: QuoteId,
    route: Bytes32,
    assetIn: Address,
    assetOut: Address,
    amountIn: UintString,
    expectedOutput: UintString.meta({ description: "output at the current price, base units of assetOut" }),
    minOutput: UintString.meta({ description: "least output the action accepts (the action's minOutput)" }),
    fees: z.strictObject({
      action: UintString.meta({ description: "relay fee of the action, in assetIn (its extData.fee)" }),
      finalize: UintString.meta({ description: "the action's finalizeFee, in assetOut" }),
    }),
    deadline: UintString.meta({ description: "the action's deadline (unix seconds): settled by then, or refunded" }),
    expiresAt: z.iso.datetime().meta({ description: "submit the action before this; later it is 422 quote_expired" }),
    relayer: Address,
    signature: z.string().regex(/^0x[0-9a-f]{130}$/).meta({ description: "the relayer's EIP-712 signature of typedData" }),
    typedData: z.strictObject({
      domain: z.strictObject({ name: z.literal(QUOTE_EIP712_NAME), version: z.literal(QUOTE_EIP712_VERSION), chainId: z.literal(SEPOLIA_CHAIN_ID), verifyingContract: Address }),
      types: z.strictObject({ Quote: z.array(z.strictObject({ name: z.string(), type: z.string() })) }),
      primaryType: z.literal("Quote"),
      message: QuoteMessage,
    }),
  })
  .meta({ id: "Quote", description: "A signed quote of an approved external action: its terms, fees, expiry, and the EIP-712 typed data the relayer signed" });
export type Quote = z.output<typeof Quote>;

/** The typed data with numbers as bigints, as signers and verifiers (viem, cast) take it. */
export function typedDataForSigning(quote: Pick<Quote, "typedData">) {
  const m = quote.typedData.message;
  return {
    domain: { ...quote.typedData.domain, verifyingContract: quote.typedData.domain.verifyingContract as `0x${string}` },
    types: QUOTE_TYPES,
    primaryType: "Quote" as const,
    message: {
      configDomain: m.configDomain as `0x${string}`,
      quoteId: m.quoteId as `0x${string}`,
      route: m.route as `0x${string}`,
      assetIn: m.assetIn as `0x${string}`,
      assetOut: m.assetOut as `0x${string}`,
      amountIn: BigInt(m.amountIn),
      expectedOutput: BigInt(m.expectedOutput),
      minOutput: BigInt(m.minOutput),
      actionFee: BigInt(m.actionFee),
      finalizeFee: BigInt(m.finalizeFee),
      deadline: BigInt(m.deadline),
      expiry: BigInt(m.expiry),
      relayer: m.relayer as `0x${string}`,
    },
  };
}
