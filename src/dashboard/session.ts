/** What a dashboard link lets its holder do: `read` (see everything, change nothing) or `manage`. */
export type DashboardCapability = 'read' | 'manage';

/** A session a link started (`hooks.dashboardLink`), as the dashboard handler sees it. */
export interface DashboardSession {
  environment: string;
  capability: DashboardCapability;
  expiresAt: number;
}

/** The name of the session cookie (scoped to the dashboard's prefix by its `Path`). */
export const SESSION_COOKIE = 'iw_dashboard_session';
