import { SettledHours } from './activity.js';
import type { Catalog } from './catalog/catalog.js';
import type { Clock } from './clock.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { assertEndpointAllowed } from './delivery/guard/check.js';
import type { Guard } from './delivery/guard/guard.js';
import { messageHeaders, messagePayload } from './delivery/message.js';
import type { LooseEmitInput } from './emit.js';
import { maskHeaders, mergeHeaders, needsSeal } from './endpoint-options.js';
import { NotFoundError, ValidationError, WebhooksError } from './errors.js';
import { searchEvents } from './event-search.js';
import { newId } from './ids.js';
import { type DeliveryStatus, type WebhookRecord, withCircuit } from './model.js';
import { type CleanSigningInput, signingInput } from './secrets/auth-input.js';
import { requireSealer, type Sealer } from './secrets/seal.js';
import {
  DEFAULT_GRACE_MS,
  MAX_GRACE_MS,
  masked,
  newSigning,
  resealed,
  rotated,
  sealAuth,
  withAsymmetric,
} from './secrets/webhook-secrets.js';
import { durationQuantile, RANGES, type Range, seriesOf, successRate, windowOf } from './stats.js';
import type { DeliveryCursor, WebhookPatch } from './store.js';
import type { StoreAccess } from './store-access.js';
import type { EmittedEvent, Management } from './types.js';
import * as v from './validate.js';

export interface ManagementDeps {
  access: StoreAccess;
  clock: Clock;
  catalog: Catalog;
  guard: Guard;
  /** `iss` per environment (the `issuer` option). */
  issuer(environment: string): string;
  maxWebhooks(environment: string): number | null;
  /** Tells the scheduler that work may be due now (held deliveries resumed). */
  wake(): void;
  /** Stores and sends an event to one webhook only (a test event); see emit.ts. */
  emitTo(webhookId: string, input: LooseEmitInput): Promise<EmittedEvent>;
  /** Seals the webhooks' secrets (credential header values, signing formats, endpoint auth); null without `secretsKey`. */
  sealer: Sealer | null;
  /** How long a webhook fails before it is disabled (`disableAfterMs`). */
  disableAfterMs: number;
}

/** Rows a recover changes per transaction: bounded, so an emit never waits long behind it. */
const RECOVER_BATCH = 500;
const STATUSES: readonly DeliveryStatus[] = ['pending', 'held', 'delivered', 'failed'];

/**
 * The in-process management functions (`hooks.webhooks`, `.events`, `.deliveries`,
 * `.eventTypes`): validate, check the endpoint against the guard, one store call. The HTTP
 * routes (`http/operations.ts`) are a thin layer over these.
 */
