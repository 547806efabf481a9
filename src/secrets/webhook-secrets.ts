/**
 * A webhook's secrets at rest: the Standard Webhooks signing keys and the endpoint
 * auth, sealed with the webhook's id as associated data before they reach the store, masked
 * (`********`) on every way out but the signing secret's explicit reveal, and sealed again under
 * the first key by the re-seal helper.
 */

import { createPrivateKey, X509Certificate } from 'node:crypto';
import { isCredentialHeader } from '../endpoint-options.js';
import { ValidationError, WebhooksError } from '../errors.js';
import type { WebhookAuth, WebhookRecord, WebhookSigning } from '../model.js';
import { newEd25519Pair, newSigningSecret } from '../signing/standard-webhooks.js';
import { MASK } from './auth-input.js';
import { isSealed, type Sealer } from './seal.js';

/** Grace of a rotation when none is given: a day. */
export const DEFAULT_GRACE_MS = 24 * 3600_000;
/** The longest grace a rotation may have: a week. */
export const MAX_GRACE_MS = 7 * 24 * 3600_000;

/** New signing keys for webhook `id`: a secret, and an Ed25519 pair when `asymmetric`; sealed. */
export function newSigning(sealer: Sealer, id: string, asymmetric: boolean): WebhookSigning {
  const pair = asymmetric ? newEd25519Pair() : null;
  return {
    secret: sealer.seal(newSigningSecret(), id),
    previous: null,
    previousUntil: null,
    publicKey: pair?.publicKey ?? null,
    privateKey: pair ? sealer.seal(pair.privateKey, id) : null,
  };
}

/** The signing keys with an Ed25519 pair added (asymmetric) or removed. */
export function withAsymmetric(sealer: Sealer, id: string, signing: WebhookSigning, asymmetric: boolean): WebhookSigning {
  if (asymmetric === (signing.publicKey !== null)) return signing;
  if (!asymmetric) return { ...signing, publicKey: null, privateKey: null };
  const pair = newEd25519Pair();
  return { ...signing, publicKey: pair.publicKey, privateKey: sealer.seal(pair.privateKey, id) };
}

/** A new secret; the current one keeps signing beside it until `now + graceMs`. */
export function rotated(sealer: Sealer, id: string, signing: WebhookSigning, now: number, graceMs: number): WebhookSigning {
  // Every secret handed out keeps signing until its own grace ends, however close together the
  // rotations (concurrent ones are serialized by the store's compare-and-set): the one replaced
  // now, and those before it still in grace.
  // (A rotation without grace ends every grace: the new secret alone signs, as it always did.)
  const retired = graceMs > 0 ? [{ secret: signing.secret, until: now + graceMs }, ...inGrace(signing, now)] : [];
  if (retired.length > MAX_RETIRED)
    throw new ValidationError(
      `at most ${MAX_RETIRED} rotated secrets may be in their grace at once: wait for the oldest to end, or rotate with graceMs 0`,
      { field: 'graceMs' },
    );
  const [latest, ...older] = retired;
  return {
    ...signing,
    secret: sealer.seal(newSigningSecret(), id),
    previous: latest?.secret ?? null,
    previousUntil: latest?.until ?? null,
    retired: older,
  };
}

/** The most rotated secrets in their grace at once (each signs every delivery meanwhile). */
const MAX_RETIRED = 10;

/** The secrets before the current one that still sign at `now`, newest first. */
export function inGrace(signing: WebhookSigning, now: number): Array<{ secret: string; until: number }> {
  const all = [
    ...(signing.previous !== null && signing.previousUntil !== null ? [{ secret: signing.previous, until: signing.previousUntil }] : []),
    ...(signing.retired ?? []),
  ];
  return all.filter((r) => r.until > now);
}

/**
 * The auth to store for webhook `id`: `given`'s secrets sealed; a masked or left-out secret keeps
 * the stored one of the same type, or is refused.
 */
