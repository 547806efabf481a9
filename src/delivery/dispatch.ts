import type { Clock } from '../clock.js';
import type { ClaimedDelivery } from '../model.js';
import type { Sealer } from '../secrets/seal.js';
import type { KeySet } from '../signing/keyset.js';
import { standardBody } from '../signing/standard-webhooks.js';
import { buildClaims, signClaims } from '../signing/token.js';
import type { DeliveryStore } from '../store.js';
import { logFields } from '../telemetry/log-fields.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import type { Logger } from '../types.js';
import { type Attempted, runAttempt } from './attempt.js';
import type { Backoff } from './backoff.js';
import { EndpointKeys } from './endpoint-access.js';
import type { Guard } from './guard/guard.js';
import { OutcomeRecorder } from './recorder.js';
import type { SlowDown } from './slow-down.js';
import type { Transport } from './transport.js';

export interface DispatchDeps {
  store: DeliveryStore;
  clock: Clock;
  keys: KeySet;
  issuer: (environment: string) => string;
  transport: Transport;
  guard: Guard;
  backoff: Backoff;
  /** Told when a record disabled a webhook: its notice was written with the disable (see notices/outbox.ts). */
  onNotice(): void;
  logger: Logger;
  /** The attempt's `webhooks.deliver` span and metrics, the disable count. */
  telemetry: Telemetry;
  workerId: string;
  timeoutMs: number;
  disableAfterMs: number;
  /** Bounds a webhook's own deadline (endpoint options): an attempt ends within its lease. */
  leaseMs?: number;
  /** Opens sealed secrets: credential header values, signing secrets, endpoint auth; null without `secretsKey`. */
  sealer: Sealer | null;
  /** A 410 disables the webhook at once (reason `gone`). */
  disableOnGone?: boolean;
}

/**
 * How long a token may serve its event's deliveries after it was signed: its `timestamp` claim
 * is then that much older than the attempt, well inside a receiver's window (5 minutes old).
 */
export const CARRY_MS = 1_000;
/**
 * At most this many tokens kept for carrying: about a claim's worth (64 by default), so what it
 * holds is of the order of what a claim holds already (a token is its event's data and a third
 * more: a few kilobytes, up to ~350 KB at the largest payload). The carry is for the event a
 * claim cut through, never far back.
 */
const CARRY_MAX = 64;

interface Signed {
  token: Promise<string>;
  /** The claim's time the token was signed for (its `timestamp` claim). */
  at: number;
  /** It was rejected: the next claim signs again rather than fail the same way. */
  failed: boolean;
}

/**
 * How long at least an outcome keeps being written through a lost database (a restart, a
 * failover) before it is given up and the delivery, once its lease has run out, sent again. A
 * late record is fenced on the claim (`RecordAttemptArgs.leaseUntil`), so waiting longer than
 * the lease is safe. Memory stays bounded: unrecorded outcomes hold back new attempts
 * (`Slots.free`). `close()` waits for them too, so a close during an outage can take this long.
 */
export const OUTCOME_PATIENCE_MS = 60_000;

/** A claimed delivery with the token it will carry (shared by the deliveries of its event claimed within {@link CARRY_MS}). */
export interface Dispatch {
  claimed: ClaimedDelivery;
  /** Starts signing its token if no delivery of its event has (idempotent); the token, once signed. */
  startSigning(): Promise<string>;
}

/** What the scheduler learns from an attempt: whether it succeeded, and whether it tells about the endpoint. */
export interface AttemptResult {
  success: boolean;
  /** False for a failure inside the engine (`internal`): not the endpoint's, so it changes nothing about it. */
  charged: boolean;
  /** The answer asked the webhook to slow down (a 429, a 503 with Retry-After, a 410: `slow-down.ts`). */
  slowDown?: boolean;
  /** A Retry-After: no attempt of the webhook may start before this time (clock ms). */
  deferUntil?: number;
}

/** The attempt's result once its outcome is recorded (or given up). */
export interface Outcome extends AttemptResult {
  /** The record disabled the webhook and wrote its notice: the notice outbox has work. */
  noticeWritten: boolean;
  /** The record ended a delivery of an ordered webhook and the next of its subject became due (ordering per subject). */
  released?: boolean;
}

/** One delivery under way (see {@link Dispatcher.deliver}). */
export interface Delivering {
  /** Settles when the HTTP exchange ended: the attempt's slot is free from then on. */
  attempted: Promise<AttemptResult>;
  /** Settles when the outcome is recorded, or recording was given up. */
  recorded: Promise<Outcome>;
}

