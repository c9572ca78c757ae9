// The dashboard (GET /api/dev/dashboard): server-rendered HTML with htmx, its push channel
// (/api/dev/events), and the fragments it renders from store records and chain reads.
export { registerDashboard, type DashboardDeps, type ServedDeployments } from "./routes.ts";
// The operations list, a page at a time: rendered from store records alone (tested without a chain).
export { opsPageHtml, countsHtml as dashboardCountsHtml, PAGE_SIZE as DASHBOARD_PAGE_SIZE } from "./ops.ts";
export { controlsHtml as dashboardControlsHtml } from "./controls.ts";
export { dashboardAssets } from "./assets.ts";
export { pageHtml as dashboardPageHtml } from "./page.ts";
export { operationHtml, replayHtml as dashboardReplayHtml } from "./view.ts";
export { pushEvent as dashboardPushEvent } from "./push.ts";
