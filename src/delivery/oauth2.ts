/**
 * OAuth2 client credentials for endpoints that ask for a bearer token: one token per
 * webhook, fetched through the transport (so the token URL passes the same guard as endpoints),
 * cached until shortly before its `expires_in`, shared by every attempt meanwhile (one request
 * for all the attempts that ask while it is under way), and fetched again once when the endpoint
 * answers 401.
 */
import type { Clock } from '../clock.js';
import { redact } from '../secrets/redact.js';
import type { Guard } from './guard/guard.js';
import { type Transport, TransportError } from './transport.js';

/** What a token request needs, in clear (opened from the sealed auth for this request only). */
export interface ClientCredentials {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string | null;
  audience?: string | null;
}

/** Without `expires_in`, a token serves this long. */
const DEFAULT_LIFETIME_MS = 60_000;
/** The most of a token answer read: tokens (JWTs with claims) run past the 4 KiB an attempt's log keeps. */
const TOKEN_ANSWER_MAX_BYTES = 64 * 1024;
/** A token is fetched again this long before it expires (at most a tenth of its lifetime). */
const EARLY_MS = 30_000;

interface Cached {
  /** The sealed secret's text the token was fetched with: other credentials, another token. */
  version: string;
  token: Promise<string>;
  /** Until when it serves (Clock time); Infinity while the request is under way. */
  until: number;
}

export class TokenCache {
  readonly #tokens = new Map<string, Cached>();

  constructor(private readonly deps: { transport: Transport; clock: Clock; guard: Guard; timeoutMs: number }) {}

  /**
   * The bearer token for webhook `key` (`version`: what identifies its credentials), from the
   * cache unless `refresh` (the endpoint refused the one it had: `stale`). Rejects with a
   * {@link TransportError} of kind `auth` when the token endpoint fails.
   */
  token(key: string, version: string, credentials: () => ClientCredentials, stale?: Promise<string>): Promise<string> {
    const now = this.deps.clock.now();
    const had = this.#tokens.get(key);
    // Refreshed once per refusal: attempts refused with the same token share the new one.
    if (had && had.version === version && now < had.until && (stale === undefined || had.token !== stale)) return had.token;
    const fetched = this.#fetch(credentials());
    const entry: Cached = { version, token: fetched.then((f) => f.token), until: Number.POSITIVE_INFINITY };
    this.#tokens.set(key, entry);
    fetched.then(
      (f) => {
        entry.until = f.until;
      },
      // A failed request is not cached: the next attempt asks again.
      () => this.#tokens.get(key) === entry && this.#tokens.delete(key),
    );
    return entry.token;
  }

  /** The cached token's promise, to name as `stale` after a 401. */
  current(key: string): Promise<string> | undefined {
    return this.#tokens.get(key)?.token;
  }

  /** Forgets a webhook's token (its auth changed, or it was deleted). */
  forget(key: string): void {
    this.#tokens.delete(key);
  }

  async #fetch(c: ClientCredentials): Promise<{ token: string; until: number }> {
    const { transport, clock, guard, timeoutMs } = this.deps;
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (c.scope) form.set('scope', c.scope);
    if (c.audience) form.set('audience', c.audience);
    // client_secret_basic (RFC 6749 2.3.1): each part form-encoded, then base64.
    const basic = Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret)}`).toString('base64');
    const asked = clock.now();
    let res: Awaited<ReturnType<Transport['send']>>;
    try {
      res = await transport.send({
        url: c.tokenUrl,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `Basic ${basic}` },
        body: form.toString(),
        timeoutMs,
        guard,
        maxResponseBytes: TOKEN_ANSWER_MAX_BYTES,
      });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new TransportError('auth', `the token endpoint could not be reached: ${why}`.slice(0, 500), { cause: error });
    }
    if (res.status !== 200) {
      // A token endpoint that echoes its request must not put the client secret into the log,
      // in clear, in the Basic header's base64, or form- or JSON-encoded.
      const echoed = redact(res.excerpt, [c.clientSecret, basic, `${c.clientId}:${c.clientSecret}`]);
      const start = echoed.replace(/\s+/g, ' ').trim().slice(0, 200);
      throw new TransportError('auth', `the token endpoint answered ${res.status}${start ? `: ${start}` : ''}`);
    }
    let body: { access_token?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(res.excerpt) as typeof body;
    } catch {
      // Never the excerpt: it may hold a token.
      throw new TransportError('auth', 'the token endpoint answered 200 without a JSON body (or one too long to read)');
    }
    if (typeof body.access_token !== 'string' || body.access_token === '')
      throw new TransportError('auth', 'the token endpoint answered 200 without an access_token');
    // `expires_in: 0` (or less): good for this attempt only, never kept.
    if (typeof body.expires_in === 'number' && body.expires_in <= 0) return { token: body.access_token, until: asked };
    const lifetime = typeof body.expires_in === 'number' ? body.expires_in * 1000 : DEFAULT_LIFETIME_MS;
    return { token: body.access_token, until: asked + lifetime - Math.min(EARLY_MS, lifetime / 10) };
  }
}
