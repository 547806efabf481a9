import { type Authorize, authorizeRequest } from '../http/auth.js';
import { allowedOriginSet, contentTypeRefusal, crossSiteRefusal, vettedWrite } from '../http/cross-site.js';
import { wireError } from '../http/errors.js';
import { type AssetSet, loadAssets } from './assets.js';
import { type DashboardTheme, localeFor, lookOf } from './look.js';
import { CONTENT_SECURITY_POLICY, linkPageHtml, pageHtml, refusalText, SECURITY_HEADERS } from './page.js';
import { type DashboardSession, SESSION_COOKIE } from './session.js';

export interface DashboardDeps {
  /**
   * The management API handler (`hooks.handler`); it matches the `…/api/v1/…` tail of the path.
   * With `session` (a request under a link's session), it must answer for that environment
   * instead of asking `authorize` (the engine passes a handler that does).
   */
  api: (request: Request, session?: { environment: string }) => Promise<Response>;
  /** The host's authorization hook, the same one the API uses (undefined = everything 403). */
  authorize: Authorize | undefined;
  onError(message: string, error: unknown): void;
  /**
   * Origins, besides the request's own, whose pages may change things: the public origin when a
   * proxy terminates TLS (`https://auth.example.com` while the handler sees `http://…`), or an
   * admin app on another origin that embeds the element. Exact origins, no paths.
   */
  allowedOrigins?: readonly string[];
  /** Link access (`hooks.dashboardLink`): opens links once and finds the sessions they started. */
  links?: {
    redeem(token: string): Promise<{ sessionToken: string; session: DashboardSession; next: string | null } | null>;
    session(request: Request): Promise<DashboardSession | null>;
    readonly sessionTtlMs: number;
  };
  /** Session cookies are `Secure` when true, or when the request itself came over https. */
  secureCookies?: boolean;
  /** The host's look: name, logo, accent, light or dark (see look.ts). */
  theme?: DashboardTheme;
  /** A fixed locale (`en`, `fr`, `de`); default: each request's Accept-Language. */
  locale?: string;
}

const ASSET_DIR = new URL('./assets/', import.meta.url);
const YEAR = 'public, max-age=31536000, immutable';

/**
 * The webhooks page a host mounts for its account holders, as one
 * `(Request) => Promise<Response>`, under any prefix:
 *
 * - `GET {prefix}` and `GET {prefix}/`: the page (403 and nothing else when `authorize` refuses);
 * - `{prefix}/assets/<name>.<hash>.<ext>`: its files, cached for a year (and `<name>.<ext>`,
 *   revalidated each time, for hosts that embed the element with a stable script tag). Public:
 *   the same code for everyone, no names and no ids in it;
 * - `{prefix}/api/v1/…`: the management API, passed to `api` unchanged.
 *
 * A request that would change something is refused with 403 before `authorize` runs when it
 * comes from another site, and with 415 unless it is `application/json` (see cross-site.ts).
 * Every response carries a strict content security policy and `nosniff`.
 *
 * @example
 * ```ts
 * const dashboard = createDashboard({ api: hooks.handler, authorize, onError: console.error });
 * app.all('/settings/webhooks', (c) => dashboard(c.req.raw));
 * app.all('/settings/webhooks/*', (c) => dashboard(c.req.raw));
 * ```
 */