export function sealAuth(sealer: Sealer, id: string, given: WebhookAuth, stored: WebhookAuth | null | undefined): WebhookAuth {
  if (given.type === 'oauth2_client_credentials') {
    const kept = stored?.type === given.type ? stored.clientSecret : null;
    return { ...given, clientSecret: keepOrSeal(sealer, id, given.clientSecret, kept, 'auth.clientSecret') };
  }
  const kept = stored?.type === given.type ? stored.privateKey : null;
  // A new certificate with the stored key: checked as a pair here, not at the first attempt
  // after a restart (ERR_OSSL_X509_KEY_VALUES_MISMATCH).
  if (given.privateKey === MASK && kept !== null) {
    let matches = false;
    try {
      matches = new X509Certificate(given.certificate).checkPrivateKey(createPrivateKey(sealer.open(kept, id)));
    } catch {
      matches = false;
    }
    if (!matches)
      throw new ValidationError('auth.certificate is not the certificate of the stored private key: give the key with it', {
        field: 'auth.certificate',
      });
  }
  return { ...given, privateKey: keepOrSeal(sealer, id, given.privateKey, kept, 'auth.privateKey') };
}

function keepOrSeal(sealer: Sealer, id: string, value: string, kept: string | null, field: string): string {
  if (value !== MASK) return sealer.seal(value, id);
  if (kept !== null) return kept;
  throw new WebhooksError('ERR_VALIDATION', `${field} is required`, { field });
}

/** The record as the management functions return it: every secret masked, never sealed text. */
export function masked(webhook: WebhookRecord): WebhookRecord {
  const out: WebhookRecord = { ...webhook, format: webhook.format ?? 'jwt', signing: null, auth: null };
  const s = webhook.signing;
  if (s) {
    out.signing = {
      secret: MASK,
      previous: s.previous === null ? null : MASK,
      previousUntil: s.previousUntil,
      ...(s.retired ? { retired: s.retired.map((r) => ({ secret: MASK, until: r.until })) } : {}),
      publicKey: s.publicKey,
      privateKey: s.privateKey === null ? null : MASK,
    };
  }
  const a = webhook.auth;
  if (a) out.auth = a.type === 'mtls' ? { ...a, privateKey: MASK } : { ...a, clientSecret: MASK };
  return out;
}

/** The webhook's secrets sealed again under the first key, or null when all already are. */
export function resealed(sealer: Sealer, webhook: WebhookRecord): Pick<WebhookRecord, 'signing' | 'auth' | 'headers'> | null {
  let changed = false;
  const again = (sealed: string): string => {
    if (!sealer.isStale(sealed)) return sealed;
    changed = true;
    return sealer.reseal(sealed, webhook.id);
  };
  const s = webhook.signing ?? null;
  const signing = s && {
    ...s,
    secret: again(s.secret),
    previous: s.previous === null ? null : again(s.previous),
    privateKey: s.privateKey === null ? null : again(s.privateKey),
    ...(s.retired ? { retired: s.retired.map((r) => ({ secret: again(r.secret), until: r.until })) } : {}),
  };
  const a = webhook.auth ?? null;
  const auth = a && (a.type === 'mtls' ? { ...a, privateKey: again(a.privateKey) } : { ...a, clientSecret: again(a.clientSecret) });
  // A header's value is sealed by its name, never by how it reads: a credential header's value
  // is sealed one by one (one an older engine kept in clear is sealed now), any other is the
  // tenant's plain text, whatever it begins with.
  const headers = Object.fromEntries(
    Object.entries(webhook.headers ?? {}).map(([name, value]) => {
      if (!isCredentialHeader(name)) return [name, value];
      if (isSealed(value)) return [name, again(value)];
      changed = true;
      return [name, sealer.seal(value, webhook.id)];
    }),
  );
  return changed ? { signing, auth, headers } : null;
}

/** Every sealed text a webhook holds: its signing secrets, its auth's secret, its credential header values. */
export function sealedTexts(webhook: WebhookRecord): string[] {
  const out: string[] = [];
  const s = webhook.signing;
  if (s)
    out.push(
      s.secret,
      ...(s.previous ? [s.previous] : []),
      ...(s.privateKey ? [s.privateKey] : []),
      ...(s.retired ?? []).map((r) => r.secret),
    );
  const a = webhook.auth;
  if (a) out.push(a.type === 'mtls' ? a.privateKey : a.clientSecret);
  for (const [name, value] of Object.entries(webhook.headers ?? {})) if (isCredentialHeader(name) && isSealed(value)) out.push(value);
  return out;
}
