import { wireError } from './errors.js';

/**
 * The dashboard is used with the account holder's cookie (and the management API may be, with a
 * session-based `authorize`), so a page on another site must not be able to change anything with
 * it (CSRF), by `fetch` or by a plain HTML form. Two signals, both set
 * by the browser and impossible for a page to forge:
 *
 * - `Sec-Fetch-Site`: `cross-site` or `same-site` is refused (`same-site` too: a sibling
 *   subdomain may be run by someone else, e.g. an account holder's own app on the same parent
 *   domain).
 * - `Origin`: refused when present and neither the request's own origin nor one the host allowed.
 *
 * Clients that are not browsers send neither header; they carry no ambient cookie either, and
 * `authorize` judges them as usual.
 *
 * Behind a proxy that terminates TLS, the request the handler sees may say `http://` while the
 * browser says `Origin: https://…`; list the public origin in `allowedOrigins`. An origin listed
 * there is trusted outright (its `Sec-Fetch-Site` may then be `same-site`, e.g. an admin app on
 * another subdomain embedding the element).
 */
export function crossSiteRefusal(request: Request, url: URL, allowedOrigins: ReadonlySet<string>): Response | null {
  const origin = request.headers.get('origin');
  if (origin !== null) {
    if (allowedOrigins.has(origin)) return null;
    if (origin !== url.origin) return refuse();
  }
  const site = request.headers.get('sec-fetch-site');
  if (site === 'cross-site' || site === 'same-site') return refuse();
  return null;
}

/**
 * Writes must be `application/json`. The API alone accepts an empty optional body of any type
 * (`POST …/disable`), which an HTML form on any site can send; a JSON content type cannot be sent
 * cross-origin without a CORS preflight, which nothing here answers.
 */
export function contentTypeRefusal(request: Request): Response | null {
  const type = request.headers.get('content-type');
  const media = type?.split(';', 1)[0]?.trim().toLowerCase();
  if (media === 'application/json') return null;
  return wireError(415, 'UNSUPPORTED_MEDIA_TYPE', 'dashboard requests that change something must be application/json', {
    accept: 'application/json',
  });
}

const refuse = () => wireError(403, 'CROSS_SITE_REQUEST', 'requests from another site may not change anything here');

/** Checks and freezes the host's list of extra origins allowed to write (exact `scheme://host[:port]`). */
export function allowedOriginSet(origins: readonly string[] | undefined): ReadonlySet<string> {
  if (origins === undefined) return new Set();
  if (!Array.isArray(origins)) throw new TypeError('dashboard: allowedOrigins must be an array of origins');
  const set = new Set<string>();
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = typeof origin === 'string' ? new URL(origin) : undefined;
    } catch {
      parsed = undefined;
    }
    // Exact origins only: a path or a trailing slash would never equal a browser's Origin header.
    if (!parsed || parsed.origin !== origin || !/^https?:$/.test(parsed.protocol)) {
      throw new TypeError(`dashboard: allowedOrigins entry ${JSON.stringify(origin)} is not an origin like https://admin.example.com`);
    }
    set.add(origin);
  }
  return set;
}

/** The header the dashboard's page sends its PATCH and DELETE as a POST with. */
export const METHOD_OVERRIDE = 'x-http-method-override';
const OVERRIDABLE = new Set(['PATCH', 'DELETE', 'PUT']);

/**
 * A write the dashboard has checked ({@link crossSiteRefusal}, {@link contentTypeRefusal}), as it
 * hands it to the management handler: with the method its `x-http-method-override` names (PATCH,
 * DELETE, PUT: for mounts that forward only GET and POST, better-auth's Hono guide or a Next.js
 * route exporting `{ GET, POST }`), and without the headers that told where it came from (the
 * handler would judge them again against origins it may not know). A custom header needs a CORS
 * preflight from another origin, which nothing here answers, and a form cannot send one.
 * A Response: the override was refused.
 */
export function vettedWrite(request: Request): Request | Response {
  const asked = request.headers.get(METHOD_OVERRIDE);
  const method = asked === null ? request.method : asked.trim().toUpperCase();
  if (asked !== null && (request.method !== 'POST' || !OVERRIDABLE.has(method)))
    return wireError(405, 'METHOD_NOT_ALLOWED', `${METHOD_OVERRIDE} may turn a POST into PATCH, PUT or DELETE only`);
  const headers = new Headers(request.headers);
  for (const name of [METHOD_OVERRIDE, 'origin', 'sec-fetch-site', 'sec-fetch-mode', 'sec-fetch-dest']) headers.delete(name);
  const init: RequestInit & { duplex?: 'half' } = { method, headers };
  if (request.body !== null && method !== 'GET' && method !== 'HEAD') {
    init.body = request.body;
    init.duplex = 'half';
  }
  return new Request(request.url, init);
}
