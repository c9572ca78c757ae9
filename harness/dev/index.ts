// Dev tools on a running stack: the dev routes (/api/dev) and what they control (fixture actions, the
// deployment switch), and the Host names the dev routes answer to (DNS rebinding protection). The
// dashboard, bundles, traces and snapshots have folders of their own. Part: dev routes.
export { devRoutesPart, type DevRoutes } from "./parts.ts";
export { DEV_PREFIX } from "./dev-route-kit.ts";
export { actionControls, type ActionControls } from "./action-controls.ts";
export type { DeploymentSwitch, ServedDeployment } from "./deployment-switch.ts";
export { allowedOriginsFor, crossOriginRefusal, type AllowedOrigins } from "./cross-origin.ts";
// The dev routes themselves: tests list what they register (every control that changes something is checked).
export { registerDevRoutes, registerDevOnly } from "./dev-routes.ts";
export { allowedHostsFor, checkAllowedHosts, hostAllowed, hostnameOf, AllowedHostError, type AllowedHosts } from "./allowed-hosts.ts";
