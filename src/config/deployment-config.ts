import { z } from "zod";
import { PRINTABLE_TEXT } from "../printable.ts";
import { Abi, Address, BlockNumber, Bytes32, UintString } from "./primitives.ts";

/** The only chain the queue serves (spec §1 rule 3). */
export const SEPOLIA_CHAIN_ID = 11155111;

export const ContractRef = z.strictObject({
  address: Address,
  abi: Abi,
});

export const FundingAsset = z
  .strictObject({
    address: Address,
    standard: z.literal("erc20"),
    // Shown to people (a terminal, a wallet UI): read from a token contract, so never control characters.
    name: z.string().regex(PRINTABLE_TEXT),
    symbol: z.string().regex(PRINTABLE_TEXT),
    decimals: z.int().min(0).max(255),
  })
  .meta({ description: "A funding asset the Pool accepts, as read from the token contract" });

/**
 * A path under {base_url}, on its origin: one leading "/" not followed by another "/" or a "\\" (a URL
 * parser reads "//host/x" and "/\\host/x" as another host's), and nothing a parser strips or folds
 * (controls, whitespace, backslashes). A manifest is served to apps that fetch what it names.
 */
const Path = z.string().regex(/^\/(?![/\\])[^\\\s\u0000-\u001f\u007f-\u009f]*$/, "expected a path on {base_url}'s origin: one leading / (not //), no backslash, whitespace or control character");

export const RelayRoute = z
  .strictObject({
    action: z.enum(["send", "withdraw"]).meta({ description: "what the route does" }),
    submit: Path.meta({ description: "POST path under {base_url}" }),
    status: Path.meta({ description: "GET path under {base_url}; takes ?id=" }),
    assets: z.array(Address).meta({ description: "assets this route accepts" }),
  })
  .meta({ description: "A relay route: private send or withdrawal" });

/** What an external action's terms mean: the same for every route (Pool.Action). */
export const ACTION_PARAMETERS = {
  amountIn: "input amount in the input asset's base units: what leaves the Pool to the adapter (-extAmount)",
  minOutput: "least output accepted, in the output asset's base units; less, and the action is refunded",
  outputPrecommitment: "Poseidon2(notePublicKey, blinding) of the output note, chosen by the client; the blinding never leaves it",
  deadline: "unix seconds: settled by then, or refunded (async routes)",
  finalizeFee: "paid, in the output asset, for finalizing a settled action (to the finalizer until deadline + the Pool's FINALIZE_GRACE); a refund carries no fee",
  finalizer: "who alone may finalize a settled action for its fee until deadline + the Pool's FINALIZE_GRACE (1 hour), then anyone may: the quote's relayer; 0x0 lets anyone",
  quoteId: "the quote whose terms these are (POST quote)",
} as const;

export const ExternalActionRoute = z
  .strictObject({
    action: z.literal("external"),
    id: Bytes32.meta({ description: "route id: Pool.routes(id), and the action's routeId" }),
    name: z.string().meta({ description: "the id as text" }),
    kind: z.enum(["sync", "async"]).meta({ description: "sync: settled in the action's own transaction; async: settled later by the route, or refunded after the deadline" }),
    quote: Path.meta({ description: "POST path: a signed quote of this route's terms" }),
    submit: Path.meta({ description: "POST path: the action, a withdrawal to the adapter with its quote" }),
    status: Path.meta({ description: "GET path; takes ?id= (the action's and the finalize's operations)" }),
    finalize: Path.meta({ description: "POST path: turn the settled (or failed) reservation into a note" }),
    inputAssets: z.array(Address),
    outputAssets: z.array(Address),
    adapter: z.strictObject({ address: Address, runtimeCodeHash: Bytes32 }).meta({ description: "the approved adapter, pinned to its code (as Pool.routes(id))" }),
    parameters: z.record(z.string(), z.string()).meta({ description: "what each term of an action means" }),
  })
  .meta({ description: "An approved external action route (Pool.transactAction)" });

export const ActionRoute = z
  .discriminatedUnion("action", [RelayRoute, ExternalActionRoute])
  .meta({ description: "An action route offered by this deployment" });

export const AssetRelayFee = z.strictObject({
  asset: Address,
  send: UintString.meta({ description: "minimum relay fee for a private send, in the asset's base units" }),
  withdraw: UintString.meta({ description: "minimum relay fee for a withdrawal, in the asset's base units" }),
});

export const ActionRelayFee = z.strictObject({
  route: Bytes32.meta({ description: "an external route's id" }),
  asset: Address,
  action: UintString.meta({ description: "minimum relay fee of the action, paid in its input asset (extData.fee)" }),
  finalize: UintString.meta({ description: "the finalize fee a quote sets, paid in the output asset when a settled action is finalized" }),
});

