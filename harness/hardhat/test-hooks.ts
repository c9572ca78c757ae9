import type { TestHooks } from "hardhat/types/hooks";
import { stopStackOf } from "./stacks.ts";

export default async (): Promise<Partial<TestHooks>> => ({
  // The end of `hardhat test` (each runner's): the stack goes, so the process can exit.
  onTestRunDone: async (context, id, next) => {
    await next(context, id);
    await stopStackOf(context);
  },
});