/**
 * What happens to a claimed delivery, top to bottom, in one place:
 *
 * 1. {@link Dispatcher.prepare}: one RS256 token per event, shared by its deliveries claimed
 *    within a second (every webhook of the event gets the same claims, so one signature serves
 *    them all);
 * 2. {@link Dispatcher.deliver}: the attempt (POST with `webhook-id`, only 200 counts:
 *    `attempt.ts`), then the outcome: the next try from the back-off (or failed when it is
 *    spent), recorded with the webhook's health by group commit (`recorder.ts`, the SQL in the
 *    store), and when that record disabled the webhook, a notice to its account holder, written
 *    in the same transaction and sent by the notice outbox (`notices/outbox.ts`).
 *
 * The scheduler decides when a delivery runs (time, slots, leases); this decides what running it
 * means. It never throws: a failure to record leaves the lease to expire, and the delivery is
 * attempted again with the same `webhook-id`.
 */
export class Dispatcher {
  readonly #recorder: OutcomeRecorder;
  /** The tokens signed lately, by event id, for {@link prepare} to carry into the next claims. */
  readonly #tokens = new Map<string, Signed>();
  /** The webhooks' opened secrets and OAuth2 tokens. */
  readonly #endpoints: EndpointKeys;

  constructor(private readonly deps: DispatchDeps) {
    this.#recorder = new OutcomeRecorder(deps.store);
    this.#endpoints = new EndpointKeys(deps);
  }

  /**
   * Pairs each claimed delivery with its event's token, signing once per event and only when a
   * delivery of that event is first attempted (claims given back unattempted cost no signature).
   * A token signed for an earlier claim less than {@link CARRY_MS} ago serves this one too: a
   * claim cuts where its limit falls, often through an event's webhooks, and the rest of them
   * come in the next claim moments later.
   */
  prepare(claimed: readonly ClaimedDelivery[], now: number): Dispatch[] {
    // Within one claim an event's deliveries always share one (whatever the carry keeps).
    const inClaim = new Map<string, Promise<string>>();
    const tokenFor = (c: ClaimedDelivery) => {
      const key = bodyKey(c);
      let token = inClaim.get(key);
      if (!token) {
        token = this.#carriedOrSigned(c, key, now);
        inClaim.set(key, token);
      }
      return token;
    };
    return claimed.map((c) => new LazyDispatch(c, tokenFor));
  }

  /** The token of `c`'s event signed for an earlier claim at most {@link CARRY_MS} before `now`, or a new one. */
  #carriedOrSigned(c: ClaimedDelivery, key: string, now: number): Promise<string> {
    const carried = this.#tokens.get(key);
    if (carried && !carried.failed && now >= carried.at && now - carried.at <= CARRY_MS) return carried.token;
    const fresh: Signed = { token: this.#sign(c, now), at: now, failed: false };
    fresh.token.catch(() => (fresh.failed = true)); // each attempt observes it; never carried on
    this.#tokens.delete(key); // to the end of the map's order, with the youngest
    this.#tokens.set(key, fresh);
    this.#prune(now);
    return fresh.token;
  }

  /**
   * Drops the tokens too old to carry, oldest first (the map is in signing order, give or take a
   * lazy signature), and never keeps more than {@link CARRY_MAX}.
   */
  #prune(now: number): void {
    for (const [eventId, signed] of this.#tokens) {
      if (this.#tokens.size <= CARRY_MAX && now - signed.at <= CARRY_MS) break;
      this.#tokens.delete(eventId);
    }
  }

