// identity-webhooks/dashboard: needs @types/node only.
import { CONTENT_SECURITY_POLICY, createDashboard } from 'identity-webhooks/dashboard';

export const csp: string = CONTENT_SECURITY_POLICY;
export const make: typeof createDashboard = createDashboard;