export const RelayFees = z
  .strictObject({
    relayer: Address.nullable().meta({ description: "address the fee must be paid to; null when this runtime relays nothing" }),
    fees: z.array(AssetRelayFee),
    actions: z.array(ActionRelayFee).meta({ description: "per external route and asset, one entry each: the fees quotes use" }),
  })
  .meta({ description: "Current relay fee schedule" });

export const ProofArtifact = z
  .strictObject({
    name: z.string(),
    role: z.enum(["wasm", "zkey", "verificationKey"]).meta({ description: "witness generator, proving key, or verification key" }),
    path: Path.meta({ description: "GET path under {base_url}" }),
    contentType: z.string(),
    sha256: Bytes32.meta({ description: "sha256 of the file; check it before use" }),
    size: z.int().nonnegative().meta({ description: "bytes" }),
  })
  .meta({ description: "A proof file served by the queue runtime" });

export const ProofSystem = z
  .strictObject({
    system: z.enum(["groth16", "dev"]).meta({ description: "what the Pool's verifier expects: groth16, or dev (DEVELOPMENT ONLY: a dev proof binds the public inputs and proves nothing)" }),
    curve: z.literal("bn128"),
    circuit: z.string().meta({ description: "circuit name; one proof spends 2 notes and creates 2" }),
    treeDepth: z.int().positive().meta({ description: "the Pool's Merkle tree depth (Pool.levels())" }),
    publicInputs: z.array(z.string()).meta({ description: "public signal names, in proof order" }),
    verifier: z.strictObject({ address: Address, runtimeCodeHash: Bytes32 }).meta({ description: "the Pool's verifier, for the rule-6 check" }),
    verificationKeySha256: Bytes32,
    artifacts: z.array(ProofArtifact),
  })
  .meta({ description: "What a client needs to prove, and to check that the proof files belong to this deployment" });

export const QueueEndpoints = z.strictObject({
  config: Path,
  networks: Path,
  assets: Path,
  quote: Path,
  sendRelay: Path,
  sendStatus: Path,
  withdrawRelay: Path,
  withdrawStatus: Path,
  finalize: Path,
  artifacts: Path.meta({ description: "prefix of the proof files' paths" }),
});

export const QueueInfo = z
  .strictObject({
    endpoints: QueueEndpoints.meta({ description: "endpoint paths under {base_url}" }),
    proof: ProofSystem,
  })
  .meta({ description: "Endpoint paths and proof-artifact locations" });

/**
 * Spec §2.1: the deployment configuration served by GET /api/queue/config. It is the single source of
 * truth for the manifest file, the runtime's validation and the OpenAPI document.
 */
export const DeploymentConfig = z
  .strictObject({
    chainId: z.literal(SEPOLIA_CHAIN_ID),
    poolAddress: Address,
    domain: Bytes32.meta({ description: "the Pool's proof domain (a BN254 field element)" }),
    deploymentBlock: BlockNumber,
    deploymentBlockHash: Bytes32,
    poolRuntimeCodeHash: Bytes32.meta({ description: "keccak256 of the Pool's deployed runtime code" }),
    accountRegistry: ContractRef,
    receiveDirectory: ContractRef,
    assets: z.array(FundingAsset).min(1),
    routes: z.array(ActionRoute),
    relayFees: RelayFees,
    queue: QueueInfo,
  })
  .superRefine((config, ctx) => {
    // One entry per route and asset: with two, the first found would win, and a reviewer could read the other.
    const seen = new Set<string>();
    config.relayFees.actions.forEach((f, i) => {
      const key = `${f.route.toLowerCase()}/${f.asset.toLowerCase()}`;
      if (seen.has(key)) ctx.addIssue({ code: "custom", path: ["relayFees", "actions", i], message: `a second fee entry for route ${f.route} and asset ${f.asset}: each route and asset has one` });
      seen.add(key);
    });
    // Fail closed: a route and asset without fees would be quoted, relayed and finalized for nothing.
    for (const route of config.routes) {
      if (route.action !== "external") continue;
      for (const asset of new Set([...route.inputAssets, ...route.outputAssets].map((a) => a.toLowerCase()))) {
        if (config.relayFees.actions.some((f) => f.route.toLowerCase() === route.id.toLowerCase() && f.asset.toLowerCase() === asset)) continue;
        ctx.addIssue({ code: "custom", path: ["relayFees", "actions"], message: `no fee entry for external route ${route.name} (${route.id}) and asset ${asset}: every route needs one for each of its assets` });
      }
    }
  })
  .meta({ id: "DeploymentConfig", description: "Deployment configuration (spec §2.1)" });

export type DeploymentConfig = z.output<typeof DeploymentConfig>;
export type FundingAsset = z.output<typeof FundingAsset>;
export type ProofArtifact = z.output<typeof ProofArtifact>;
export type ExternalActionRoute = z.output<typeof ExternalActionRoute>;
