import pRetry from 'p-retry';
import type { CatalogEntry, EventTypeDefinition } from './catalog/catalog.js';
import type { Clock } from './clock.js';
import { runAttempt } from './delivery/attempt.js';
import { assertEndpointAllowed } from './delivery/endpoint-check.js';
import type { Resolver } from './delivery/network-policy.js';
import { httpTransport, type Transport } from './delivery/transport.js';
import { NotFoundError, ValidationError, WebhooksError, storeError } from './errors.js';
import { createHandler } from './http/handler.js';
import { newId } from './ids.js';
import type { AttemptRecord, DeliveryRecord, EventRecord, EventSource, WebhookRecord } from './model.js';
import { RetryPolicy, type RetryOptions } from './scheduler/retry.js';
import { Scheduler } from './scheduler/scheduler.js';
import type { SigningKey } from './signing/keys.js';
import type { KeyInfo, RotateOptions } from './signing/keyset.js';
import { buildClaims, signClaims } from './signing/token.js';
import type { DeliveryFilter, Store } from './store.js';
import * as v from './validate.js';
import { snapshotOptions } from './options.js';

export interface WebhooksOptions {
  store: Store;
  /** Private RS256 JWKs (2048+ bits, each with a kid). The first signs; all are published. */
  keys: SigningKey[];
  /** `iss` of every token: the environment's base address (where `/.well-known/jwks` is served). */
  issuer: string | ((environment: string) => string);
  transport?: Transport;
  clock?: Clock;
  limits?: {
    /** Most webhooks per environment (a number, or per environment, e.g. from the plan). */
    maxWebhooks?: number | ((environment: string) => number | null | undefined);
    /** Largest JSON-encoded event `data`, in bytes. Default 256 KiB. */
    maxPayloadBytes?: number;
  };
  notifier?: Notifier;
  /** Allow endpoints on loopback and private networks. Development and tests only. */
  allowPrivateNetworks?: boolean;
  /**
   * Exceptions to the network guard (see SECURITY.md): exact host names, IP addresses or CIDR
   * blocks of receivers you run yourself on a private network.
   */
  allowHosts?: string[];
  /** Name resolution for the network guard. Default: the system resolver (dns.lookup). */
  resolver?: Resolver;
  /** The host's own event types, beside the built-ins. */
  eventTypes?: EventTypeDefinition[];
  retry?: RetryOptions;
  /** A webhook failing with no success for this long is disabled. Default 72 hours. */
  disableAfterMs?: number;
  delivery?: {
    /** Per-attempt deadline. Default 15 s. */
    timeoutMs?: number;
    /** Attempts in flight per process. Default 64. */
    concurrency?: number;
    /** Attempts in flight per webhook per process. Default 8. */
    perEndpointConcurrency?: number;
    /** Default 64. */
    batchSize?: number;
    /** Default timeoutMs + 30 s. */
    leaseMs?: number;
    /** Longest sleep between looks at the store. Default 1000 ms. */
    pollIntervalMs?: number;
  };
  logger?: Logger;
  /**
   * Authorizes a management API request: returns the caller's environment, or null to refuse
   * (403). Without it every management route answers 403 (fail closed). The JWKS is public.
   */
  authorize?: (request: Request) => AuthorizeResult | Promise<AuthorizeResult>;
  /** Names this process in leases. Default host:pid:random. */
  workerId?: string;
}

export type AuthorizeResult = { environment: string } | null | undefined;

export interface Notifier {
  /** Called once per automatic disable; email the account holder from here. */
  webhookDisabled(info: WebhookDisabledInfo): void | Promise<void>;
}

export interface WebhookDisabledInfo {
  /**
   * Stable id of the notice, for deduplicating the host's own side effects: the same on every
   * retry of the same notice. (Optional until the notice outbox sets it on every notice.)
   */
  noticeId?: string;
  webhook: WebhookRecord;
  environment: string;
  reason: 'failing';
  /** When the failures began. */
  failingSince: number;
  disabledAt: number;
  lastError: string | null;
}

export interface Logger {
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
}

