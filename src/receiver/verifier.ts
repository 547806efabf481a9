import { errors, type JWTVerifyGetKey, jwtVerify } from 'jose';
import { checkClaims } from './claims.js';
import type { EventMap } from './envelope.js';
import { WebhookVerificationError } from './errors.js';
import type { WebhookEventMap } from './event-types.generated.js';
import { type NowSource, remoteKeySet, staticKeySet } from './remote-keyset.js';

export interface VerifierOptions {
  /** The sender's issuer, exactly as it appears in `iss` (the environment's base address). */
  issuer: string;
  /** Where the key set is served. Default `{issuer}/.well-known/jwks`. */
  jwksUrl?: string | URL;
  /** A fixed key set (`{ keys: [...] }`) instead of fetching one: nothing is fetched, ever. */
  jwks?: { keys: unknown[] };
  /** Oldest accepted `timestamp`, in seconds. Default 300 (5 minutes). */
  maxAgeSeconds?: number;
  /** How far in the future a `timestamp` may be (clock drift between sender and receiver). Default 30. */
  clockSkewSeconds?: number;
  /** The only source of "now". Default: real time. */
  clock?: NowSource;
  /** How long a fetched key set is used before it is fetched again. Default 300 s. */
  jwksCacheMaxAgeSeconds?: number;
  /** Least time between two fetches caused by an unknown kid. Default 30 s. */
  jwksCooldownSeconds?: number;
  /** Deadline of a key set fetch, in milliseconds. Default 5 s. */
  jwksTimeoutMs?: number;
  /** The fetch used for the key set. Default: the global fetch. */
  fetch?: typeof fetch;
}

/** Verifies webhook tokens of one issuer. See {@link createVerifier}. */
export interface Verifier<M extends EventMap = WebhookEventMap> {
  readonly issuer: string;
  /**
   * Verifies `token` (the raw request body) and returns its claims as the event, typed by `type`.
   * Rejects with a {@link WebhookVerificationError} whose `code` says why.
   */
  verify(token: string): Promise<M[keyof M]>;
  /**
   * Present on a Standard Webhooks verifier ({@link createStandardVerifier}): verifies the raw
   * JSON body with the request's `webhook-*` headers; the receiver calls it instead of `verify`.
   */
  verifyRequest?(body: string, headers: Headers): Promise<M[keyof M]>;
}

const SYSTEM_TIME: NowSource = { now: () => Date.now() };
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Makes a verifier for the webhooks of one issuer: RS256 only, signature against the issuer's key
 * set (fetched, cached, refetched when a new kid appears), `iss` checked, `timestamp` no older than
 * `maxAgeSeconds` and not in the future beyond `clockSkewSeconds`. The `data` types are the
 * catalog's schemas; `data` itself is not re-validated here (the sender validated it before signing).
 *
 * @example
 * ```ts
 * const verifier = createVerifier({ issuer: 'https://auth.example.com' });
 * const event = await verifier.verify(await request.text());
 * if (event.type === 'user.created') console.log(event.data.user.email);
 * ```
 */
export function createVerifier<M extends EventMap = WebhookEventMap>(options: VerifierOptions): Verifier<M> {
  const o = snapshot(options);
  const getKey: JWTVerifyGetKey = o.jwks
    ? staticKeySet(o.jwks)
    : remoteKeySet(o.jwksUrl, {
        clock: o.clock,
        cacheMaxAgeMs: o.cacheMaxAgeMs,
        cooldownMs: o.cooldownMs,
        timeoutMs: o.timeoutMs,
        fetch: o.fetch,
        hint: o.jwksHint,
      });

  return Object.freeze({
    issuer: o.issuer,
    async verify(token: string): Promise<M[keyof M]> {
      if (typeof token !== 'string' || !COMPACT_JWS.test(token.trim())) {
        throw new WebhookVerificationError('ERR_MALFORMED_TOKEN', 'the body is not a compact JWT (header.payload.signature)');
      }
      const now = o.clock.now();
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token.trim(), getKey, {
          algorithms: ['RS256'],
          issuer: o.issuer,
          currentDate: new Date(now),
          clockTolerance: o.skewMs / 1000,
        }));
      } catch (error) {
        throw fromJose(error, o.issuer);
      }
      checkClaims(payload, now, o.maxAgeMs, o.skewMs);
      return payload as unknown as M[keyof M];
    },
  });
}