export function createDashboard(deps: DashboardDeps): (request: Request) => Promise<Response> {
  if (typeof deps?.api !== 'function') throw new TypeError('dashboard: api must be the management handler');
  if (typeof deps.onError !== 'function') throw new TypeError('dashboard: onError must be a function');
  const allowedOrigins = allowedOriginSet(deps.allowedOrigins);
  const look = lookOf(deps.theme, deps.locale);
  const headers = {
    ...SECURITY_HEADERS,
    'content-security-policy': look.logoOrigin
      ? CONTENT_SECURITY_POLICY.replace("img-src 'self'", `img-src 'self' ${look.logoOrigin}`)
      : CONTENT_SECURITY_POLICY,
  };
  // Read on first use, so a host that never mounts the dashboard never touches the files; a
  // failed read is tried again by the next request rather than remembered.
  let assets: Promise<AssetSet> | undefined;
  const loaded = () =>
    (assets ??= loadAssets(ASSET_DIR).catch((error) => {
      assets = undefined;
      throw error;
    }));

  return async (request) => {
    try {
      return secured(await route(request), headers);
    } catch (error) {
      deps.onError('unexpected error in the dashboard handler', error);
      return secured(wireError(500, 'INTERNAL_ERROR', 'internal error'), headers);
    }
  };

  async function route(request: Request): Promise<Response> {
    const url = new URL(request.url);
    // An empty segment names nothing, and a prefix read off `//evil.example/link/…` would send a
    // link's page on to `//evil.example/` (a dashboard mounted at the root): 404, as the API does.
    if (url.pathname.replace(/\/$/, '').includes('//')) return wireError(404, 'ROUTE_NOT_FOUND', 'no such route');
    const reading = request.method === 'GET' || request.method === 'HEAD';
    if (!reading) {
      const refusal = crossSiteRefusal(request, url, allowedOrigins);
      if (refusal) return refusal;
    }
    const target = locate(url.pathname);
    if (target.kind === 'api') {
      if (!reading) {
        const refusal = contentTypeRefusal(request);
        if (refusal) return refusal;
        // Checked here: the handler gets it as checked (the page's PATCH and DELETE come as a POST
        // naming them, for mounts that forward only GET and POST).
        const vetted = vettedWrite(request);
        if (vetted instanceof Response) return vetted;
        request = vetted;
      }
      // A link's session answers for its environment; without one, the host's authorize as ever.
      const session = await sessionOf(request);
      if (!session) return deps.api(request);
      if (session.capability !== 'manage' && (!reading || revealsSecret(url.pathname))) {
        return wireError(403, 'READ_ONLY_ACCESS', 'this session may look but not change anything, nor read a secret');
      }
      return deps.api(request, { environment: session.environment });
    }
    if (!reading)
      return wireError(405, 'METHOD_NOT_ALLOWED', `${request.method.slice(0, 16)} is not allowed here`, {
        allow: 'GET, HEAD',
      });
    const set = await loaded();
    if (target.kind === 'asset') return assetResponse(request, set, target.name);
    const locale = localeFor(look, request);
    if (target.kind === 'link') return openLink(request, url, set, target, locale);
    const session = await sessionOf(request);
    if (!session) {
      try {
        await authorizeRequest(deps.authorize, request, deps.onError);
      } catch {
        // The refusal says nothing of why, and carries no page: no names, no ids, not even the markup.
        const ended = request.headers.get('cookie')?.includes(`${SESSION_COOKIE}=`) && deps.links;
        return new Response(refusalText(locale, !!ended), {
          status: 403,
          headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
        });
      }
    }
    const capability = session?.capability ?? 'manage';
    const body =
      request.method === 'HEAD' ? null : pageHtml(target.prefix, set, { locale, theme: look.theme, capability, link: session !== null });
    // no-store: the page is answered per caller, and names this release's assets.
    return new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } });
  }

  async function sessionOf(request: Request): Promise<DashboardSession | null> {
    if (!deps.links || !request.headers.get('cookie')?.includes(`${SESSION_COOKIE}=`)) return null;
    return deps.links.session(request);
  }

  /**
   * `GET {prefix}/link/{token}`: a link opened once starts a session (a cookie scoped to the
   * prefix) and moves on to its `next`; a used, expired or forged one answers 403 and what to do.
   */
  async function openLink(request: Request, url: URL, set: AssetSet, target: { prefix: string; token: string }, locale: string) {
    const html = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' };
    // HEAD must not spend the link (a link checker, a preview).
    const opened = request.method === 'HEAD' || !deps.links ? null : await deps.links.redeem(target.token);
    if (!opened) {
      return new Response(request.method === 'HEAD' ? null : linkPageHtml(target.prefix, set, locale, null), {
        status: 403,
        headers: html,
      });
    }
    const to = opened.next ?? `${target.prefix}/`;
    const secure = deps.secureCookies || url.protocol === 'https:';
    const cookie = [
      `${SESSION_COOKIE}=${opened.sessionToken}`,
      `Path=${target.prefix || '/'}`,
      // The browser forgets it with the session; the stored expiry is what the server goes by.
      `Max-Age=${Math.ceil(deps.links!.sessionTtlMs / 1000)}`,
      'HttpOnly',
      'SameSite=Strict',
      secure ? 'Secure' : '',
    ].filter(Boolean);
    return new Response(linkPageHtml(target.prefix, set, locale, to), { headers: { ...html, 'set-cookie': cookie.join('; ') } });
  }
}

/** A read that answers a secret in clear (`GET …/api/v1/webhooks/{id}/secret`): a read-only session may not. */
function revealsSecret(pathname: string): boolean {
  return /\/api\/v1\/webhooks\/[^/]+\/secret\/?$/.test(pathname);
}

type Target =
  | { kind: 'api' }
  | { kind: 'asset'; name: string }
  | { kind: 'link'; prefix: string; token: string }
  | { kind: 'page'; prefix: string };

/**
 * What a path asks for. The mount prefix is not configured, so it is read off the path: the API
 * is anything under the last `/api/v1`, an asset is `…/assets/<file>`, and anything else is the
 * page at that prefix.
 */
function locate(pathname: string): Target {
  const segments = pathname.split('/');
  for (let i = segments.length - 2; i >= 1; i--) {
    if (segments[i] === 'api' && segments[i + 1] === 'v1') return { kind: 'api' };
  }
  if (segments.length >= 3 && segments.at(-2) === 'assets' && segments.at(-1)!.includes('.')) {
    return { kind: 'asset', name: segments.at(-1)! };
  }
  if (segments.length >= 3 && segments.at(-2) === 'link' && /^[A-Za-z0-9_-]{1,200}$/.test(segments.at(-1)!)) {
    return { kind: 'link', prefix: segments.slice(0, -2).join('/'), token: segments.at(-1)! };
  }
  return { kind: 'page', prefix: pathname.replace(/\/+$/, '') };
}

function assetResponse(request: Request, set: AssetSet, name: string): Response {
  const found = set.lookup(name);
  if (!found) return wireError(404, 'ASSET_NOT_FOUND', 'no such file');
  const { asset, immutable } = found;
  const headers: Record<string, string> = {
    'content-type': asset.contentType,
    etag: asset.etag,
    'cache-control': immutable ? YEAR : 'no-cache',
  };
  if (request.headers.get('if-none-match') === asset.etag) return new Response(null, { status: 304, headers });
  return new Response(request.method === 'HEAD' ? null : asset.body, { headers });
}

/** The same response with the dashboard's security headers added (the API's own are kept). */
function secured(response: Response, extra: Readonly<Record<string, string>>): Response {
  const headers = new Headers(response.headers);
  for (const [key, value] of Object.entries(extra)) headers.set(key, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
