// Dev tools on a running stack: the dev routes (/api/dev) and what they control (fixture actions, the
// deployment switch), traces, repro bundles, and snapshots of chain and operation store together.
export { registerDevRoutes, DEV_PREFIX } from "./dev-routes.ts";
export { actionControls, type ActionControls } from "./action-controls.ts";
export { deploymentSwitch, type DeploymentSwitch, type ServedDeployment } from "./deployment-switch.ts";
export { traceOf, type Trace, type TracedCall } from "./trace.ts";
export { BundleError, bundleBytes, saveBundle, unpackBundle } from "./bundle.ts";
export { createSnapshots, SnapshotError, type StackSnapshot } from "./snapshot.ts";
