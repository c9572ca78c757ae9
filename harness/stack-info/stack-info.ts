import { z } from "zod";
import { PatchedContract } from "../../src/config/patched-contract.ts";
import { STACK_URLS, type StackUrlKey } from "./urls.ts";

const Hex = z.string().regex(/^0x[0-9a-fA-F]*$/);

export const StackAccount = z.strictObject({
  address: Hex,
  privateKey: Hex,
  role: z.enum(["deployer", "dev"]),
});

/** `<state-dir>/stack.json`: the facts about a running stack that are not deployment configuration. */
/** The URLs the summary prints (STACK_URLS), each a field of its own. */
const urlFields = Object.fromEntries(STACK_URLS.map(({ key }) => [key, z.string()])) as Record<StackUrlKey, z.ZodString>;

export const StackInfo = z.strictObject({
  version: z.literal(1),
  mode: z.enum(["local", "fork"]),
  pool: z.enum(["deployed", "pinned"]),
  /** What the Pool's verifier expects: "dev" is dev proofs (DevVerifier, nothing proved). */
  proofs: z.enum(["groth16", "dev"]),
  chainId: z.number(),
  /** rpcUrl (anvil), queueUrl (the {base_url}), configUrl, docsUrl, dashboardUrl. */
  ...urlFields,
  /** The RPC as the runtime sees it: through the fault proxy (dev controls' RPC faults apply). */
  faultRpcUrl: z.string(),
  /** Fork point; the URL is stored redacted. */
  fork: z.strictObject({ url: z.string(), blockNumber: z.number(), blockHash: Hex }).nullable(),
  stateDir: z.string(),
  manifestPath: z.string(),
  /** The saved chain (--persist), or null for a throwaway one. */
  chainState: z.string().nullable(),
  poolAddress: Hex,
  relayer: z.strictObject({ address: Hex }),
  /** Funded accounts with their keys. Well-known anvil test keys: development only. */
  devAccounts: z.array(StackAccount),
  processes: z.strictObject({
    /** The process that owns the stack (dev-stack, or a test runner) and a sha256 of its command line. */
    owner: z.strictObject({ pid: z.number(), commandSha256: z.string() }),
    /** anvil's PID and the unique argument that identifies its command line. */
    anvil: z.strictObject({ pid: z.number(), marker: z.string() }),
  }),
  startedAt: z.string(),
  /** Contracts patched in place (queue-devstack patch): present only when there are some. */
  patches: z.array(PatchedContract).optional(),
});

export type StackInfo = z.output<typeof StackInfo>;
