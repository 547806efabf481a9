import type { Catalog } from '../catalog/catalog.js';
import type { Clock } from '../clock.js';
import type { Guard } from '../delivery/guard/guard.js';
import type { LooseEmitInput } from '../emit.js';
import { maskHeaders } from '../endpoint-options.js';
import { ValidationError } from '../errors.js';
import { type WebhookRecord, withCircuit } from '../model.js';
import type { Sealer } from '../secrets/seal.js';
import { masked } from '../secrets/webhook-secrets.js';
import type { StoreAccess } from '../store-access.js';
import type { EmittedEvent } from '../types.js';
import * as v from '../validate.js';

/** What the management functions are given by the engine. */
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

/** The environment an operation's options name (the default one when they name none). */
export const environmentOf = (options: { environment?: string } | undefined) => v.environmentOf(options?.environment);

/** Rows changed per transaction by recover and Send waiting now: bounded, so an emit never waits long behind them. */
export const CHANGE_BATCH = 500;

/** A record as every management function hands it out: its circuit derived, secrets and credential header values masked. */
export function shown(webhook: WebhookRecord) {
  return withCircuit(masked({ ...webhook, headers: maskHeaders(webhook.headers) }));
}

/**
 * A time argument: whole epoch milliseconds within the Date range, or a valid Date. The stores
 * compare it with a bigint column, so a fraction (`0.5`) is refused here rather than failing
 * (PostgreSQL) or comparing differently (SQLite) there.
 */
export function timeOf(value: unknown, field: string): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || Math.abs(ms) > 8.64e15) {
    throw new ValidationError(`${field} must be a time (whole milliseconds since the epoch, or a Date)`, { field });
  }
  return ms;
}
