/**
 * The dashboard: the webhooks page a host mounts for its account holders, and the
 * `<webhooks-dashboard>` element behind it.
 *
 * @example
 * ```ts
 * const dashboard = createDashboard({ api: hooks.handler, authorize, onError: console.error });
 * http.createServer(toNodeHandler(dashboard)).listen(3000); // the page at /, the API at /api/v1
 * ```
 */

export type { DashboardDeps } from './handler.js';
export { createDashboard } from './handler.js';
export type { DashboardTheme } from './look.js';
export { CONTENT_SECURITY_POLICY } from './page.js';
export type { DashboardCapability, DashboardSession } from './session.js';
