/**
 * Signing formats and endpoint auth on the wire: the snake_case fields of a webhook's
 * `format`, `asymmetric` and `auth` in and out (secrets masked on the way out). The routes of
 * the signing secret are in `signing-routes.ts`.
 */
import type { WebhookAuth, WebhookRecord } from '../model.js';
import { HttpError } from './errors.js';

/** The wire fields of a create or update that this feature adds. */
export const SIGNING_FIELDS = ['format', 'asymmetric', 'auth'];

/** `format`, `asymmetric` and `auth` of a wire body, as engine input (values checked by the engine). */
export function signingFromWire(body: Record<string, unknown>): { format?: unknown; asymmetric?: unknown; auth?: unknown } {
  const out: { format?: unknown; asymmetric?: unknown; auth?: unknown } = {};
  if (body.format !== undefined && body.format !== null) out.format = body.format;
  if (body.asymmetric !== undefined && body.asymmetric !== null) out.asymmetric = body.asymmetric;
  if (body.auth !== undefined) out.auth = body.auth === null ? null : authFromWire(body.auth);
  return out;
}

function authFromWire(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value; // the engine says what is wrong
  const a = value as Record<string, unknown>;
  if (a.type === 'oauth2_client_credentials') {
    only(a, ['type', 'token_url', 'client_id', 'client_secret', 'scope', 'audience']);
    return {
      type: a.type,
      tokenUrl: a.token_url,
      clientId: a.client_id,
      clientSecret: a.client_secret,
      scope: a.scope,
      audience: a.audience,
    };
  }
  if (a.type === 'mtls') {
    only(a, ['type', 'certificate', 'private_key', 'ca']);
    return { type: a.type, certificate: a.certificate, privateKey: a.private_key, ca: a.ca };
  }
  return { type: a.type };
}

/** The webhook's format, masked auth and public signing facts, as the wire shows them. */
export function wireSigning(w: WebhookRecord) {
  return {
    format: w.format ?? 'jwt',
    signing: w.signing
      ? {
          public_key: w.signing.publicKey,
          previous_secret_until: w.signing.previousUntil === null ? null : new Date(w.signing.previousUntil).toISOString(),
        }
      : null,
    auth: w.auth ? wireAuth(w.auth) : null,
  };
}

function wireAuth(a: WebhookAuth) {
  return a.type === 'mtls'
    ? { type: a.type, certificate: a.certificate, private_key: a.privateKey, ca: a.ca ?? null }
    : {
        type: a.type,
        token_url: a.tokenUrl,
        client_id: a.clientId,
        client_secret: a.clientSecret,
        scope: a.scope ?? null,
        audience: a.audience ?? null,
      };
}

/** An unknown field of `auth` is refused, as everywhere (input.ts's rule; it imports this file). */
function only(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key))
      throw new HttpError('UNKNOWN_FIELD', `${JSON.stringify(key.slice(0, 64))} is not a field of auth (allowed: ${allowed.join(', ')})`, {
        status: 400,
      });
  }
}
