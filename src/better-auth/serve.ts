import { runWithRequestState } from '@better-auth/core/context';
import { type DispatchContext, dispatchAuthEndpoint, getSession } from 'better-auth/api';
import { wireError } from '../http/errors.js';
import type { AuthorizeResult, Webhooks } from '../types.js';
import type { AuthUser } from './mapping.js';

/** Who may manage webhooks: their environment, or null for no one (403). */
export type Manage = (who: { user: AuthUser; session: Record<string, unknown> }) => string | null | Promise<string | null>;

/** The slice of better-auth's AuthContext the serving side reads. */
export interface ServedContext {
  baseURL: string;
  [field: string]: unknown;
}

/**
 * Everything under `{basePath}{path}` goes to the engine, inside better-auth's handler (its
 * `onRequest`, before better-auth's own routing): `/dashboard…` and `/api/v1/…` through the
 * dashboard's handler (its cross-site refusal), `/.well-known/jwks` to the management handler,
 * which answers 404 for anything else.
 */
export function createServing(path: string, manage: Manage) {
  // The better-auth context a request came in with, for `authorize` (the engine hands it only the request).
  const contexts = new WeakMap<Request, ServedContext>();
  let fallback: ServedContext | undefined;

  return {
    remember(context: ServedContext) {
      fallback = context;
    },

    async onRequest(request: Request, context: ServedContext, hooks: Webhooks | undefined): Promise<{ response: Response } | undefined> {
      const url = new URL(request.url);
      const mount = `${new URL(context.baseURL || url.origin, url.origin).pathname.replace(/\/+$/, '')}${path}`;
      if (url.pathname !== mount && !url.pathname.startsWith(`${mount}/`)) return undefined;
      if (!hooks) return { response: new Response('webhooks are starting', { status: 503 }) };
      contexts.set(request, context);
      const tail = url.pathname.slice(mount.length).replace(/\/$/, '');
      // The key set is public. Everything else goes through the dashboard's handler: the session
      // is a cookie here, so writes from another site are refused (403) and must be JSON, as on
      // the page. Only the two mounts are served: the management handler matches the API under
      // any prefix, and `…/webhooks/x/api/v1/…` must not reach it some other way.
      if (tail === '/.well-known/jwks' || tail === '/.well-known/jwks.json') return { response: await hooks.handler(request) };
      // The API, the page, and under the page only its assets, its links and its own API.
      const served = /^\/(?:api\/v1(?:\/|$)|dashboard(?:$|\/(?:api\/v1(?:\/|$)|assets\/|link\/)))/.test(tail);
      if (!served) return { response: wireError(404, 'ROUTE_NOT_FOUND', 'no such route') };
      return { response: await hooks.dashboard(request) };
    },

    /** The engine's `authorize`: the better-auth session of the request, then `manage`. */
    async authorize(request: Request): Promise<AuthorizeResult> {
      const context = contexts.get(request) ?? fallback;
      if (!context) return null;
      const session = await sessionOf(context, request);
      if (!session) return null;
      const environment = await manage(session);
      return typeof environment === 'string' ? { environment } : null;
    },
  };
}

/**
 * better-auth's own session lookup (signed cookie, cookie cache, the session row and its
 * expiry), as `auth.api.getSession({ headers })` runs it: through its hook pipeline, in a
 * request state of its own (the lookup keeps what it finds there).
 */
async function sessionOf(context: ServedContext, request: Request): Promise<{ user: AuthUser; session: Record<string, unknown> } | null> {
  const lookup = () =>
    dispatchAuthEndpoint(getSession(), {
      context: context as unknown as DispatchContext['context'],
      headers: request.headers,
      method: 'GET',
      query: {},
      asResponse: false,
    });
  const found = (await runWithRequestState(new WeakMap(), lookup).catch(() => null)) as {
    user?: AuthUser;
    session?: Record<string, unknown>;
  } | null;
  if (!found?.user || !found.session) return null;
  return { user: found.user, session: found.session };
}
