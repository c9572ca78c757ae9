// Dev tools on a running stack: the dev routes (/api/dev) and what they control (fixture actions, the
// deployment switch, snapshots of chain and operation store together), and the Host names the dev
// routes answer to (DNS rebinding protection). The dashboard, bundles and traces have folders of their own.
// Parts: dev routes, snapshots.
export { devRoutesPart, snapshotsPart, type DevRoutes, type SnapshotControls } from "./parts.ts";
export { DEV_PREFIX } from "./dev-routes.ts";
export { actionControls, type ActionControls } from "./action-controls.ts";
export type { DeploymentSwitch, ServedDeployment } from "./deployment-switch.ts";
export { SnapshotError, snapshotHooks, type StackSnapshot } from "./snapshot.ts";
export { allowedOriginsFor, crossOriginRefusal, type AllowedOrigins } from "./cross-origin.ts";
// The dev routes themselves: tests list what they register (every control that changes something is checked).
export { registerDevRoutes, registerDevOnly } from "./dev-routes.ts";
export { allowedHostsFor, checkAllowedHosts, hostAllowed, hostnameOf, AllowedHostError, type AllowedHosts } from "./allowed-hosts.ts";
