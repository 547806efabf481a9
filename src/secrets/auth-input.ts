/**
 * Validation of a webhook's signing format and endpoint auth, for `webhooks.create`
 * and `webhooks.update`: what the host or the API gives, checked and in clear. Sealing happens
 * after, in `webhook-secrets.ts`; nothing here is stored or logged.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { ValidationError } from '../errors.js';
import type { WebhookAuth, WebhookFormat } from '../model.js';
import { endpoint } from '../validate.js';

/** What a masked secret reads on the way out; given back unchanged on update, it keeps the stored one. */
export const MASK = '********';

const FORMATS: readonly WebhookFormat[] = ['jwt', 'standard-webhooks'];
/** A PEM text (certificate chain or key) at most this long. */
const PEM_LENGTH = 65_536;

/** The signing and auth fields of a webhook input, checked (undefined: not given). */
export interface CleanSigningInput {
  format?: WebhookFormat;
  asymmetric?: boolean;
  /** Null removes the auth; a masked secret (`********`) or a left-out one keeps the stored secret. */
  auth?: WebhookAuth | null;
}

export function signingInput(input: Record<string, unknown>): CleanSigningInput {
  const out: CleanSigningInput = {};
  if (input.format !== undefined) {
    if (!FORMATS.includes(input.format as WebhookFormat))
      throw new ValidationError(`format must be one of ${FORMATS.join(', ')}`, { field: 'format' });
    out.format = input.format as WebhookFormat;
  }
  if (input.asymmetric !== undefined) {
    if (typeof input.asymmetric !== 'boolean') throw new ValidationError('asymmetric must be a boolean', { field: 'asymmetric' });
    out.asymmetric = input.asymmetric;
  }
  if (input.auth !== undefined) out.auth = input.auth === null ? null : auth(input.auth);
  return out;
}

function auth(value: unknown): WebhookAuth {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ValidationError('auth must be an object with a type', { field: 'auth' });
  const a = value as Record<string, unknown>;
  if (a.type === 'oauth2_client_credentials') {
    let tokenUrl: string;
    try {
      tokenUrl = endpoint(a.tokenUrl);
    } catch (error) {
      throw new ValidationError(`auth.tokenUrl: ${(error as Error).message.replace(/^endpoint /, '')}`, { field: 'auth.tokenUrl' });
    }
    return {
      type: 'oauth2_client_credentials',
      tokenUrl,
      clientId: text(a.clientId, 'auth.clientId', 1000, true) as string,
      clientSecret: text(a.clientSecret, 'auth.clientSecret', 4000, false) ?? MASK,
      scope: text(a.scope, 'auth.scope', 1000, false) ?? null,
      audience: text(a.audience, 'auth.audience', 1000, false) ?? null,
    };
  }
  if (a.type === 'mtls') {
    const certificate = text(a.certificate, 'auth.certificate', PEM_LENGTH, true) as string;
    const privateKey = text(a.privateKey, 'auth.privateKey', PEM_LENGTH, false) ?? MASK;
    const ca = text(a.ca, 'auth.ca', PEM_LENGTH, false) ?? null;
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(certificate);
    } catch {
      throw new ValidationError('auth.certificate must be a PEM certificate (-----BEGIN CERTIFICATE-----)', { field: 'auth.certificate' });
    }
    if (privateKey !== MASK) {
      let matches = false;
      try {
        matches = cert.checkPrivateKey(createPrivateKey(privateKey));
      } catch {
        throw new ValidationError('auth.privateKey must be a PEM private key', { field: 'auth.privateKey' });
      }
      if (!matches) throw new ValidationError('auth.privateKey is not the key of auth.certificate', { field: 'auth.privateKey' });
    }
    if (ca !== null) {
      try {
        new X509Certificate(ca);
      } catch {
        throw new ValidationError('auth.ca must be PEM certificates', { field: 'auth.ca' });
      }
    }
    return { type: 'mtls', certificate, privateKey, ca };
  }
  throw new ValidationError('auth.type must be oauth2_client_credentials or mtls', { field: 'auth.type' });
}

function text(value: unknown, field: string, max: number, required: boolean): string | undefined {
  if (value === undefined || value === null || value === '') {
    if (required) throw new ValidationError(`${field} is required`, { field });
    return undefined;
  }
  if (typeof value !== 'string') throw new ValidationError(`${field} must be a string`, { field });
  if (value.length > max) throw new ValidationError(`${field} must be at most ${max} characters`, { field });
  if (value.includes('\u0000')) throw new ValidationError(`${field} must not contain NUL`, { field });
  return value;
}
