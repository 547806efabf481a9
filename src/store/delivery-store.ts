import type { AttemptRecord, ClaimedDelivery, DeliveryRecord, EventRecord, WebhookRecord } from '../model.js';
import type { StoreErrors } from './store-errors.js';

/**
 * What the delivery path calls, and nothing else: `emit` (insertEvent), the loop (claims, give-backs,
 * the next due time, wake-ups) and the dispatcher (outcomes, a slow-down's pace, a gone endpoint's
 * disable). Everything here runs for every delivery. `Tx` is the type of a host transaction
 * `emit` can join (see `Store`).
 */
export interface DeliveryStore<Tx = unknown> extends StoreErrors {
  /**
   * In one transaction: writes the event and one pending delivery (due `event.createdAt`) per
   * enabled webhook of its environment subscribed to its type. With `transaction` (the host's own
   * transaction on the same database, of the store's `Tx` type) the rows join it and commit or
   * roll back with it.
   */
  insertEvent(event: EventRecord, options: InsertEventOptions<Tx>): Promise<DeliveryRecord[]>;
  /**
   * Claims up to `limit` due deliveries (pending, `next_attempt_at <= now`, not under a live
   * lease), oldest due first, in one atomic statement: sets `locked_by` and
   * `locked_until = now + leaseMs`, so an abandoned claim is due again once its lease runs out.
   * Both stores leave `next_attempt_at` where it is (`unleased` in adapters/kysely/due.ts). Each
   * comes with `dueAt` (its `next_attempt_at` as the claim found it) and the
   * `traceparent` stored with its event. A claim that took nothing may also say when the next
   * pending delivery or notice comes due (`Claimed`), saving an idle pass its `nextDueAt`.
   * A paced webhook's deliveries (a rate limit, a Retry-After) come no faster than its pace: those
   * whose start time is later in the same second come with `startAt`, to be started then.
   */
  claimDue(args: ClaimArgs): Promise<Claimed>;
  /**
   * How many deliveries are due now and waiting (pending, `next_attempt_at <= now`; leased ones
   * are not due until their lease runs out), over every environment: the `webhooks.deliveries.due`
   * gauge. One count over the due index, read at most once per metric collection.
   */
  countDue(now: number): Promise<number>;
  /** Gives back claims this worker will not attempt now: due at `now`, lease cleared. */
  release(ids: string[], workerId: string, now: number): Promise<void>;
  /**
   * Records attempts and their consequences, all in ONE transaction (group commit: the scheduler
   * batches outcomes that land together, so a commit is paid per batch, not per delivery). For
   * each: the attempt row; the delivery (delivered, or next attempt at `nextAttemptAt` (from the
   * back-off), or failed when `nextAttemptAt` is null) if this worker still holds it; the webhook's
   * health (`failing_since` reset on success, set on first failure); and the auto-disable when a
   * failure lands `disableAfterMs` or more after `failing_since`. Idempotent by attempt id (a
   * transient retry after a lost commit reply gives the same answers). Returns, per item in order,
   * the webhook when, and only when, that item disabled it.
   */
  recordAttempts(batch: readonly RecordAttemptArgs[]): Promise<RecordResult[]>;
  /**
   * Earliest `next_attempt_at` among pending deliveries and pending notices, or null. Cheap:
   * served by indexes. Where a lease leaves `next_attempt_at` in place (SQLite), leased
   * deliveries are passed over: the end of a lease is then not a due time here, and the
   * scheduler's poll finds a delivery whose lease ran out.
   */
  nextDueAt(): Promise<number | null>;
  /**
   * Earliest `next_attempt_at` of a pending delivery later than `now` (on PostgreSQL that
   * includes the end of every live lease), or null. One read of the due index. Lets the
   * scheduler know how long a claim that found nothing stays true (see the scheduler's `#proof`,
   * which ends within a poll interval anyway, so a lease that runs out on SQLite is seen then);
   * a store without it gets every claim run.
   */
  nextDueAfter?(now: number): Promise<number | null>;
  /**
   * Optional: calls `onWake` when work may have become due in another process (an event emitted
   * and committed there, held deliveries resumed, claims given back), e.g. PostgreSQL
   * LISTEN/NOTIFY. A hint only: coalesced, possibly lost while reconnecting (the store then wakes
   * once more on its own); polling stays the safety net. Never rejects: a store that cannot listen
   * yet keeps trying in the background. Resolves to a function that stops listening. `self`: the
   * listening engine's worker id; hints sent about its own outcomes (the next delivery of a
   * subject made due by its record, which its loop claims anyway) are not passed on.
   */
  subscribe?(onWake: () => void, self?: string): Promise<() => Promise<void>>;
  /**
   * Optional (endpoint options): what an answer asked of the webhook's next attempts, for every
   * process: none starts before `deferUntil` (a Retry-After; never moved earlier), and its pace
   * is halved until `slowUntil`. A store without it ignores both.
   */
  paceWebhook?(webhookId: string, slowDown: { deferUntil?: number; slowUntil?: number }): Promise<void>;
  /**
   * Optional (endpoint options, `disableOnGone`): disables an enabled webhook at once, reason
   * `gone`, holding its pending deliveries and writing its notice in the same transaction, like
   * the automatic disable. The webhook when this call disabled it, else null (already disabled).
   */
  disableGone?(webhookId: string, now: number): Promise<WebhookRecord | null>;
}

