import type { AuthorizeResult, Webhooks } from '../engine.js';
import { WebhooksError } from '../errors.js';
import { JWKS_PATHS, jwksResponse } from './jwks.js';

export interface HandlerDeps {
  /** The engine: management functions, event types, JWKS. */
  hooks: Webhooks;
  /** The host's authorization hook (undefined = every management route answers 403). */
  authorize: ((request: Request) => AuthorizeResult | Promise<AuthorizeResult>) | undefined;
  onError(message: string, error: unknown): void;
}

/**
 * The engine's HTTP surface as one web-standard handler. Mount it anywhere: only the tail of the
 * path is matched, so `/auth/.well-known/jwks` works under a prefix.
 */
export function createHandler(deps: HandlerDeps): (request: Request) => Promise<Response> {
  return async (request) => {
    try {
      const path = new URL(request.url).pathname.replace(/\/+$/, '');
      if (JWKS_PATHS.some((p) => path.endsWith(p))) {
        if (request.method !== 'GET' && request.method !== 'HEAD') return errorResponse(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed here`, { allow: 'GET, HEAD' });
        return jwksResponse(deps.hooks.jwks(), request.method);
      }
      return errorResponse(404, 'ROUTE_NOT_FOUND', 'no such route');
    } catch (error) {
      if (error instanceof WebhooksError) return errorResponse(400, error.code, error.message);
      deps.onError('unexpected error in HTTP handler', error);
      return errorResponse(500, 'INTERNAL_ERROR', 'internal error');
    }
  };
}

export function errorResponse(status: number, code: string, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ errors: [{ code, message }] }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}
