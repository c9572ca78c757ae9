// An operation's call trace, decoded against the fixtures' ABIs (debug_traceTransaction, or a call
// replayed at its block): the dev routes, the dashboard and `queue-devstack trace` read it.
export { operationTrace, traceOf, type Trace, type TracedCall } from "./trace.ts";