export interface InsertEventOptions<Tx> {
  /**
   * The event's subject (its catalog entry's pointer into `data`), or null. A webhook with
   * `ordering: 'per-subject'` queues its deliveries by it: one written while an earlier one of
   * the same subject is pending or held waits, not due, until that one ends.
   */
  subject?: string | null;
  newDeliveryId: () => string;
  /** W3C traceparent of the emitting span, stored with the event for the attempts' spans. */
  traceparent?: string | null;
  transaction?: Tx;
  /**
   * Deliver to exactly these webhooks (when enabled), subscribed to the type or not: a test
   * event. When none of them is enabled, nothing is written and WebhookDisabledError is thrown.
   */
  webhookIds?: string[];
}

/**
 * What a claim took. When it took nothing, a store may set `nextDueAt` to what `nextDueAt()`
 * would have answered at that moment (null: nothing pending): PostgreSQL reads it in the claim's
 * own statement, so an idle pass is one round trip instead of two.
 */
export type Claimed = ClaimedDelivery[] & { nextDueAt?: number | null };

export interface ClaimArgs {
  now: number;
  limit: number;
  workerId: string;
  leaseMs: number;
  /** Webhooks this worker is already saturating (per-endpoint concurrency). */
  excludeWebhookIds?: string[];
  /** Environments this worker is already giving their full share (per-environment concurrency). */
  excludeEnvironments?: string[];
  /**
   * How a claim that leaves something out finds the rest (same answer either way). True
   * (default): per webhook with pending work, one seek each, whatever the backlogs left out;
   * false: along the due index, past the due rows of what is left out, whatever the number of
   * webhooks. The scheduler picks per claim (`scheduler/claim-form.ts`).
   */
  byWebhook?: boolean;
  /**
   * Leases that ran out after this time are not taken again (default: `now`, every lease that ran
   * out). The scheduler sets it for a while after it could not reach the store
   * (`RECLAIM_GRACE_MS` in `scheduler/reclaim-hold.ts`): the owners of leases that ran out during
   * the outage record the outcomes they kept through it first, so what was delivered is not sent
   * again.
   */
  reclaimBefore?: number;
}

export interface RecordAttemptArgs {
  attempt: AttemptRecord;
  workerId: string;
  now: number;
  /** Next try on failure; null = no more tries (delivery fails). Ignored on success. */
  nextAttemptAt: number | null;
  disableAfterMs: number;
  /**
   * The fence (outcome fencing): the lease the attempt was claimed under (`ClaimedDelivery.lease.until`,
   * the row's `locked_until` as the claim set it). The delivery's state changes only while its row
   * still carries this worker's id and this very lease: nobody, this process included, has claimed
   * it since. Whether the lease has run out does not matter: an outcome recorded late (after a
   * database outage) still counts unless the delivery was claimed again. Without it, only the
   * worker's id is compared. The attempt row and the webhook's health are written either way.
   */
  leaseUntil?: number;
  /**
   * The delivery's webhook orders by subject (as the claim read it): when this outcome ends the
   * delivery, the next of its subject becomes due (and the result says `released`).
   */
  ordered?: boolean;
}

/** What recording one outcome did: the disable it made (null: none), and whether a delivery waiting behind it became due. */
export interface RecordResult {
  disabled: WebhookRecord | null;
  released?: boolean;
}
