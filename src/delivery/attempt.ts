import type { Clock } from '../clock.js';
import { isCredentialHeader } from '../endpoint-options.js';
import { newId } from '../ids.js';
import type { AttemptRecord, ClaimedDelivery } from '../model.js';
import { redact } from '../secrets/redact.js';
import { isSealed, type Sealer } from '../secrets/seal.js';
import { VERSION } from '../version.js';
import type { EndpointAccess } from './endpoint-access.js';
import type { Guard } from './guard/guard.js';
import { type SlowDown, slowDownOf } from './slow-down.js';
import { type Transport, TransportError, type TransportRequest } from './transport.js';

/** Names us to receivers; the version comes from package.json at build time (scripts/version.mjs). */
export const USER_AGENT = `identity-webhooks/${VERSION}`;

/**
 * One HTTP try of one delivery: POST the token with `webhook-id`, classify the outcome. Only an
 * HTTP 200 is a success; any other status (redirects included: they are never followed), a
 * timeout, a network error or an address the guard refuses (`blocked`) is a failure. Never
 * throws: every outcome becomes an attempt record.
 *
 * The record and the request are object literals, never `{ ...base, more }`: on Node 20 each
 * property added after a spread is slow to add, and this record is built once per delivery.
 */
/**
 * One attempt's record, and what its answer asked of the webhook's next attempts (a 429, 503 or
 * 410: returned with the attempt for the dispatcher, not a field of the public record; the
 * record's error message says it in words).
 */
export interface Attempted {
  record: AttemptRecord;
  slowDown: SlowDown | null;
}

export async function runAttempt(
  claimed: ClaimedDelivery,
  token: Promise<string>,
  deps: {
    transport: Transport;
    clock: Clock;
    timeoutMs: number;
    guard?: Guard;
    /** Bounds a webhook's own deadline: the attempt must end within its lease. */
    leaseMs?: number;
    /** Opens credential header values (sealed at rest). */
    sealer?: Sealer | null;
    disableOnGone?: boolean;
  },
  /** W3C trace context for the receiver (`telemetry.propagateTraceContext`); absent: no header. */
  traceparent?: string,
  /** The webhook's format and auth (`endpoint-access.ts`); absent: a JWT, no auth. */
  access?: EndpointAccess,
): Promise<Attempted> {
  const startedAt = deps.clock.now();
  const t0 = performance.now();
  const id = newId('attempt', startedAt);
  const record = (
    statusCode: number | null,
    errorKind: AttemptRecord['errorKind'],
    errorMessage: string | null,
    responseExcerpt: string | null,
  ): AttemptRecord => ({
    id,
    deliveryId: claimed.delivery.id,
    webhookId: claimed.webhook.id,
    environment: claimed.delivery.environment,
    startedAt,
    durationMs: performance.now() - t0,
    statusCode,
    errorKind,
    errorMessage,
    responseExcerpt,
    success: errorKind === null,
  });
  // One deadline for the whole attempt (signature, OAuth2 token, request, a 401's second round),
  // inside its lease: past the lease another worker may take the delivery, and it would be in
  // flight twice.
  const deadline = claimed.lease.until - LEASE_MARGIN_MS;
  const left = () => deadline - deps.clock.now();
  try {
    const body = await token;
    const headers: Record<string, string> = {
      'content-type': access === undefined ? 'application/jwt' : access.contentType,
      'webhook-id': claimed.delivery.id,
      'user-agent': USER_AGENT,
    };
    if (traceparent !== undefined) headers.traceparent = traceparent;
    const custom = claimed.webhook.headers;
    const secrets = custom === undefined ? NONE : addCustomHeaders(headers, custom, claimed.webhook.id, deps.sealer ?? null);
    // Signing formats and endpoint auth: the signature, the bearer token, the client certificate.
    if (access !== undefined) setAccessHeaders(headers, await inTime(access.headers(claimed.delivery.id, body, false), left()));
    const own = timeoutOf(claimed, deps);
    const request: TransportRequest = { url: claimed.webhook.endpoint, headers, body, timeoutMs: within(own, left()) };
    if (deps.guard) request.guard = deps.guard;
    if (access?.clientCertificate !== undefined) request.clientCertificate = access.clientCertificate;
    let res = await deps.transport.send(request);
    if (res.status === 401 && access?.refreshes) {
      // Refused with the token we had: once more with a new one, in what is left of the lease.
      setAccessHeaders(headers, await inTime(access.headers(claimed.delivery.id, body, true), left()));
      request.timeoutMs = within(own, left());
      res = await deps.transport.send(request);
    }
    // An endpoint that echoes what it got must not put a credential value (a custom credential
    // header's, or our bearer token) into the attempt log.
    const bearer = access?.refreshes && headers.authorization ? [headers.authorization.slice(7)] : NONE;
    const excerpt = secrets.length > 0 || bearer.length > 0 ? redact(res.excerpt, [...secrets, ...bearer]) : res.excerpt;
    if (res.status === 200) return { record: record(200, null, null, excerpt || null), slowDown: null };
    const kind = res.status >= 300 && res.status < 400 ? 'redirect' : 'status';
    const { slowDown, note } = slowDownOf(claimed, res.status, res.wait, deps.clock.now(), deps.disableOnGone === true);
    return { record: record(res.status, kind, unexpectedStatus(res.status, excerpt, note), excerpt || null), slowDown: slowDown ?? null };
  } catch (error) {
    const kind = error instanceof TransportError ? error.code : 'internal';
    return { record: record(null, kind, (error instanceof Error ? error.message : String(error)).slice(0, 500), null), slowDown: null };
  }
}

