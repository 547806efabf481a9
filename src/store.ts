import type {
  AttemptRecord,
  ClaimedDelivery,
  DashboardGrantRecord,
  DeliveryRecord,
  DeliveryStatus,
  EventRecord,
  EventSummary,
  NoticeRecord,
  NoticeStatus,
  WebhookAuth,
  WebhookFormat,
  WebhookOrdering,
  WebhookRecord,
  WebhookSigning,
} from './model.js';
import type { HourCounts, HourRecord } from './stats.js';

/**
 * The contract every storage adapter implements (SQLite, PostgreSQL). `Tx` is the type of a host
 * transaction `emit` can join (for the Kysely adapters, a Kysely transaction; on SQLite also the
 * better-sqlite3 handle itself, `SqliteTransaction`), so passing anything else is a compile error. The engine talks only to
 * this interface; adapters live in `adapters/` and are proven by one conformance suite
 * (`test/store/conformance.ts`). Every method that reads or writes time takes it as an argument:
 * no adapter reads a clock of its own.
 *
 * Methods scoped to an environment never return or change another environment's rows.
 */
export interface Store<Tx = unknown> {
  /** Creates or upgrades the tables. Idempotent; safe when several processes call it at once. */
  migrate(now: number): Promise<void>;
  /** Releases what the store opened itself (not a pool or database the host passed in). */
  close(): Promise<void>;
  /**
   * True for an error a transient retry can cure: a lost or refused connection, a busy lock, a
   * serialisation conflict. Only the adapter knows its driver's codes; the engine asks here.
   */
  isTransient(error: unknown): boolean;

  /** Inserts a webhook unless the environment already has `maxWebhooks` (atomically). */
  createWebhook(record: WebhookRecord, options: { maxWebhooks: number | null }): Promise<void>;
  getWebhook(environment: string, id: string): Promise<WebhookRecord | null>;
  /** Oldest first. */
  listWebhooks(environment: string): Promise<WebhookRecord[]>;
  /** The ids of the environment's webhooks, in `listWebhooks`' order (the list's stats need no more). */
  listWebhookIds(environment: string): Promise<string[]>;
  /**
   * Applies the patch; returns the new record, or null when there is no such webhook (or, with
   * `patch.expect`, when its sealed columns have changed since they were read).
   */
  updateWebhook(environment: string, id: string, patch: WebhookPatch, now: number): Promise<WebhookRecord | null>;
  /** Deletes the webhook with its deliveries and attempts. Events stay. */
  deleteWebhook(environment: string, id: string): Promise<boolean>;
  /** Disables and holds its pending deliveries. Null when not found. */
  disableWebhook(environment: string, id: string, reason: string, now: number): Promise<WebhookRecord | null>;
  /**
   * Enables, clears `failing_since`, and either resumes held deliveries (due `now`) or fails them.
   * Null when not found.
   */
  enableWebhook(environment: string, id: string, now: number, resumeHeld: boolean): Promise<WebhookRecord | null>;
  /**
   * Signing formats and endpoint auth: the webhooks of every environment that hold a
   * sealed secret (`signing` or `auth` set, or a sealed credential header), in id order after
   * `after`, at most `limit`: the pages `webhooks.resealSecrets()` walks.
   */
  listWebhooksWithSecrets(after: string | null, limit: number): Promise<WebhookRecord[]>;

  /**
   * In one transaction: writes the event and one pending delivery (due `event.createdAt`) per
   * enabled webhook of its environment subscribed to its type. With `transaction` (the host's own
   * transaction on the same database, of the store's `Tx` type) the rows join it and commit or
   * roll back with it.
   */
  insertEvent(event: EventRecord, options: InsertEventOptions<Tx>): Promise<DeliveryRecord[]>;
  // (Idempotent by event id: inserting an event already stored writes nothing and returns its deliveries.)
  getEvent(environment: string, id: string): Promise<EventRecord | null>;

