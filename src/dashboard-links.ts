import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from './clock.js';
import { type DashboardCapability, type DashboardSession, SESSION_COOKIE } from './dashboard/session.js';
import type { DashboardGrantRecord } from './model.js';
import type { StoreAccess } from './store-access.js';
import { environmentOf } from './validate.js';

export type { DashboardCapability, DashboardSession } from './dashboard/session.js';

/** `hooks.dashboardLink`'s argument. */
export interface DashboardLinkOptions {
  /** The account holder's environment: what the session sees and manages. */
  environment: string;
  /** Default `['manage']`. `['read']` gives a session whose writes answer 403 and whose page hides them. */
  capabilities?: DashboardCapability[];
  /** How long the link may wait to be opened. Default one hour, at most seven days. */
  ttlMs?: number;
  /**
   * Where the link lands once opened: a view (`#/catalog`, `#/webhooks/{id}`) or a path under the
   * dashboard's prefix. Anything else is refused (no open redirect).
   */
  next?: string;
}

const HOUR = 3_600_000;
export const LINK_TTL_DEFAULT = HOUR;
export const LINK_TTL_MAX = 7 * 24 * HOUR;
export const SESSION_TTL_DEFAULT = 12 * HOUR;
export const SESSION_TTL_MAX = 7 * 24 * HOUR;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Single-use links into the dashboard and the sessions they start. A token is 32 random bytes
 * (base64url); only its SHA-256 is stored, so the table alone opens nothing. Why stored rather
 * than signed: docs/decisions/031-dashboard-link-access.md.
 */
export class DashboardLinks {
  readonly #access: StoreAccess;
  readonly #clock: Clock;
  readonly #url: URL | null;
  readonly #sessionTtlMs: number;

  constructor(deps: { access: StoreAccess; clock: Clock; url: string | undefined; sessionTtlMs: number | undefined }) {
    this.#access = deps.access;
    this.#clock = deps.clock;
    this.#url = dashboardUrl(deps.url);
    this.#sessionTtlMs = duration(deps.sessionTtlMs, SESSION_TTL_DEFAULT, SESSION_TTL_MAX, 'dashboard.sessionTtlMs');
  }

  /** Mints a link (see `Webhooks.dashboardLink`). */
  async mint(options: DashboardLinkOptions): Promise<string> {
    if (!this.#url) throw new TypeError('dashboardLink: set createWebhooks({ dashboard: { url } }) to where the dashboard is mounted');
    const store = this.#access.store;
    if (!store.insertDashboardGrant || !store.redeemDashboardLink || !store.getDashboardSession) {
      throw new TypeError('dashboardLink: this store does not keep dashboard links (it predates them)');
    }
    if (typeof options !== 'object' || options === null) throw new TypeError('dashboardLink: options must be an object');
    const environment = environmentOf(options.environment);
    const capability = capabilityOf(options.capabilities);
    const ttlMs = duration(options.ttlMs, LINK_TTL_DEFAULT, LINK_TTL_MAX, 'dashboardLink: ttlMs');
    const next = options.next === undefined ? null : nextOf(options.next, this.#url);
    const token = randomBytes(32).toString('base64url');
    const now = this.#clock.now();
    const grant = {
      id: hashOf(token),
      kind: 'link',
      environment,
      capability,
      next,
      expiresAt: now + ttlMs,
      usedAt: null,
      createdAt: now,
    } as const;
    await this.#access.run('minting a dashboard link', (s) => s.insertDashboardGrant!(grant, now));
    // (At the root the URL's path is `/`: no empty segment, which the dashboard refuses.)
    return `${this.#url.origin}${this.#url.pathname.replace(/\/$/, '')}/link/${token}`;
  }

  /** Opens a link once: the new session's cookie token and where to go, or null (unknown, used, expired). */
  async redeem(token: string): Promise<{ sessionToken: string; session: DashboardSession; next: string | null } | null> {
    if (!TOKEN.test(token) || !this.#access.store.redeemDashboardLink) return null;
    const now = this.#clock.now();
    const sessionToken = randomBytes(32).toString('base64url');
    const session = { id: hashOf(sessionToken), expiresAt: now + this.#sessionTtlMs };
    const grant = await this.#access.run('opening a dashboard link', (s) => s.redeemDashboardLink!(hashOf(token), session, now));
    if (!grant) return null;
    return { sessionToken, session: sessionOf(grant), next: grant.next };
  }

  /** The live session named by the request's cookie, or null. */
  async session(request: Request): Promise<DashboardSession | null> {
    if (!this.#access.store.getDashboardSession) return null;
    const token = cookieValue(request.headers.get('cookie'), SESSION_COOKIE);
    if (!token || !TOKEN.test(token)) return null;
    const now = this.#clock.now();
    const grant = await this.#access.run('reading a dashboard session', (s) => s.getDashboardSession!(hashOf(token), now));
    return grant ? sessionOf(grant) : null;
  }

  get sessionTtlMs(): number {
    return this.#sessionTtlMs;
  }
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

function sessionOf(grant: DashboardGrantRecord): DashboardSession {
  return { environment: grant.environment, capability: grant.capability, expiresAt: grant.expiresAt };
}

function dashboardUrl(url: string | undefined): URL | null {
  if (url === undefined) return null;
  const parsed = typeof url === 'string' && URL.canParse(url) ? new URL(url) : null;
  if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.search || parsed.hash) {
    throw new TypeError('createWebhooks: dashboard.url must be the absolute http(s) address the dashboard is mounted at');
  }
  parsed.pathname = parsed.pathname.replace(/\/+$/, '');
  return parsed;
}

function capabilityOf(capabilities: DashboardCapability[] | undefined): DashboardCapability {
  if (capabilities === undefined) return 'manage';
  if (!Array.isArray(capabilities) || capabilities.length === 0 || capabilities.some((c) => c !== 'read' && c !== 'manage')) {
    throw new TypeError("dashboardLink: capabilities must be a non-empty list of 'read' and 'manage'");
  }
  return capabilities.includes('manage') ? 'manage' : 'read';
}

function duration(value: number | undefined, fallback: number, max: number, what: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0 || value > max)
    throw new TypeError(`${what} must be a whole number of ms from 1 to ${max}`);
  return value;
}

/**
 * A deep link the dashboard may redirect to: a view (`#/…`) or a path under its own prefix, with
 * no scheme, no host, no `//`, no backslash, no `..`: never an open redirect.
 */
export function nextOf(next: string, base: URL): string {
  const refuse = () =>
    new TypeError(`dashboardLink: next ${JSON.stringify(next)} must be a view like "#/catalog" or a path under ${base.pathname || '/'}`);
  if (
    typeof next !== 'string' ||
    next.length > 2000 ||
    /[\\\s]/.test(next) ||
    [...next].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)
  )
    throw refuse();
  if (next.startsWith('#/')) return `${base.pathname}${next}`;
  const prefix = base.pathname;
  if (!next.startsWith('/') || next.startsWith('//') || next.split(/[?#]/, 1)[0]!.split('/').includes('..')) throw refuse();
  const rest = next.slice(prefix.length);
  if (!next.startsWith(prefix) || !(rest === '' || /^[/?#]/.test(rest))) throw refuse();
  // Resolved against the dashboard's own origin, it must stay there and under the prefix.
  const resolved = new URL(next, base.origin);
  if (resolved.origin !== base.origin || !resolved.pathname.startsWith(prefix)) throw refuse();
  return next;
}

function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}
