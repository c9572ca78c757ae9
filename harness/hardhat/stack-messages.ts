import type { DevStack } from "../index.ts";

/** What the main thread knows of the worker's stack: plain data, as a message carries it. */
export const VIEW_KEYS = ["rpcUrl", "queueUrl", "manifest", "manifestPath", "stackInfoPath", "stateDir", "accounts", "relayer", "chainPid"] as const;
export type StackView = Pick<DevStack, (typeof VIEW_KEYS)[number]>;

/** A call on the stack. */
export type StackRequest = { method: "reset" | "snapshot" | "stop" } | { method: "revert"; snapshot: number } | { method: "loadFixture"; fixture: number };

/** Main thread to worker: a numbered call, or the end of a fixture's setup the worker asked for. */
export type StackCall = (StackRequest & { call: number }) | { setupDone: number; error?: unknown };

/** Worker to main thread. */
export type StackReply =
  | { ready: StackView }
  | { startError: unknown }
  | { reply: number; value?: unknown; error?: unknown }
  | { setup: number; run: number };