/**
 * Says what was wrong with the answer: only 200 counts (a 204 or 201 surprises people), what it
 * asked of the next attempts (`note`), and how the body began.
 */
function unexpectedStatus(status: number, excerpt: string, note = ''): string {
  const start = excerpt.replace(/\s+/g, ' ').trim().slice(0, 200);
  return `expected HTTP 200, got ${status}${note}${start ? `: ${start}` : ''}`;
}

/** What an attempt leaves of its lease: it ends this long before the lease does, at the latest. */
export const LEASE_MARGIN_MS = 1000;

/** A request's timeout in what is left of the attempt's time; none left: the attempt is a timeout now. */
function within(timeoutMs: number, leftMs: number): number {
  // Nothing was sent: ours, not the endpoint's (not charged; tried again on the back-off).
  if (leftMs <= 0) throw new TransportError('internal', 'the attempt ran out of its lease before the request was sent');
  return Math.max(1, Math.min(timeoutMs, Math.floor(leftMs)));
}

/** Waits for `value` (the OAuth2 token, shared with other attempts) at most `leftMs`: then the attempt is a timeout. */
async function inTime<T>(value: T | Promise<T>, leftMs: number): Promise<T> {
  if (!(value instanceof Promise)) return value;
  if (leftMs <= 0) throw new TransportError('timeout', 'the attempt ran out of its lease waiting for the OAuth2 token');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new TransportError('timeout', `the attempt ran out of its lease waiting for the OAuth2 token (${Math.round(leftMs)} ms)`)),
      leftMs,
    );
  });
  try {
    return await Promise.race([value, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The webhook's own deadline (endpoint options), else the engine's; never past its lease less a second. */
function timeoutOf(claimed: ClaimedDelivery, deps: { timeoutMs: number; leaseMs?: number }): number {
  const own = claimed.webhook.timeoutMs;
  if (own === undefined || own === null) return deps.timeoutMs;
  return deps.leaseMs === undefined ? own : Math.max(1, Math.min(own, deps.leaseMs - 1000));
}

/**
 * The webhook's custom headers beside ours (validation keeps their names apart from ours), the
 * sealed values of credential headers opened (a key gone from secretsKey throws: an `internal`
 * failure, never the endpoint's).
 */
function addCustomHeaders(
  headers: Record<string, string>,
  custom: Record<string, string>,
  webhookId: string,
  sealer: Sealer | null,
): readonly string[] {
  let secrets: string[] | null = null; // most webhooks have none: no array then
  for (const name in custom) {
    const value = custom[name]!;
    if (!isCredentialHeader(name)) {
      headers[name] = value;
      continue;
    }
    // Sealed when written (mergeHeaders); a value kept in clear by an older engine, before its
    // name counted as a credential, is sent as it is (resealSecrets seals it).
    if (!isSealed(value)) {
      headers[name] = value;
      if (secrets === null) secrets = [];
      for (const part of [value, value.split(' ').at(-1)!]) if (part.length >= 4) secrets.push(part);
      continue;
    }
    if (!sealer) throw new Error(`a credential header of ${webhookId} is sealed and the engine has no secretsKey to open it`);
    const open = sealer.open(value, webhookId);
    headers[name] = open;
    // Its value, and its token alone (`Bearer <token>`), for redact().
    if (secrets === null) secrets = [];
    for (const part of [open, open.split(' ').at(-1)!]) if (part.length >= 4) secrets.push(part);
  }
  return secrets ?? NONE;
}

const NONE: readonly string[] = [];

/**
 * The signature or the bearer token, over a custom header of the same name in any case: one
 * `Authorization` line (receivers keep the first of two, which was the custom one).
 */
function setAccessHeaders(headers: Record<string, string>, access: Record<string, string>): void {
  for (const name of Object.keys(access)) {
    const lower = name.toLowerCase();
    for (const existing of Object.keys(headers)) if (existing !== name && existing.toLowerCase() === lower) delete headers[existing];
    headers[name] = access[name]!;
  }
}
