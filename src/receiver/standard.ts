import type { EventMap } from './envelope.js';
import { WebhookVerificationError } from './errors.js';
import type { WebhookEventMap } from './event-types.generated.js';
import type { NowSource } from './remote-keyset.js';
import type { Verifier } from './verifier.js';

export interface StandardVerifierOptions {
  /**
   * The webhook's signing secret (`whsec_…`, from the sender's dashboard or its
   * `GET /api/v1/webhooks/{id}/secret`), or several while you move from one to the next: a
   * delivery signed by any of them verifies. Optional when `publicKey` is given.
   */
  secret?: string | readonly string[];
  /**
   * The webhook's Ed25519 public key (`whpk_…`, shown beside its secret) for the asymmetric `v1a`
   * signature, or several while you move to a new one. Given alone, only `v1a` entries are
   * checked, so a receiver can verify without holding any secret; given with `secret`, a delivery
   * verifies when either kind of entry matches.
   */
  publicKey?: string | readonly string[];
  /** How far `webhook-timestamp` may be from now, either way, in seconds. Default 300 (5 minutes), as the specification's verifiers. */
  toleranceSeconds?: number;
  /** The only source of "now". Default: real time. */
  clock?: NowSource;
  /** Put in the event's `iss` (a Standard Webhooks body names no issuer). Default `''`. */
  issuer?: string;
}

const WHSEC = 'whsec_';
const WHPK = 'whpk_';
const encoder = new TextEncoder();

/**
 * Verifies deliveries in the Standard Webhooks format (a webhook with `format: 'standard-webhooks'`):
 * the `webhook-signature` header's `v1` entries against HMAC-SHA256 of
 * `{webhook-id}.{webhook-timestamp}.{body}` under each secret (WebCrypto's verify: a comparison
 * in constant time), or its `v1a` entries against each Ed25519 public key, the timestamp within
 * `toleranceSeconds`, the body's event fields present.
 * Give it to {@link createReceiver} like a JWT verifier: the same 400/409/200 rules and the same
 * dedupe on `webhook-id` apply.
 *
 * @example
 * ```ts
 * const receive = createReceiver({
 *   verifier: createStandardVerifier({ secret: process.env.WEBHOOK_SECRET! }),
 *   on: { 'user.created': async (event) => welcome(event.data.user) },
 * });
 * ```
 */
export function createStandardVerifier<M extends EventMap = WebhookEventMap>(options: StandardVerifierOptions): Verifier<M> {
  const list = (value: string | readonly string[] | undefined) => (typeof value === 'string' ? [value] : [...(value ?? [])]);
  const secrets = list(options?.secret);
  const publicKeys = list(options?.publicKey);
  // A secret that decodes to too few bytes (empty, not base64) would fail WebCrypto's import later,
  // in no caller's hands: refused here instead, at once.
  const secretBytes = (s: string) => base64(s.startsWith(WHSEC) ? s.slice(WHSEC.length) : s);
  if (
    secrets.some((s) => typeof s !== 'string' || secretBytes(s).length < MIN_SECRET_BYTES) ||
    (secrets.length === 0 && options?.secret !== undefined)
  )
    throw new TypeError(
      `createStandardVerifier: secret must be a whsec_… string of base64 (at least ${MIN_SECRET_BYTES} bytes), or a list of them`,
    );
  if (publicKeys.some((k) => typeof k !== 'string' || !k.startsWith(WHPK) || base64(k.slice(WHPK.length)).length !== 32))
    throw new TypeError('createStandardVerifier: publicKey must be a whpk_… string of an Ed25519 key (or a list of them)');
  if (secrets.length === 0 && publicKeys.length === 0)
    throw new TypeError("createStandardVerifier: give the webhook's secret (whsec_…) or its public key (whpk_…)");
  const tolerance = options.toleranceSeconds ?? 300;
  if (!Number.isFinite(tolerance) || tolerance <= 0) throw new TypeError('createStandardVerifier: toleranceSeconds must be positive');
  const clock = options.clock ?? { now: () => Date.now() };
  const issuer = options.issuer ?? '';
  const keys = Promise.all(
    secrets.map((s) => crypto.subtle.importKey('raw', secretBytes(s), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])),
  );
  const verifyKeys = Promise.all(
    publicKeys.map((k) => crypto.subtle.importKey('raw', base64(k.slice(WHPK.length)), { name: 'Ed25519' }, false, ['verify'])),
  );
  // A key WebCrypto still refuses fails each verification (awaited there), never the process.
  keys.catch(() => {});
  verifyKeys.catch(() => {});

  return {
    issuer,
    verify() {
      return Promise.reject(
        new WebhookVerificationError('ERR_MALFORMED_TOKEN', 'a Standard Webhooks delivery is verified with its headers: use verifyRequest'),
      );
    },
    async verifyRequest(body: string, headers: Headers) {
      const id = headers.get('webhook-id') ?? '';
      const stamp = headers.get('webhook-timestamp') ?? '';
      const signature = headers.get('webhook-signature') ?? '';
      if (!/^\d{1,12}$/.test(stamp))
        throw new WebhookVerificationError('ERR_INVALID_CLAIMS', 'a webhook-timestamp header (Unix seconds) is required');
      const seconds = Number(stamp);
      const now = clock.now() / 1000;
      if (seconds < now - tolerance) throw new WebhookVerificationError('ERR_TIMESTAMP_STALE', 'webhook-timestamp is too old');
      if (seconds > now + tolerance) throw new WebhookVerificationError('ERR_TIMESTAMP_FUTURE', 'webhook-timestamp is in the future');
      const content = encoder.encode(`${id}.${stamp}.${body}`);
      const entries = signature.split(' ');
      const entriesOf = (version: string) =>
        entries.filter((s) => s.startsWith(`${version},`)).map((s) => base64(s.slice(version.length + 1)));
      let valid = false;
      for (const key of await keys) {
        for (const candidate of entriesOf('v1')) if (await crypto.subtle.verify('HMAC', key, candidate, content)) valid = true;
      }
      for (const key of await verifyKeys) {
        for (const candidate of entriesOf('v1a')) if (await crypto.subtle.verify('Ed25519', key, candidate, content)) valid = true;
      }
      if (!valid)
        throw new WebhookVerificationError('ERR_SIGNATURE_INVALID', 'no signature in webhook-signature matches a secret or a public key');
      let event: Record<string, unknown>;
      try {
        event = JSON.parse(body) as Record<string, unknown>;
      } catch {
        throw new WebhookVerificationError('ERR_MALFORMED_TOKEN', 'the body is not JSON');
      }
      for (const field of ['type', 'timestamp', 'event_id', 'event_timestamp', 'source'])
        if (typeof event[field] !== 'string') throw new WebhookVerificationError('ERR_INVALID_CLAIMS', `the body's ${field} is missing`);
      if (typeof event.data !== 'object' || event.data === null)
        throw new WebhookVerificationError('ERR_INVALID_CLAIMS', "the body's data is missing");
      return { ...event, iss: issuer, iat: seconds } as unknown as M[keyof M];
    },
  };
}

/** The fewest bytes a signing secret may have (the Standard Webhooks specification: 24 to 64; 16 allowed). */
const MIN_SECRET_BYTES = 16;

/** Bytes of a base64 text (invalid text gives bytes that match nothing). */
function base64(text: string): Uint8Array<ArrayBuffer> {
  try {
    const raw = atob(text);
    const out = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  } catch {
    return new Uint8Array(0);
  }
}
