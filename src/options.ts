import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Catalog } from './catalog/catalog.js';
import { systemClock } from './clock.js';
import { Backoff } from './delivery/backoff.js';
import { createGuard } from './delivery/guard/guard.js';
import { createSealer } from './secrets/seal.js';
import { KeySet } from './signing/keyset.js';
import type { WebhooksOptions } from './types.js';
import { refuseUnknown } from './unknown-options.js';

/**
 * Checks every option of createWebhooks() at once and freezes what the engine keeps, so misuse is
 * a TypeError at startup, never a surprise at the first delivery.
 */
export function snapshotOptions(options: WebhooksOptions) {
  if (typeof options !== 'object' || options === null) throw new TypeError('createWebhooks: options are required');
  refuseOptionsUnknown(options);
  const { store } = options;
  if (!store || typeof store.claimDue !== 'function' || typeof store.migrate !== 'function') {
    throw new TypeError('createWebhooks: store must be a Store (e.g. sqliteStore({ filename }))');
  }
  const issuer = issuerOf(options.issuer);
  const clock = options.clock ?? systemClock;
  if (typeof clock.now !== 'function' || typeof clock.setTimer !== 'function')
    throw new TypeError('createWebhooks: clock must implement now/setTimer/clearTimer');
  // Rotation is timed by the engine's clock, like everything else.
  const keys = new KeySet(options.keys, { now: () => clock.now() });
  const d = options.delivery ?? {};
  const timeoutMs = positiveInt(d.timeoutMs ?? 15_000, 'delivery.timeoutMs');
  const delivery = {
    timeoutMs,
    workerId: options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    concurrency: positiveInt(d.concurrency ?? 64, 'delivery.concurrency'),
    perWebhookConcurrency: positiveInt(d.perWebhookConcurrency ?? 8, 'delivery.perWebhookConcurrency'),
    // An environment's fair share of this process's slots: a quarter by default, and room for two of
    // its webhooks at full bound, so one hung webhook never starves its siblings (see Scheduler#claim).
    perEnvironmentConcurrency: positiveInt(
      d.perEnvironmentConcurrency ??
        Math.min(d.concurrency ?? 64, Math.max(2 * (d.perWebhookConcurrency ?? 8), Math.ceil((d.concurrency ?? 64) / 4))),
      'delivery.perEnvironmentConcurrency',
    ),
    batchSize: positiveInt(d.batchSize ?? 64, 'delivery.batchSize'),
    leaseMs: positiveInt(d.leaseMs ?? timeoutMs + 30_000, 'delivery.leaseMs'),
    pollIntervalMs: positiveInt(d.pollIntervalMs ?? 1000, 'delivery.pollIntervalMs'),
  };
  if (delivery.leaseMs <= timeoutMs) throw new TypeError('createWebhooks: delivery.leaseMs must be longer than delivery.timeoutMs');
  const max = options.limits?.maxWebhooks;
  if (max !== undefined && typeof max !== 'function') positiveInt(max, 'limits.maxWebhooks');
  const maxWebhooks = (environment: string): number | null => {
    const n = typeof max === 'function' ? max(environment) : max;
    return n === undefined || n === null ? null : n;
  };
  const notifier = options.notifier;
  if (options.authorize !== undefined && typeof options.authorize !== 'function')
    throw new TypeError('createWebhooks: authorize must be a function');
  if (notifier !== undefined && typeof notifier?.webhookDisabled !== 'function')
    throw new TypeError('createWebhooks: notifier.webhookDisabled must be a function');
  const logger = options.logger ?? {
    warn: (m: string, meta?: object) => console.warn(`[identity-webhooks] ${m}`, meta ?? ''),
    error: (m: string, meta?: object) => console.error(`[identity-webhooks] ${m}`, meta ?? ''),
  };
  return Object.freeze({
    store,
    keys,
    issuer,
    clock,
    catalog: new Catalog(options.eventTypes ?? []),
    delivery: Object.freeze(delivery),
    maxWebhooks,
    maxPayloadBytes: positiveInt(options.limits?.maxPayloadBytes ?? 256 * 1024, 'limits.maxPayloadBytes'),
    disableAfterMs: positiveInt(options.disableAfterMs ?? 72 * 3600_000, 'disableAfterMs'),
    // A 410 Gone disables the webhook at once (reason `gone`) instead of counting as a failure.
    disableOnGone: booleanOf(options.disableOnGone, 'disableOnGone'),
    retentionMs: retentionOf(options.retention),
    notifier,
    logger,
    // The durable back-off.
    backoff: new Backoff(options.backoff, Math.random),
    // Secrets sealed at rest (null without secretsKey: a webhook that needs one is refused).
    sealer: createSealer(options.secretsKey),
    // The SSRF guard, applied at webhook creation/update and again on every delivery attempt.
    guard: createGuard({
      allowPrivateNetworks: options.allowPrivateNetworks === true,
      allowHosts: options.allowHosts ?? [],
      resolver: options.resolver,
    }),
  });
}