  /**
   * One page of deliveries, newest first (`created_at`, then id, descending), after the cursor
   * when given: keyset pagination, stable while new deliveries arrive. `next` is the cursor of
   * the following page, null on the last.
   */
  listDeliveries(environment: string, filter: DeliveryFilter): Promise<{ deliveries: DeliveryRecord[]; next: DeliveryCursor | null }>;
  getDelivery(environment: string, id: string): Promise<DeliveryRecord | null>;
  /** Oldest first. */
  listAttempts(environment: string, deliveryId: string): Promise<AttemptRecord[]>;
  /**
   * The hourly counters of the environment's webhooks (of one when `webhookId` is given) whose
   * hour starts in `[since, until)`, in no particular order: what `recordAttempts` added for each
   * attempt it wrote (src/stats.ts). A row per webhook and hour with attempts. With
   * `durations: false`, each record's `durations` may be empty (only the counts are read). With
   * `stepMs`, the counters are summed per webhook and period of `stepMs` from `since` (a chart's
   * points), each record's `hour` being its period's start.
   */
  readHours(
    environment: string,
    args: { webhookId?: string; since: number; until: number; durations?: boolean; stepMs?: number },
  ): Promise<HourRecord[]>;
  /**
   * The list's read: the counts (no durations) of every webhook of the environment in the hours
   * that start in `[since, until)`, as tables (`HourCounts`, src/stats.ts), in no particular
   * order; a webhook and hour without attempts may be left out or counted as zeros. The hours
   * that start before `settled` are settled and may be read from their packs (`packHours`), the
   * others (and settled hours not packed yet) from the counters: the counts `readHours` gives,
   * unless a late write reached a counter after its hour was packed.
   */
  readCounts(environment: string, args: { since: number; until: number; settled: number }): Promise<HourCounts[]>;
  /**
   * Packs the hourly counters of the hours that start in `[since, until)`, which the caller says
   * are settled (they no longer change), across every environment: one row per environment and
   * hour holding every webhook's counts of it, which the list's read takes instead of the
   * counters (`readCounts`). A pack already there is left as it is, so processes
   * that pack the same hour at once leave one. Returns the packs written.
   */
  packHours(args: { since: number; until: number }): Promise<number>;
  /** The start of the latest hour packed in any environment, or null when nothing is packed. */
  lastPackedHour(): Promise<number | null>;
  /**
   * Makes a delivery in any state due `now` again, with its id (its `webhook-id`) unchanged. A
   * delivery in flight under a live lease is left alone (its attempt is the one asked for).
   * Null when not found; throws WebhookDisabledError when its webhook is disabled.
   */
  resendDelivery(environment: string, id: string, now: number): Promise<DeliveryRecord | null>;
  /**
   * One bounded batch of a recover: up to `limit` `failed` deliveries of the webhook created in
   * `[since, until)`, after `after` (ascending), made due `now`. Only rows still `failed` change,
   * so concurrent recovers queue each delivery once. Null when the webhook is not found; throws
   * WebhookDisabledError when it is disabled. `last` is where the next batch starts (null: done).
   */
  recoverFailed(
    environment: string,
    webhookId: string,
    args: { since: number; until: number; now: number; limit: number; after: DeliveryCursor | null },
  ): Promise<{ recovered: number; last: DeliveryCursor | null } | null>;
  /**
   * One bounded batch of "send waiting now": up to `limit` of the webhook's pending deliveries
   * waiting for a later attempt (not in flight, not waiting behind another of their subject, last
   * attempted before `now`) made due `now`, soonest first; made due, they do not match the next
   * batch. `more`: a full batch was read. Null when the webhook is not found; throws
   * WebhookDisabledError when it is disabled.
   */
  sendWaiting(
    environment: string,
    webhookId: string,
    args: { now: number; limit: number },
  ): Promise<{ sent: number; more: boolean } | null>;
  /**
   * How many of the webhook's deliveries are pending and held, and how many pending ones
   * `sendWaiting` would take at `now`; null when the webhook is not found.
   */
  countWaiting(environment: string, webhookId: string, now: number): Promise<{ pending: number; held: number; sendable: number } | null>;
  /**
   * The environment's events about `key`, newest first: those whose subject is `key`, or whose
   * user's email is `key` (compared lowercased). Up to `limit` of them, created before `before`
   * (exclusive, by time then id), with every delivery of each, to every webhook. By an index of
   * (environment, key, time): the cost does not grow with the environment's other events.
   */
  searchEvents(
    environment: string,
    args: { key: string; limit: number; before: EventCursor | null },
  ): Promise<{ events: EventSummary[]; deliveries: DeliveryRecord[] }>;
  /** What these events of the environment are about, and whether each is a test event: for the log's rows. */
  summarizeEvents(environment: string, ids: readonly string[]): Promise<EventSummary[]>;

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
   * Claims up to `limit` due notices under a lease, like `claimDue` (on PostgreSQL no two
   * processes hold the same notice). Notices are written by `recordAttempts` in the transaction
   * that disables a webhook.
   */
  claimNotices(args: NoticeClaimArgs): Promise<NoticeRecord[]>;
  /** Records a try of a claimed notice (sent, or next attempt at `nextAttemptAt` (from the back-off), or failed when null); false when the lease was lost. */
  finishNotice(id: string, workerId: string, outcome: NoticeOutcome): Promise<boolean>;
  /** Newest first; every environment when `environment` is omitted. */
  listNotices(filter: { environment?: string; status?: NoticeStatus; limit: number }): Promise<NoticeRecord[]>;
  /**
   * One bounded round of retention: each step (see `PurgeCounts`) in its own transaction, at
   * most `limit` rows each. Null when another process holds the retention lock (PostgreSQL).
   */
  purge(args: PurgeArgs): Promise<PurgeCounts | null>;
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
  // Dashboard link access (migration 20). Optional: a store without them cannot mint
  // links (`hooks.dashboardLink` throws), and the dashboard then knows only the host's `authorize`.
  /** Stores a minted link; also deletes up to 100 grants that expired before `now`. */
  insertDashboardGrant?(grant: DashboardGrantRecord, now: number): Promise<void>;
  /**
   * In one transaction: marks the link `linkId` used if it is unused and unexpired at `now`, and
   * stores `session` (environment and capability copied from the link). Null when the link is
   * unknown, used or expired: nothing is written then.
   */
  redeemDashboardLink?(
    linkId: string,
    session: Pick<DashboardGrantRecord, 'id' | 'expiresAt'>,
    now: number,
  ): Promise<DashboardGrantRecord | null>;
  /** The session `id` when it exists and has not expired at `now`. */
  getDashboardSession?(id: string, now: number): Promise<DashboardGrantRecord | null>;
}