  /**
   * Attempts one delivery and records the outcome. Two moments, returned rather than called
   * back, so nothing re-enters the scheduler in the middle of a delivery: `attempted` when the
   * HTTP exchange ended (the scheduler frees the slot then: a slot covers the exchange only, not
   * the signature or the commit), `recorded` when the outcome is written.
   */
  deliver(dispatch: Dispatch): Delivering {
    const { claimed } = dispatch;
    const attempt = this.deps.telemetry.deliver(claimed, (traceparent) =>
      runAttempt(claimed, dispatch.startSigning(), this.deps, traceparent, this.#access(claimed)),
    );
    const recorded = attempt.then((a) => this.#record(claimed, a));
    return { attempted: attempt.then((a) => resultOf(a)), recorded };
  }

  /** The outcome: the next attempt from the back-off (none left: failed), written by group commit with the webhook's health. */
  async #record(claimed: ClaimedDelivery, attempted: Attempted): Promise<Outcome> {
    const { record: attempt, slowDown } = attempted;
    const { clock, backoff, workerId, disableAfterMs, telemetry } = this.deps;
    const result = resultOf(attempted);
    if (!result.charged) {
      // Ours, not the endpoint's: logged loudly, attempted again on the back-off, never charged to the webhook.
      this.deps.logger.error('an attempt failed inside the engine; it will be tried again', {
        deliveryId: claimed.delivery.id,
        webhookId: claimed.webhook.id,
        errorKind: 'internal',
        error: attempt.errorMessage ?? 'internal error',
      });
    }
    const now = clock.now();
    let nextAttemptAt = attempt.success ? null : backoff.nextAttemptAt(claimed.delivery.attemptCount + 1, now);
    // A Retry-After: this delivery's next attempt waits for it too (still within the back-off's count).
    if (nextAttemptAt !== null && slowDown?.deferUntil !== undefined) nextAttemptAt = Math.max(nextAttemptAt, slowDown.deferUntil);
    let noticeWritten = false;
    let released = false;
    try {
      // Fenced on the lease it was claimed under, not on the lease's end: however late, it is
      // recorded unless the delivery was claimed again since (an outage longer than the lease
      // claims nothing while it lasts). So keep trying through an outage, for the lease or
      // OUTCOME_PATIENCE_MS, whichever is longer: giving up sends again what was delivered.
      const patience = Math.max(claimed.lease.until - clock.now(), OUTCOME_PATIENCE_MS);
      const ordered = claimed.webhook.ordering === 'per-subject';
      const recordedAs = await this.#recorder.record(
        { attempt, workerId, now, nextAttemptAt, disableAfterMs, leaseUntil: claimed.lease.until, ...(ordered ? { ordered } : {}) },
        patience,
      );
      const { disabled } = recordedAs;
      released = recordedAs.released === true;
      if (disabled) {
        telemetry.disabled(disabled);
        this.deps.onNotice();
        noticeWritten = true;
      }
      if (slowDown && (await this.#slowDown(claimed, slowDown, now))) noticeWritten = true;
    } catch (error) {
      // Not recorded: once its lease has run out the delivery is attempted again (same webhook-id).
      this.deps.logger.error(
        'could not record an attempt; once its lease has run out it will be attempted again',
        logFields(error, { webhookId: claimed.webhook.id, deliveryId: claimed.delivery.id }),
      );
    }
    const outcome: Outcome = { success: result.success, charged: result.charged, noticeWritten, released };
    if (result.slowDown) outcome.slowDown = true;
    return outcome;
  }

  /**
   * What the answer asked of the webhook (endpoint options, after its attempt is recorded): its
   * other deliveries wait for a Retry-After, its pace is halved, or (a 410 with `disableOnGone`)
   * it is disabled with its notice. True when a notice was written.
   */
  async #slowDown(claimed: ClaimedDelivery, slowDown: SlowDown, now: number): Promise<boolean> {
    const { store, telemetry } = this.deps;
    if (slowDown.gone) {
      const disabled = (await store.disableGone?.(claimed.webhook.id, now)) ?? null;
      if (!disabled) return false;
      telemetry.disabled(disabled);
      this.deps.onNotice();
      return true;
    }
    await store.paceWebhook?.(claimed.webhook.id, slowDown);
    return false;
  }

  /** The webhook's format and auth for its attempt; undefined for a JWT without auth. */
  #access(claimed: ClaimedDelivery) {
    return claimed.webhook.format === undefined || (claimed.webhook.format === 'jwt' && !claimed.webhook.auth)
      ? undefined
      : this.#endpoints.access(claimed.webhook);
  }

  async #sign(c: ClaimedDelivery, now: number): Promise<string> {
    // Standard Webhooks: the event's JSON body, shared like a token; each delivery's HMAC is signed at its attempt.
    if (c.webhook.format === 'standard-webhooks') return standardBody(c.event, now);
    const claims = buildClaims(c.event, this.deps.issuer(c.event.environment), now);
    return signClaims(claims, await this.deps.keys.signingKey(now));
  }
}

/**
 * A claimed delivery whose token is signed when first asked for. A class, not an object
 * literal: its method lives on the prototype, so every dispatch has the same shape wherever it
 * goes (the scheduler's queues included).
 */
class LazyDispatch implements Dispatch {
  constructor(
    readonly claimed: ClaimedDelivery,
    private readonly tokenFor: (c: ClaimedDelivery) => Promise<string>,
  ) {}

  startSigning(): Promise<string> {
    return this.tokenFor(this.claimed);
  }
}

/** The key a body is shared under: the event's, per format (a JWT and a Standard Webhooks body differ). */
function bodyKey(c: ClaimedDelivery): string {
  return c.webhook.format === 'standard-webhooks' ? `s:${c.event.id}` : c.event.id;
}

function resultOf({ record, slowDown }: Attempted): AttemptResult {
  const result: AttemptResult = { success: record.success, charged: record.errorKind !== 'internal' };
  if (slowDown) result.slowDown = true;
  if (slowDown?.deferUntil !== undefined) result.deferUntil = slowDown.deferUntil;
  return result;
}