export interface EmitInput {
  type: string;
  source: EventSource;
  data: Record<string, unknown>;
  /** When it happened (ms or Date). Default: now. */
  eventTimestamp?: number | Date;
  environment?: string;
}

export interface EmittedEvent extends EventRecord {
  /** The `webhook-id` of each delivery written. */
  deliveryIds: string[];
}

type Env = { environment?: string };

/** The engine a host embeds. See {@link createWebhooks}. */
export interface Webhooks extends AsyncDisposable {
  start(): Promise<void>;
  emit(event: EmitInput, options?: { transaction?: unknown }): Promise<EmittedEvent>;
  webhooks: {
    create(input: v.WebhookInput): Promise<WebhookRecord>;
    get(id: string, options?: Env): Promise<WebhookRecord>;
    list(options?: Env): Promise<WebhookRecord[]>;
    update(id: string, patch: Partial<Omit<v.WebhookInput, 'environment'>>, options?: Env): Promise<WebhookRecord>;
    delete(id: string, options?: Env): Promise<void>;
    disable(id: string, options?: Env): Promise<WebhookRecord>;
    /** Resumes held deliveries unless `resumeHeld: false` (then they fail as dropped). */
    enable(id: string, options?: Env & { resumeHeld?: boolean }): Promise<WebhookRecord>;
  };
  events: { get(id: string, options?: Env): Promise<EventRecord> };
  deliveries: {
    list(filter?: DeliveryFilter & Env): Promise<DeliveryRecord[]>;
    get(id: string, options?: Env): Promise<DeliveryRecord>;
    attempts(id: string, options?: Env): Promise<AttemptRecord[]>;
  };
  eventTypes: { list(): CatalogEntry[] };
  /**
   * `(Request) => Promise<Response>`: the management API under `/api/v1` (behind `authorize`), its
   * OpenAPI document at `/api/v1/openapi.json`, and the JWKS at `/.well-known/jwks(.json)`.
   */
  handler: (request: Request) => Promise<Response>;
  /** The public key set document. */
  jwks(): { keys: unknown[] };
  /** Signing keys: rotation and what is published (public facts only). See SECURITY.md. */
  keys: {
    /** Publishes `newKey` now, signs with it after the overlap, unpublishes the old key once its tokens are stale. */
    rotate(newKey: SigningKey, options?: RotateOptions): Promise<KeyInfo>;
    list(): KeyInfo[];
  };
  /** Looks for due work now (e.g. after committing a transaction that emitted). */
  wake(): void;
  /** Resolves when nothing is in flight and nothing is due (tests, graceful shutdown). */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Creates the webhook engine.
 *
 * @example
 * ```ts
 * const hooks = createWebhooks({
 *   store: sqliteStore({ filename: 'webhooks.db' }),
 *   keys: [await generateSigningKey()],
 *   issuer: 'https://auth.example.com',
 *   notifier: { webhookDisabled: (info) => mailer.send(info.environment, info.webhook) },
 * });
 * await hooks.start();
 * await hooks.webhooks.create({ name: 'CRM', endpoint: 'https://crm.example.com/hooks', eventTypes: ['user.created'] });
 * await hooks.emit({ type: 'user.created', source: 'admin', data: { user } });
 * ```
 */
export function createWebhooks(options: WebhooksOptions): Webhooks {
  const o = snapshotOptions(options);
  const { store, clock, catalog, keys } = o;
  const logger = o.logger;
  const onError = (message: string, error: unknown) => logger.error(message, { error: describeError(error) });
  const ownTransport = options.transport === undefined;
  const transport = options.transport ?? httpTransport();
  const retry = new RetryPolicy(options.retry);

  let ready: Promise<void> | null = null;
  let closed = false;
  const ensureReady = () => {
    if (closed) return Promise.reject(new WebhooksError('ERR_CLOSED', 'this webhooks engine is closed'));
    ready ??= store.migrate(clock.now()).catch((error) => {
      ready = null;
      throw storeError(error, 'migrating');
    });
    return ready;
  };
  const call = async <T>(doing: string, fn: () => Promise<T>): Promise<T> => {
    await ensureReady();
    try {
      return await fn();
    } catch (error) {
      throw storeError(error, doing);
    }
  };

  const scheduler = new Scheduler({
    store,
    clock,
    retry,
    options: { ...o.scheduler, disableAfterMs: o.disableAfterMs },
    sign: async (c, now) => signClaims(buildClaims(c.event, o.issuer(c.event.environment), now), await keys.signingKey(now)),
    attempt: (c, token) => runAttempt(c, token, { transport, clock, timeoutMs: o.scheduler.timeoutMs, policy: o.network }),
    onDisabled: (webhook) => {
      const info: WebhookDisabledInfo = {
        webhook,
        environment: webhook.environment,
        reason: 'failing',
        failingSince: webhook.failingSince ?? webhook.disabledAt ?? clock.now(),
        disabledAt: webhook.disabledAt ?? clock.now(),
        lastError: webhook.lastError,
      };
      if (!o.notifier) return;
      const notifier = o.notifier;
      void pRetry(async () => notifier.webhookDisabled(info), { retries: 3, minTimeout: 200 }).catch((error) =>
        onError(`notifier failed for disabled webhook ${webhook.id}`, error),
      );
    },
    onError,
  });

  /** A record by id, or ERR_NOT_FOUND (an id that cannot exist, or of another environment, included). */
  const byId = async <T>(
    what: 'webhook' | 'event' | 'delivery',
    id: string,
    doing: string,
    find: () => Promise<T | null | false>,
  ): Promise<T> => {
    const prefix = what === 'delivery' ? 'msg' : what;
    const found = v.isPlausibleId(id, prefix) ? await call(doing, find) : null;
    if (!found) throw new NotFoundError(what, String(id).slice(0, 128));
    return found;
  };

  const hooks: Webhooks = {
    async start() {
      await ensureReady();
      await keys.signingKey(); // a key that cannot sign fails start(), not every delivery
      scheduler.start();
    },

    async emit(input, emitOptions = {}) {
      if (typeof input !== 'object' || input === null) throw new ValidationError('emit: event must be an object');
      const environment = v.environmentOf(input.environment);
      if (typeof input.type !== 'string') throw new ValidationError('type is required and must be a string', 'type');
      if (!v.SOURCES.includes(input.source)) throw new ValidationError(`source must be one of ${v.SOURCES.join(', ')}`, 'source');
      if (typeof input.data !== 'object' || input.data === null || Array.isArray(input.data)) {
        throw new ValidationError('data must be an object', 'data');
      }
      // Validate and store what the wire will carry: the JSON form (a Date becomes its ISO
      // string, undefined members vanish), so the returned event equals the stored one.
      let json: string;
      try {
        json = JSON.stringify(input.data);
      } catch (error) {
        throw new ValidationError(
          `data must be JSON-serialisable (${error instanceof Error ? error.message.split('\n')[0] : 'not JSON'})`,
          'data',
        );
      }
      const bytes = Buffer.byteLength(json);
      if (bytes > o.maxPayloadBytes) {
        throw new WebhooksError('ERR_PAYLOAD_TOO_LARGE', `data is ${bytes} bytes; the limit is ${o.maxPayloadBytes}`, { field: 'data' });
      }
      const data = JSON.parse(json) as Record<string, unknown>;
      catalog.validateEvent(input.type, data);
      const now = clock.now();
      const eventTimestamp = input.eventTimestamp === undefined ? now : +input.eventTimestamp;
      if (!Number.isFinite(eventTimestamp)) throw new ValidationError('eventTimestamp must be a valid time', 'eventTimestamp');
      const event: EventRecord = {
        id: newId('event', now),
        environment,
        type: input.type,
        source: input.source,
        data,
        eventTimestamp,
        createdAt: now,
      };
      const deliveries = await call('writing the event', () =>
        store.insertEvent(event, { newDeliveryId: () => newId('msg', now), transaction: emitOptions.transaction }),
      );
      // Within a host transaction the rows are not visible until the host commits; the poll
      // (or an explicit wake() after commit) picks them up.
      if (deliveries.length > 0) scheduler.wake();
      return { ...event, deliveryIds: deliveries.map((d) => d.id) };
    },

    webhooks: {
      async create(input) {
        const environment = v.environmentOf(input?.environment);
        const clean = v.webhookInput(input, catalog);
        await assertEndpointAllowed(clean.endpoint, o.network);
        const now = clock.now();
        const record: WebhookRecord = {
          id: newId('webhook', now),
          environment,
          ...clean,
          status: 'enabled',
          disabledReason: null,
          disabledAt: null,
          failingSince: null,
          lastError: null,
          createdAt: now,
          updatedAt: now,
        };
        await call('creating a webhook', () => store.createWebhook(record, { maxWebhooks: o.maxWebhooks(environment) }));
        return record;
      },
      async get(id, opts) {
        const environment = v.environmentOf(opts?.environment);
        return byId('webhook', id, 'reading a webhook', () => store.getWebhook(environment, id));
      },
      list: async (opts) => {
        const environment = v.environmentOf(opts?.environment);
        return call('listing webhooks', () => store.listWebhooks(environment));
      },
      async update(id, patch, opts) {
        const environment = v.environmentOf(opts?.environment);
        const clean = v.webhookPatch(patch, catalog);
        if (clean.endpoint !== undefined) await assertEndpointAllowed(clean.endpoint, o.network);
        return byId('webhook', id, 'updating a webhook', () => store.updateWebhook(environment, id, clean, clock.now()));
      },
      async delete(id, opts) {
        const environment = v.environmentOf(opts?.environment);
        await byId('webhook', id, 'deleting a webhook', () => store.deleteWebhook(environment, id));
      },
      async disable(id, opts) {
        const environment = v.environmentOf(opts?.environment);
        return byId('webhook', id, 'disabling a webhook', () => store.disableWebhook(environment, id, 'manual', clock.now()));
      },
      async enable(id, opts) {
        const environment = v.environmentOf(opts?.environment);
        const resume = opts?.resumeHeld ?? true;
        if (typeof resume !== 'boolean') throw new ValidationError('resumeHeld must be a boolean', 'resumeHeld');
        const done = await byId('webhook', id, 'enabling a webhook', () => store.enableWebhook(environment, id, clock.now(), resume));
        scheduler.wake();
        return done;
      },
    },

    events: {
      async get(id, opts) {
        const environment = v.environmentOf(opts?.environment);
        return byId('event', id, 'reading an event', () => store.getEvent(environment, id));
      },
    },

    deliveries: {
      async list(filter = {}) {
        const environment = v.environmentOf(filter.environment);
        const limit = filter.limit ?? 100;
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
          throw new ValidationError('limit must be an integer from 1 to 1000', 'limit');
        return call('listing deliveries', () => store.listDeliveries(environment, { ...filter, limit }));
      },
      async get(id, opts) {
        const environment = v.environmentOf(opts?.environment);
        return byId('delivery', id, 'reading a delivery', () => store.getDelivery(environment, id));
      },
      async attempts(id, opts) {
        await hooks.deliveries.get(id, opts);
        return call('listing attempts', () => store.listAttempts(v.environmentOf(opts?.environment), id));
      },
    },

    eventTypes: { list: () => catalog.list() },
    handler: undefined as unknown as Webhooks['handler'], // set below: it needs the finished object
    jwks: () => keys.jwks(),
    keys: { rotate: (newKey, rotateOptions) => keys.rotate(newKey, rotateOptions), list: () => keys.list() },
    wake: () => scheduler.wake(),
    drain: () => scheduler.drain(),

    async close() {
      if (closed) return;
      closed = true;
      // Last in, first out: stop the loop, let attempts in flight record, then release I/O.
      await scheduler.close();
      if (ownTransport) await transport.close?.();
      await store.close();
    },
    [Symbol.asyncDispose]() {
      return hooks.close();
    },
  };
  hooks.handler = createHandler({ hooks, authorize: options.authorize, onError });
  return hooks;
}

function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (cause: ${error.cause.message})` : '';
    return `${error.name}: ${error.message}${cause}`;
  }
  return String(error);
}
