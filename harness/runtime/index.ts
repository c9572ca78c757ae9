// The stack's queue runtime: src/'s, built with a dev stack's options, its log kept in memory. Part: runtime.
export { runtimeBuilderPart, runtimePart, type RuntimeBuilder, type StackRuntime } from "./parts.ts";
