import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { Problem, ProblemError } from "../../src/problem.ts";
import { DEV_PREFIX, describeDev, rpc, type DevDeps } from "./dev-route-kit.ts";

/** The relayer misbehaving: paused, or out of funds. */
export const relayerRoutes: FastifyPluginAsyncZod<DevDeps> = async (app, deps) => {
  app.post(`${DEV_PREFIX}/relayer`, {
    schema: {
      ...describeDev("pause the relayer, or set its balance", "`engine: \"paused\"` stops the relay engine at a step boundary: accepted operations wait, nothing is signed or broadcast; `\"running\"` resumes it. `balanceWei` sets the relayer's ETH balance (0: submissions answer 503 relayer_unfunded)."),
      body: z.strictObject({ engine: z.enum(["paused", "running"]).optional(), balanceWei: z.string().regex(/^(0|[1-9][0-9]{0,40})$/).optional() }),
      response: { 200: z.strictObject({ engine: z.enum(["paused", "running"]), balanceWei: z.string() }), default: Problem },
    },
    handler: async (request) =>
      deps.lock.run(async () => {
        const { control } = deps;
        if (!control) throw new ProblemError("not_implemented", "this stack's runtime has no relayer");
        if (request.body.engine === "paused") await control.pause("dev");
        if (request.body.engine === "running") control.resume("dev");
        if (request.body.balanceWei !== undefined) await rpc(deps.rpcUrl, "anvil_setBalance", [deps.relayer, `0x${BigInt(request.body.balanceWei).toString(16)}`]);
        const balance = await rpc<string>(deps.rpcUrl, "eth_getBalance", [deps.relayer, "latest"]);
        return { engine: control.paused() ? ("paused" as const) : ("running" as const), balanceWei: BigInt(balance).toString() };
      }),
  });
};
