/**
 * Why a webhook request was refused. Stable codes, so a receiver can log or count them without
 * parsing messages.
 *
 * - `ERR_MALFORMED_TOKEN`: not a compact JWS with JSON header and claims.
 * - `ERR_ALGORITHM_NOT_ALLOWED`: any `alg` but RS256 (`none`, `HS256`, ...).
 * - `ERR_KEY_NOT_FOUND`: no key with the token's `kid` in the key set, even after a refetch.
 * - `ERR_SIGNATURE_INVALID`: the signature does not match (another key, a tampered payload).
 * - `ERR_ISSUER_MISMATCH`: `iss` is not the configured issuer (the message quotes both).
 * - `ERR_TIMESTAMP_STALE` / `ERR_TIMESTAMP_FUTURE`: `timestamp` outside the accepted window.
 * - `ERR_INVALID_CLAIMS`: a required claim is missing or of the wrong type.
 * - `ERR_JWKS_UNAVAILABLE`: the key set could not be fetched, was over 64 KiB, or is not a key set
 *   (answered 503, so the sender tries again).
 * - `ERR_CONTENT_TYPE`, `ERR_EMPTY_BODY`, `ERR_BODY_TOO_LARGE`, `ERR_WEBHOOK_ID`: the HTTP request
 *   itself is not a webhook delivery.
 */
export type VerificationErrorCode =
  | 'ERR_MALFORMED_TOKEN'
  | 'ERR_ALGORITHM_NOT_ALLOWED'
  | 'ERR_KEY_NOT_FOUND'
  | 'ERR_SIGNATURE_INVALID'
  | 'ERR_ISSUER_MISMATCH'
  | 'ERR_TIMESTAMP_STALE'
  | 'ERR_TIMESTAMP_FUTURE'
  | 'ERR_INVALID_CLAIMS'
  | 'ERR_JWKS_UNAVAILABLE'
  | 'ERR_CONTENT_TYPE'
  | 'ERR_EMPTY_BODY'
  | 'ERR_BODY_TOO_LARGE'
  | 'ERR_WEBHOOK_ID';

/**
 * A webhook that must not be processed. Messages never quote the token or key material, and are
 * safe to send back to the sender, except `ERR_JWKS_UNAVAILABLE`'s: it names the key set URL, why
 * the fetch failed and what to check, for the receiver's operator (`createReceiver` logs it through
 * `onError` and answers the sender a generic 503).
 *
 * @example
 * ```ts
 * try { event = await verifier.verify(token) }
 * catch (e) { if (e instanceof WebhookVerificationError) metrics.count(e.code); throw e }
 * ```
 */
export class WebhookVerificationError extends Error {
  readonly code: VerificationErrorCode;

  constructor(code: VerificationErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }

  /** The HTTP status a receiver answers with: 503 when our side could not get keys, else 400/413. */
  get status(): 400 | 413 | 503 {
    if (this.code === 'ERR_JWKS_UNAVAILABLE') return 503;
    if (this.code === 'ERR_BODY_TOO_LARGE') return 413;
    return 400;
  }
}
