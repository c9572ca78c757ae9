import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { PatchedContract } from "../../src/config/patched-contract.ts";
import { chainUnavailable } from "../../src/admission/refusals.ts";
import { Problem, ProblemError } from "../../src/problem.ts";
import { JsonRpcError } from "../chain/index.ts";
import { PatchError } from "./errors.ts";
import type { Patcher } from "./patcher.ts";
import { STACK_PROBLEMS } from "../dev/problems/index.ts";

/** The dev routes' prefix (harness/dev's DEV_PREFIX). */
const PREFIX = "/api/dev";
const tags = ["development only"];
const devOnly = " Present in a dev stack only (never in an operator's runtime), for loopback clients under a loopback or allowed Host name; refused from another site's page. See docs/patching.md.";

const PatchAnswer = PatchedContract.extend({ previousCodeHash: z.string().meta({ description: "keccak256 of the runtime code it replaced" }) }).meta({ id: "PatchAnswer" });

/** A refusal is a problem with its stable code; anvil's refusal is the chain's answer, a 503. */
const asProblem = (error: unknown): never => {
  if (error instanceof PatchError) throw new ProblemError(error.code, error.message, { table: STACK_PROBLEMS });
  if (error instanceof JsonRpcError) throw new ProblemError("chain_unavailable", error.message);
  // The runtime's own check of the patched chain, through its RPC (a dev RPC fault on, say): 503, try again.
  throw chainUnavailable(error);
};

/** POST /api/dev/patch, POST /api/dev/unpatch, GET /api/dev/patches: registered in harness/dev's dev-only scope. */
export const patchRoutes: FastifyPluginAsyncZod<{ patcher: Patcher }> = async (app, { patcher }) => {
  app.post(`${PREFIX}/patch`, {
    schema: {
      tags,
      summary: "Development only: patch a deployed contract in place",
      description: `Replaces the runtime code of a contract of the manifest (Pool, verifier, registry, directory, an asset's symbol, or an address) with \`source\`'s: a .sol file (compiled with the npm solc, offline), a Hardhat artifact, build-info or compiler output, as a path on this machine (\`file:Contract\` picks one contract). Storage, address and balance are kept; the deployed immutables are filled in. A moved or retyped storage variable (422 storage_layout_changed) or a dropped, added or retyped immutable (422 immutable_changed) is refused, naming it, the stack left as it was. Serialized with reset and the other controls.${devOnly}`,
      body: z.strictObject({ contract: z.string().min(1).max(200), source: z.string().min(1).max(4096) }),
      response: { 200: PatchAnswer, default: Problem },
    },
    handler: async (request) => patcher.patch(request.body.contract, request.body.source).catch(asProblem),
  });

  app.post(`${PREFIX}/unpatch`, {
    schema: {
      tags,
      summary: "Development only: undo a contract's patch",
      description: `Puts back the code the stack started with (storage as it is now): a loaded bundle's patched code, else (or once that is back) the code from before the first patch.${devOnly}`,
      body: z.strictObject({ contract: z.string().min(1).max(200) }),
      response: { 200: PatchAnswer, default: Problem },
    },
    handler: async (request) => patcher.unpatch(request.body.contract).catch(asProblem),
  });

  app.get(`${PREFIX}/patches`, {
    schema: { tags, summary: "Development only: the patched contracts", description: `Which contracts are patched now, and with what.${devOnly}`, response: { 200: z.strictObject({ patched: z.array(PatchedContract) }), default: Problem } },
    handler: async () => ({ patched: patcher.patches() }),
  });
};
