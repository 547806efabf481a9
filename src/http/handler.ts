import type { Management } from '../types.js';
import { type Authorize, authorizeRequest } from './auth.js';
import { contentTypeRefusal, crossSiteRefusal, METHOD_OVERRIDE, vettedWrite } from './cross-site.js';
import { type Resource, toErrorResponse, wireError } from './errors.js';
import { JWKS_PATHS, jwksResponse } from './jwks.js';
import { openApiDocument } from './openapi.js';
import { jsonResponse } from './responses.js';
import { matchRoute, splitApiPath } from './router.js';
import { ROUTES } from './routes.js';

export interface HandlerDeps {
  /** What the routes run on: the management functions (never the engine itself). */
  management: Management;
  /** The public key set document, served at `/.well-known/jwks`. */
  jwks(): { keys: unknown[] };
  /** The host's authorization hook (undefined = every management route answers 403). */
  authorize: Authorize | undefined;
  onError(message: string, error: unknown): void;
  /** Origins besides the request's own whose pages may write (`dashboard.allowedOrigins`). */
  allowedOrigins?: ReadonlySet<string>;
}

/**
 * The engine's HTTP surface as one web-standard handler: the management API under `/api/v1`
 * (Kinde-compatible, plus extensions), its OpenAPI document at `/api/v1/openapi.json`, and the
 * JWKS at `/.well-known/jwks`. Mount it under any prefix: only the tail of the path is matched.
 *
 * Order of checks: route (404), method (405), a write from another site (403, see cross-site.ts:
 * an `authorize` that reads a session cookie must not be reachable from another site's form),
 * credentials (403), then body and values (413, 415, 400), so an unauthenticated caller never
 * gets its body read. A write that carries a cookie must be `application/json` (415): a form
 * cannot send that type, and a bearer-token client sends no cookie.
 *
 * @example
 * ```ts
 * const res = await hooks.handler(new Request('https://auth.example.com/api/v1/webhooks', { headers: { authorization: `Bearer ${token}` } }));
 * ```
 */
export function createHandler(deps: HandlerDeps): (request: Request) => Promise<Response> {
  let warnedNoAuthorize = false;
  const allowedOrigins = deps.allowedOrigins ?? NO_ORIGINS;
  return async (request) => {
    let resource: Resource | undefined;
    try {
      const url = new URL(request.url);
      // An empty segment (`//api/v1/webhooks`, `/api//v1`) names nothing: no route has one, and
      // folding it would make two spellings of one resource. One trailing slash is allowed.
      if (url.pathname.replace(/\/$/, '').includes('//')) return notFound();
      const path = url.pathname.replace(/\/$/, '');
      if (JWKS_PATHS.some((p) => path.endsWith(p))) {
        if (request.method !== 'GET' && request.method !== 'HEAD') return methodNotAllowed(request.method, ['GET', 'HEAD']);
        return jwksResponse(deps.jwks(), request.method);
      }
      const managementPath = splitApiPath(path);
      if (!managementPath) return notFound();
      if (managementPath.rest.length === 1 && managementPath.rest[0] === 'openapi.json') {
        if (request.method !== 'GET') return methodNotAllowed(request.method, ['GET']);
        // Public, like the JWKS: it describes the API, not anyone's data.
        return jsonResponse(200, openApiDocument(managementPath.prefix || '/'), { 'cache-control': 'public, max-age=300' });
      }
      // The dashboard element's PATCH and DELETE as a POST naming them, when it calls this handler
      // directly (its `api` attribute): checked as any write first, and JSON whoever sends it.
      if (request.headers.has(METHOD_OVERRIDE)) {
        const refusal = writeRefusal(request, url, allowedOrigins) ?? contentTypeRefusal(request);
        if (refusal) return refusal;
        const vetted = vettedWrite(request);
        if (vetted instanceof Response) return vetted;
        request = vetted;
      }
      const match = matchRoute(ROUTES, request.method, managementPath.rest);
      if (match.kind === 'none') return notFound();
      if (match.kind === 'method') return methodNotAllowed(request.method, match.allow);
      resource = match.route.resource;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        const refusal = writeRefusal(request, url, allowedOrigins);
        if (refusal) return refusal;
      }
      if (!deps.authorize && !warnedNoAuthorize) {
        // Said once, not per request: a misconfiguration, not an attack.
        warnedNoAuthorize = true;
        deps.onError(
          'a management API request was refused because no authorize hook is configured (createWebhooks({ authorize }))',
          new Error('no authorize hook'),
        );
      }
      const environment = await authorizeRequest(deps.authorize, request, deps.onError);
      return await match.route.run({ management: deps.management, request, environment, params: match.params });
    } catch (error) {
      return toErrorResponse(error, resource, deps.onError);
    }
  };
}

const NO_ORIGINS: ReadonlySet<string> = new Set();

/**
 * A write another site may not make: only what an ambient credential can carry needs the check,
 * a cookie, or no Authorization at all (the host's authorize may read anything). A bearer token a
 * page had to set itself is no cross-site risk, and an admin app on another origin may use one.
 * A cookie-carrying write must be JSON (a form cannot send that type).
 */
function writeRefusal(request: Request, url: URL, allowedOrigins: ReadonlySet<string>): Response | null {
  const cookie = request.headers.has('cookie');
  if (!cookie && request.headers.has('authorization')) return null;
  return crossSiteRefusal(request, url, allowedOrigins) ?? (cookie ? contentTypeRefusal(request) : null);
}

const notFound = () => wireError(404, 'ROUTE_NOT_FOUND', 'no such route');

function methodNotAllowed(method: string, allow: string[]): Response {
  return wireError(405, 'METHOD_NOT_ALLOWED', `${method.slice(0, 16)} is not allowed here (allowed: ${allow.join(', ')})`, {
    allow: allow.join(', '),
  });
}