export function createManagement(deps: ManagementDeps): Management {
  const { access, clock, catalog, guard } = deps;
  const env = (options: { environment?: string } | undefined) => v.environmentOf(options?.environment);
  // The list's stats: settled hours kept in memory (src/activity.ts).
  const settledHours = new SettledHours();
  // Every record handed out: its circuit, and credential header values masked (write-only).
  const shown = (w: WebhookRecord) => view({ ...w, headers: maskHeaders(w.headers) });
  /** Headers to store for webhook `id`: credential values sealed (refused without secretsKey), masked ones kept. */
  const sealHeaders = (id: string, given: Record<string, string>, stored: Record<string, string>) => {
    const sealer = needsSeal(given) ? requireSealer(deps.sealer, 'a credential header', 'headers') : null;
    return mergeHeaders(given, stored, (plaintext) => sealer!.seal(plaintext, id));
  };

  /** The rotation under way per webhook, for the next to wait on. */
  const rotations = new Map<string, Promise<void>>();

  const webhooks: Management['webhooks'] = {
    async create(input) {
      const environment = env(input);
      const clean = v.webhookInput(input, catalog);
      const signing = signingInput(input as unknown as Record<string, unknown>);
      await assertEndpointAllowed(clean.endpoint, guard);
      if (signing.auth?.type === 'oauth2_client_credentials') await assertEndpointAllowed(signing.auth.tokenUrl, guard);
      const now = clock.now();
      const id = newId('webhook', now);
      const record: WebhookRecord = {
        id,
        environment,
        ...clean,
        headers: sealHeaders(id, clean.headers, {}),
        status: 'enabled',
        disabledReason: null,
        disabledAt: null,
        failingSince: null,
        lastError: null,
        createdAt: now,
        updatedAt: now,
        format: signing.format ?? 'jwt',
        signing: null,
        auth: null,
      };
      Object.assign(record, secretsFor(record, signing));
      await access.run('creating a webhook', (s) => s.createWebhook(record, { maxWebhooks: deps.maxWebhooks(environment) }));
      return shown(record);
    },
    async get(id, options) {
      const environment = env(options);
      return shown(await access.find('webhook', id, 'reading a webhook', (s) => s.getWebhook(environment, id)));
    },
    async list(options) {
      const environment = env(options);
      return (await access.run('listing webhooks', (s) => s.listWebhooks(environment))).map(shown);
    },
    async update(id, patch, options) {
      const environment = env(options);
      const clean = v.webhookPatch(patch, catalog);
      const signing = signingInput(patch as unknown as Record<string, unknown>);
      if (clean.endpoint !== undefined) await assertEndpointAllowed(clean.endpoint, guard);
      if (signing.auth?.type === 'oauth2_client_credentials') await assertEndpointAllowed(signing.auth.tokenUrl, guard);
      const hasSecrets = signing.format !== undefined || signing.asymmetric !== undefined || signing.auth !== undefined;
      if (clean.headers !== undefined || hasSecrets) {
        // Masked values given back keep the stored ones: read first (and 404 before anything else).
        return shown(
          await changeSealed(environment, id, 'updating a webhook', (stored) => {
            const patch = { ...clean };
            if (clean.headers !== undefined) patch.headers = sealHeaders(id, clean.headers, stored.headers ?? {});
            if (hasSecrets) Object.assign(patch, secretsFor(stored, signing));
            return patch;
          }),
        );
      }
      return shown(await access.find('webhook', id, 'updating a webhook', (s) => s.updateWebhook(environment, id, clean, clock.now())));
    },
    async secret(id, options) {
      const environment = env(options);
      const stored = await access.find('webhook', id, 'reading a signing secret', (s) => s.getWebhook(environment, id));
      return revealed(stored);
    },
    async rotateSecret(id, options) {
      const environment = env(options);
      const graceMs = options?.graceMs ?? DEFAULT_GRACE_MS;
      if (typeof graceMs !== 'number' || !Number.isSafeInteger(graceMs) || graceMs < 0 || graceMs > MAX_GRACE_MS)
        throw new ValidationError(`graceMs must be whole milliseconds from 0 to ${MAX_GRACE_MS} (7 days)`, { field: 'graceMs' });
      // One at a time per webhook in this process (the store's compare-and-set orders them
      // between processes): every secret handed out then signs until its own grace ends.
      const before = rotations.get(id) ?? Promise.resolve();
      const run = before.then(() =>
        changeSealed(environment, id, 'rotating a signing secret', (stored) => {
          const current = signingOf(stored);
          const sealer = requireSealer(deps.sealer, 'rotating a signing secret');
          return { signing: rotated(sealer, id, current, clock.now(), graceMs) };
        }),
      );
      const settled = run.then(
        () => undefined,
        () => undefined,
      );
      rotations.set(id, settled);
      void settled.then(() => rotations.get(id) === settled && rotations.delete(id));
      return revealed(await run);
    },
    async resealSecrets() {
      const sealer = requireSealer(deps.sealer, 'resealing secrets');
      let resealedCount = 0;
      let after: string | null = null;
      for (;;) {
        const page: WebhookRecord[] = await access.run('listing sealed secrets', (s) => s.listWebhooksWithSecrets(after, RESEAL_BATCH));
        for (const listed of page) {
          if (resealed(sealer, listed) === null) continue;
          let changed = false;
          await changeSealed(listed.environment, listed.id, 'resealing secrets', (webhook) => {
            const again = resealed(sealer, webhook);
            changed = again !== null;
            return again;
          }).catch((error: unknown) => {
            if (!(error instanceof NotFoundError)) throw error; // deleted since it was listed
          });
          if (changed) resealedCount++;
        }
        if (page.length < RESEAL_BATCH) break;
        after = page[page.length - 1]!.id;
      }
      return { resealed: resealedCount };
    },
    async delete(id, options) {
      const environment = env(options);
      await access.find('webhook', id, 'deleting a webhook', (s) => s.deleteWebhook(environment, id));
    },
    async disable(id, options) {
      const environment = env(options);
      return shown(
        await access.find('webhook', id, 'disabling a webhook', (s) => s.disableWebhook(environment, id, 'manual', clock.now())),
      );
    },
    async enable(id, options) {
      const environment = env(options);
      const resume = options?.resumeHeld ?? true;
      if (typeof resume !== 'boolean') throw new ValidationError('resumeHeld must be a boolean', { field: 'resumeHeld' });
      const done = await access.find('webhook', id, 'enabling a webhook', (s) => s.enableWebhook(environment, id, clock.now(), resume));
      deps.wake();
      return shown(done);
    },
    async recover(id, options) {
      const environment = env(options);
      const since = timeOf(options?.since, 'since');
      const until = options?.until === undefined ? clock.now() : timeOf(options.until, 'until');
      if (since >= until) throw new ValidationError('since must be before until', { field: 'since' });
      let recovered = 0;
      let after: DeliveryCursor | null = null;
      do {
        const now = clock.now();
        const batch = await access.find('webhook', id, 'recovering deliveries', (s) =>
          s.recoverFailed(environment, id, { since, until, now, limit: RECOVER_BATCH, after }),
        );
        recovered += batch.recovered;
        after = batch.last;
        if (batch.recovered > 0) deps.wake();
      } while (after);
      return { recovered };
    },
    async sendWaiting(id, options) {
      const environment = env(options);
      const now = clock.now();
      let sent = 0;
      for (;;) {
        const batch = await access.find('webhook', id, 'sending waiting deliveries', (s) =>
          s.sendWaiting(environment, id, { now, limit: RECOVER_BATCH }),
        );
        sent += batch.sent;
        if (batch.sent > 0) deps.wake();
        if (!batch.more) return { sent };
      }
    },
    async waiting(id, options) {
      const environment = env(options);
      const now = clock.now();
      const [webhook, counts] = await Promise.all([
        webhooks.get(id, { environment }),
        access.find('webhook', id, 'counting waiting deliveries', (s) => s.countWaiting(environment, id, now)),
      ]);
      // It is disabled at a failure past the threshold: with nothing pending there is none to come.
      const failing = webhook.status === 'enabled' && webhook.failingSince !== null && counts.pending > 0;
      return { ...counts, disablesAt: failing ? Math.max(now, webhook.failingSince! + deps.disableAfterMs) : null };
    },
    async test(id, options) {
      const environment = env(options);
      const webhook = await webhooks.get(id, { environment });
      const type = options?.eventType ?? webhook.eventTypes[0]!;
      const entry = typeof type === 'string' ? catalog.entry(type) : undefined;
      if (!entry)
        throw new ValidationError(`${JSON.stringify(String(type).slice(0, 100))} is not a known event type`, {
          field: 'eventType',
          code: 'ERR_UNKNOWN_EVENT_TYPE',
        });
      const sent = await deps.emitTo(id, { type: entry.code, source: 'admin', data: structuredClone(entry.example), environment });
      return { eventId: sent.id, deliveryId: sent.deliveryIds[0]! };
    },
    async stats(options) {
      const environment = env(options);
      const now = clock.now();
      const window = windowOf('24h', now);
      // The settled hours come from memory, read once per process (src/activity.ts).
      const [ids, byWebhook] = await access.run('reading webhook stats', (s) =>
        Promise.all([
          s.listWebhookIds(environment),
          settledHours.read(environment, window, now, (since, until, settled) => s.readCounts(environment, { since, until, settled })),
        ]),
      );
      return ids.map((webhookId) => {
        const a = byWebhook.get(webhookId);
        const succeeded = a?.succeeded ?? 0;
        const failed = a?.failed ?? 0;
        return {
          webhookId,
          attempts: succeeded + failed,
          succeeded,
          failed,
          successRate: successRate(succeeded, failed),
          series: a?.points ?? seriesOf([], window).points,
        };
      });
    },
    async overview(id, options) {
      const environment = env(options);
      const range = options?.range ?? '24h';
      if (typeof range !== 'string' || !Object.hasOwn(RANGES, range))
        throw new ValidationError(`range must be one of ${Object.keys(RANGES).join(', ')}`, { field: 'range' });
      const window = windowOf(range as Range, clock.now());
      const rows = await access.find('webhook', id, 'reading a webhook overview', async (s) =>
        (await s.getWebhook(environment, id))
          ? s.readHours(environment, { webhookId: id, since: window.since, until: window.until, stepMs: window.stepMs })
          : null,
      );
      const series = seriesOf(rows, window);
      return {
        webhookId: id,
        range: range as Range,
        since: series.since,
        until: series.until,
        stepMs: series.stepMs,
        points: series.points,
        attempts: series.succeeded + series.failed,
        succeeded: series.succeeded,
        failed: series.failed,
        successRate: successRate(series.succeeded, series.failed),
        medianMs: durationQuantile(series.durations, 0.5),
        p95Ms: durationQuantile(series.durations, 0.95),
      };
    },
  };

  const deliveries: Management['deliveries'] = {
    async list(filter = {}) {
      const environment = env(filter);
      const limit = filter.limit ?? 25;
      if (!Number.isInteger(limit) || limit < 1 || limit > 100)
        throw new ValidationError('limit must be an integer from 1 to 100', { field: 'limit' });
      if (filter.status !== undefined && !STATUSES.includes(filter.status)) {
        throw new ValidationError(`status must be one of ${STATUSES.join(', ')}`, { field: 'status' });
      }
      if (filter.eventType !== undefined && !catalog.has(filter.eventType)) {
        throw new ValidationError(`${JSON.stringify(String(filter.eventType).slice(0, 100))} is not a known event type`, {
          field: 'eventType',
          code: 'ERR_UNKNOWN_EVENT_TYPE',
        });
      }
      const after = filter.cursor === undefined || filter.cursor === null ? null : decodeCursor(filter.cursor);
      const since = filter.since === undefined ? undefined : timeOf(filter.since, 'since');
      const until = filter.until === undefined ? undefined : timeOf(filter.until, 'until');
      if (since !== undefined && until !== undefined && since >= until)
        throw new ValidationError('since must be before until', { field: 'since' });
      // An id that cannot exist matches nothing (as it would not be found).
      for (const [key, prefix] of [
        ['webhookId', 'webhook'],
        ['eventId', 'event'],
        ['deliveryId', 'msg'],
      ] as const) {
        const value = filter[key];
        if (value !== undefined && !v.isPlausibleId(value, prefix)) return { deliveries: [], events: {}, nextCursor: null };
      }
      const page = await access.run('listing deliveries', async (s) => {
        // Another environment's webhook: nothing, found by its key, not by walking its log.
        if (filter.webhookId !== undefined && !(await s.getWebhook(environment, filter.webhookId)))
          return { deliveries: [], next: null, events: [] };
        const found = await s.listDeliveries(environment, {
          webhookId: filter.webhookId,
          eventId: filter.eventId,
          status: filter.status,
          eventType: filter.eventType,
          deliveryId: filter.deliveryId,
          since,
          until,
          limit,
          after,
        });
        // What each row's event is about, and whether it is a test event: one read by key for the page.
        const events = await s.summarizeEvents(environment, [...new Set(found.deliveries.map((d) => d.eventId))]);
        return { ...found, events };
      });
      return {
        deliveries: page.deliveries,
        events: Object.fromEntries(page.events.map((e) => [e.id, e])),
        nextCursor: page.next ? encodeCursor(page.next) : null,
      };
    },
    async get(id, options) {
      const environment = env(options);
      return access.find('delivery', id, 'reading a delivery', (s) => s.getDelivery(environment, id));
    },
    async attempts(id, options) {
      await deliveries.get(id, options);
      return access.run('listing attempts', (s) => s.listAttempts(env(options), id));
    },
    async resend(id, options) {
      const environment = env(options);
      const delivery = await access.find('delivery', id, 'resending a delivery', (s) => s.resendDelivery(environment, id, clock.now()));
      deps.wake();
      return delivery;
    },
    async message(id, options) {
      const environment = env(options);
      const delivery = await deliveries.get(id, { environment });
      const [event, attempts, webhook] = await access.run('reading a message', (s) =>
        Promise.all([
          s.getEvent(environment, delivery.eventId),
          s.listAttempts(environment, id),
          s.getWebhook(environment, delivery.webhookId),
        ]),
      );
      // Retention deletes events only once none of their deliveries is left.
      if (!event) throw new NotFoundError('event', delivery.eventId);
      const at = attempts.at(-1)?.startedAt ?? clock.now();
      // As the webhook is now: its format, its own headers (credentials masked), its auth.
      const to = webhook ?? undefined;
      return {
        delivery,
        format: to?.format ?? 'jwt',
        payload: messagePayload(event, deps.issuer(environment), at, to),
        headers: messageHeaders(delivery.id, to, at),
        attempts,
      };
    },
  };

  /** The secrets a webhook gets for `signing` (sealed): its signing keys, its auth. Refused without a sealer. */
  function secretsFor(stored: WebhookRecord, signing: CleanSigningInput): Partial<WebhookRecord> {
    const out: Partial<WebhookRecord> = {};
    const format = signing.format ?? stored.format ?? 'jwt';
    if (signing.format !== undefined) out.format = signing.format;
    if (signing.asymmetric && format !== 'standard-webhooks')
      throw new ValidationError('asymmetric signing (v1a) needs format standard-webhooks', { field: 'asymmetric' });
    if (format === 'standard-webhooks') {
      const sealer = requireSealer(deps.sealer, 'a webhook in the standard-webhooks format', 'format');
      const had = stored.signing ?? null;
      if (had === null) out.signing = newSigning(sealer, stored.id, signing.asymmetric ?? false);
      else if (signing.asymmetric !== undefined) out.signing = withAsymmetric(sealer, stored.id, had, signing.asymmetric);
    }
    if (signing.auth === null) out.auth = null;
    else if (signing.auth !== undefined) {
      const sealer = requireSealer(deps.sealer, `endpoint auth (${signing.auth.type})`, 'auth');
      out.auth = sealAuth(sealer, stored.id, signing.auth, stored.auth);
    }
    return out;
  }

  /** The signing secret in clear, for the explicit reveal only. */
  /**
   * Read, change, write a webhook's sealed columns (signing, auth, credential headers), the write
   * applied only while they are still as read, else read again: two rotations, a rotation and a
   * re-seal, or an update keeping masked values never lose one another's secret. `change` answers
   * the patch, or null for nothing to write. NotFoundError when the webhook is not there.
   */
  async function changeSealed(
    environment: string,
    id: string,
    what: string,
    change: (stored: WebhookRecord) => WebhookPatch | null,
  ): Promise<WebhookRecord> {
    for (let round = 1; ; round++) {
      const stored = await access.find('webhook', id, what, (s) => s.getWebhook(environment, id));
      const patch = change(stored);
      if (patch === null) return stored;
      const expect = { signing: stored.signing ?? null, auth: stored.auth ?? null, headers: stored.headers ?? {} };
      const done = await access.run(what, (s) => s.updateWebhook(environment, id, { ...patch, expect }, clock.now()));
      if (done) return done;
      // Changed since it was read (or deleted: the next read says so). Writers are people and a
      // re-seal, so a few rounds settle it; past them something is wrong, and it is said.
      if (round === CHANGE_ROUNDS)
        throw new WebhooksError('ERR_STORE', `${what}: webhook ${JSON.stringify(id)} kept changing while it was written`);
    }
  }

  function revealed(stored: WebhookRecord) {
    const s = signingOf(stored);
    const sealer = requireSealer(deps.sealer, 'reading a signing secret');
    return { secret: sealer.open(s.secret, stored.id), publicKey: s.publicKey, previousUntil: s.previousUntil };
  }

  return {
    webhooks,
    events: {
      async get(id, options) {
        const environment = env(options);
        return access.find('event', id, 'reading an event', (s) => s.getEvent(environment, id));
      },
      search: (options) => searchEvents(access, env(options), options),
    },
    deliveries,
    eventTypes: { list: () => catalog.list() },
    verification: {
      get(options) {
        const issuer = deps.issuer(env(options));
        // Where the engine's handler serves the key set under the issuer (receiver/verifier.ts reads the same).
        return { issuer, jwksUrl: `${issuer.replace(/\/+$/, '')}/.well-known/jwks` };
      },
    },
  };
}

/** Webhooks re-sealed per page of `resealSecrets`. */
const RESEAL_BATCH = 200;
const CHANGE_ROUNDS = 10;

/** The record as the management functions return it: circuit derived, signing and auth secrets masked. */
function view(webhook: WebhookRecord) {
  return withCircuit(masked(webhook));
}

function signingOf(webhook: WebhookRecord) {
  if (webhook.format !== 'standard-webhooks' || !webhook.signing)
    throw new ValidationError(`webhook ${JSON.stringify(webhook.id)} signs JWTs (format jwt): it has no signing secret`, {
      field: 'format',
    });
  return webhook.signing;
}

/**
 * A time argument: whole epoch milliseconds within the Date range, or a valid Date. The stores
 * compare it with a bigint column, so a fraction (`0.5`) is refused here rather than failing
 * (PostgreSQL) or comparing differently (SQLite) there.
 */
function timeOf(value: unknown, field: string): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || Math.abs(ms) > 8.64e15) {
    throw new ValidationError(`${field} must be a time (whole milliseconds since the epoch, or a Date)`, { field });
  }
  return ms;
}
