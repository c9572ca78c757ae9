// Dev tools on a running stack: the dev routes (/api/dev) and what they control (fixture actions, the
// deployment switch), traces, repro bundles, snapshots of chain and operation store together, and the
// Host names the dev routes answer to (DNS rebinding protection).
// Parts: dev routes, snapshots.
export { devRoutesPart, snapshotsPart, type DevRoutes, type SnapshotControls } from "./parts.ts";
export { actionControls, type ActionControls } from "./action-controls.ts";
export type { DeploymentSwitch, ServedDeployment } from "./deployment-switch.ts";
export { traceOf, type Trace, type TracedCall } from "./trace.ts";
export { BundleError, saveBundle, unpackBundle } from "./bundle.ts";
export { gunzipBounded } from "./bounded-gunzip.ts";
// A bundle's stored attempts settled from its rows alone (tested without a chain).
export { settleAttempts } from "./bundle-store-check.ts";
export { SnapshotError, type StackSnapshot } from "./snapshot.ts";
export { allowedHostsFor, checkAllowedHosts, hostAllowed, hostnameOf, AllowedHostError, type AllowedHosts } from "./allowed-hosts.ts";
// The dashboard's operations list, a page at a time: rendered from store records alone (tested without a chain).
export { opsPageHtml, PAGE_SIZE as DASHBOARD_PAGE_SIZE } from "./dashboard-ops.ts";
export { dashboardAssets } from "./dashboard-assets.ts";
export { pageHtml as dashboardPageHtml } from "./dashboard-page.ts";
export { operationHtml } from "./dashboard-view.ts";
export { pushEvent as dashboardPushEvent } from "./dashboard-push.ts";