export interface WebhookPatch {
  name?: string;
  description?: string | null;
  endpoint?: string;
  eventTypes?: string[];
  // Endpoint options: headers as stored (credential values sealed), replacing the whole set.
  headers?: Record<string, string>;
  timeoutMs?: number | null;
  rateLimit?: { perSecond: number } | null;
  // Signing formats and endpoint auth: secrets already sealed by the caller.
  format?: WebhookFormat;
  signing?: WebhookSigning | null;
  auth?: WebhookAuth | null;
  /**
   * Apply the patch only while the webhook's sealed columns are still as the caller read them
   * (else {@link Store.updateWebhook} answers null, and the caller reads again): a rotation, a
   * re-seal and an update that keeps masked values never overwrite one another's secrets.
   */
  expect?: Pick<WebhookRecord, 'signing' | 'auth' | 'headers'>;
  /** Ordered delivery per subject. Set to `none`, what waited behind an earlier delivery becomes due. */
  ordering?: WebhookOrdering;
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

/** A position in a search by subject: the last event of a page. */
export interface EventCursor {
  createdAt: number;
  id: string;
}

/** A position in the delivery log: the last row of a page. */
export interface DeliveryCursor {
  createdAt: number;
  id: string;
}

export interface DeliveryFilter {
  webhookId?: string;
  eventId?: string;
  /** One delivery by its id (its `webhook-id`): a page of it or of nothing. */
  deliveryId?: string;
  /** Created at or after (epoch ms). */
  since?: number;
  /** Created before (epoch ms). */
  until?: number;
  status?: DeliveryStatus;
  eventType?: string;
  /** Page size. Default 25. */
  limit?: number;
  /** Start after this position (the `next` of the previous page). */
  after?: DeliveryCursor | null;
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

export interface NoticeClaimArgs {
  now: number;
  limit: number;
  workerId: string;
  leaseMs: number;
}

export type NoticeOutcome = { now: number; sent: true } | { now: number; sent: false; nextAttemptAt: number | null; error: string };

export interface PurgeArgs {
  /** Records older than this go. */
  cutoff: number;
  now: number;
  /** Most rows per transaction. */
  limit: number;
}

/** Rows affected by one round of retention, per step. */
export interface PurgeCounts {
  /** Held deliveries of long-disabled webhooks failed as `expired`. */
  expired: number;
  /** Delivered and failed deliveries deleted (their attempts with them). */
  deliveries: number;
  /** Events deleted (none of their deliveries left). */
  events: number;
  /** Sent notices deleted. */
  notices: number;
  /** Hourly counters deleted (of hours that ended before the cutoff). */
  hours: number;
  /** Packs of settled hours deleted (of hours that ended before the cutoff, like the counters). */
  packs: number;
}
