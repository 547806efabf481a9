/**
 * The two body shapes of the management API: success bodies carry `code` and `message` beside the
 * resource, errors are `{ errors: [{ code, message }] }` (as the Kinde management API answers).
 */

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** A JSON response. Management answers are per caller, so nothing may be cached. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/**
 * An error in the management API's shape. Exported so a host that throttles in front of the
 * handler answers 429 in the same shape its clients already parse.
 *
 * @example
 * ```ts
 * if (!limiter.take(ip)) return errorResponse(429, 'TOO_MANY_REQUESTS', 'slow down', { 'retry-after': '10' });
 * return hooks.handler(request);
 * ```
 */
export function errorResponse(status: number, code: string, message: string, headers: Record<string, string> = {}): Response {
  return jsonResponse(status, { errors: [{ code, message }] }, headers);
}