/** One place that turns jose's errors into our codes; anything unforeseen is a malformed token. */
function fromJose(error: unknown, issuer: string): WebhookVerificationError {
  if (error instanceof WebhookVerificationError) return error;
  const cause = { cause: error };
  if (error instanceof errors.JOSEAlgNotAllowed)
    return new WebhookVerificationError('ERR_ALGORITHM_NOT_ALLOWED', 'only RS256 tokens are accepted', cause);
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return new WebhookVerificationError('ERR_SIGNATURE_INVALID', 'the signature does not verify', cause);
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    return new WebhookVerificationError('ERR_KEY_NOT_FOUND', "no key of the issuer's key set matches the token's kid", cause);
  }
  if (error instanceof errors.JWTExpired) return new WebhookVerificationError('ERR_TIMESTAMP_STALE', 'the token has expired', cause);
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return new WebhookVerificationError('ERR_ISSUER_MISMATCH', issuerMismatch(error.payload.iss, issuer), cause);
    return new WebhookVerificationError('ERR_INVALID_CLAIMS', `the "${error.claim}" claim is invalid`, cause);
  }
  return new WebhookVerificationError('ERR_MALFORMED_TOKEN', 'the token could not be parsed', cause);
}

/**
 * Names what was received and what was expected: the usual cause is an issuer configured without
 * the host's mount prefix. The received `iss` is the sender's text and goes back in the answer and
 * into logs, so it is cut short and quoted with everything but printable ASCII escaped (no control,
 * bidi or terminal sequence survives).
 */
function issuerMismatch(received: unknown, expected: string): string {
  const got = received === undefined ? 'the token has no iss' : `the token's iss is ${quote(received)}`;
  return `${got}, expected ${quote(expected)} (the issuer must match exactly, including the host's mount prefix)`;
}

const QUOTED_MAX = 100;

function quote(value: unknown): string {
  if (typeof value !== 'string') return `a ${value === null ? 'null' : typeof value}, not a string`;
  const cut = value.length > QUOTED_MAX ? `${value.slice(0, QUOTED_MAX)}...` : value;
  return JSON.stringify(cut).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function snapshot(options: VerifierOptions) {
  if (typeof options !== 'object' || options === null) throw new TypeError('createVerifier: options are required');
  const { issuer, jwks } = options;
  if (typeof issuer !== 'string' || !URL.canParse(issuer)) throw new TypeError('createVerifier: issuer must be an absolute URL');
  if (jwks !== undefined && options.jwksUrl !== undefined) throw new TypeError('createVerifier: pass jwks or jwksUrl, not both');
  const jwksUrl = new URL(options.jwksUrl ?? `${issuer.replace(/\/+$/, '')}/.well-known/jwks`);
  if (jwksUrl.protocol !== 'https:' && jwksUrl.protocol !== 'http:') throw new TypeError('createVerifier: jwksUrl must be http(s)');
  const clock = options.clock ?? SYSTEM_TIME;
  if (typeof clock?.now !== 'function') throw new TypeError('createVerifier: clock must have now()');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw new TypeError('createVerifier: no fetch available; pass options.fetch or options.jwks');
  // What a failed key set fetch tells the operator to check. A 404 here is most often an issuer
  // configured without the path the host mounts the webhooks handler under.
  const jwksHint =
    options.jwksUrl === undefined
      ? `Check the issuer ${JSON.stringify(issuer)}: it must be the sender's full base address, including the path its host mounts the webhooks handler under (the key set is served at {issuer}/.well-known/jwks).`
      : 'Check jwksUrl: it must be where the sender serves its key set ({issuer}/.well-known/jwks for identity-webhooks).';
  return {
    issuer,
    jwks,
    jwksUrl,
    jwksHint,
    clock,
    fetch: fetchImpl,
    maxAgeMs: seconds(options.maxAgeSeconds, 300, 'maxAgeSeconds', false),
    skewMs: seconds(options.clockSkewSeconds, 30, 'clockSkewSeconds', true),
    cacheMaxAgeMs: seconds(options.jwksCacheMaxAgeSeconds, 300, 'jwksCacheMaxAgeSeconds', true),
    cooldownMs: seconds(options.jwksCooldownSeconds, 30, 'jwksCooldownSeconds', true),
    timeoutMs: milliseconds(options.jwksTimeoutMs ?? 5000, 'jwksTimeoutMs'),
  };
}

function milliseconds(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new TypeError(`createVerifier: ${name} must be a positive integer`);
  return value;
}

function seconds(value: number | undefined, fallback: number, name: string, zeroOk: boolean): number {
  const v = value ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (!zeroOk && v === 0)) {
    throw new TypeError(`createVerifier: ${name} must be a ${zeroOk ? 'non-negative' : 'positive'} number`);
  }
  return Math.round(v * 1000);
}