function issuerOf(issuer: WebhooksOptions['issuer']): (environment: string) => string {
  if (typeof issuer === 'function') {
    return (environment) => {
      const value = issuer(environment);
      if (typeof value !== 'string' || !URL.canParse(value))
        throw new TypeError(`issuer(${JSON.stringify(environment)}) must return an absolute URL`);
      return value;
    };
  }
  if (typeof issuer !== 'string' || !URL.canParse(issuer))
    throw new TypeError('createWebhooks: issuer must be an absolute URL (the environment base address) or a function returning one');
  return () => issuer;
}

function booleanOf(value: unknown, what: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new TypeError(`createWebhooks: ${what} must be a boolean`);
  return value;
}

function positiveInt(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0)
    throw new TypeError(`createWebhooks: ${what} must be a positive integer`);
  return value;
}

function retentionOf(retention: WebhooksOptions['retention']): number | null {
  if (retention === false) return null;
  const days = retention === undefined ? 30 : retention?.days;
  if (typeof days !== 'number' || !Number.isFinite(days) || days <= 0 || days > 36_500) {
    throw new TypeError('createWebhooks: retention must be { days: n } with n > 0, or false to keep everything');
  }
  return Math.round(days * 24 * 3600_000);
}

/** The options of createWebhooks, each level (see unknown-options.ts). */
export const WEBHOOKS_OPTIONS = [
  'store',
  'keys',
  'issuer',
  'transport',
  'clock',
  'limits',
  'notifier',
  'allowPrivateNetworks',
  'allowHosts',
  'secretsKey',
  'resolver',
  'eventTypes',
  'backoff',
  'disableAfterMs',
  'disableOnGone',
  'retention',
  'delivery',
  'logger',
  'telemetry',
  'authorize',
  'workerId',
  'dashboard',
] as const;
// Every option of the type is in the list: a compile error otherwise.
const everyOption: [Exclude<keyof WebhooksOptions, (typeof WEBHOOKS_OPTIONS)[number]>] extends [never] ? true : never = true;
void everyOption;

const NESTED: Record<string, readonly string[]> = {
  delivery: ['timeoutMs', 'concurrency', 'perWebhookConcurrency', 'perEnvironmentConcurrency', 'batchSize', 'leaseMs', 'pollIntervalMs'],
  limits: ['maxWebhooks', 'maxPayloadBytes'],
  backoff: ['schedule', 'jitter'],
  retention: ['days'],
  telemetry: ['meterProvider', 'tracerProvider', 'propagateTraceContext'],
  dashboard: ['allowedOrigins', 'url', 'sessionTtlMs', 'theme', 'locale'],
};

/** Refuses an option createWebhooks does not know, at any level; `known`: the top level's (a plugin adds its own). */
export function refuseOptionsUnknown(options: object, where = 'createWebhooks', known: readonly string[] = WEBHOOKS_OPTIONS): void {
  refuseUnknown(where, options, known);
  for (const [name, keys] of Object.entries(NESTED)) {
    const value = (options as Record<string, unknown>)[name];
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) refuseUnknown(where, value, keys, `${name}.`);
  }
  const theme = (options as { dashboard?: { theme?: unknown } }).dashboard?.theme;
  if (theme !== null && typeof theme === 'object') refuseUnknown(where, theme, ['name', 'logo', 'accent', 'mode'], 'dashboard.theme.');
}
