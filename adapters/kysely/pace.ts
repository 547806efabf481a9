import { type Kysely, sql } from 'kysely';
import type { ClaimedDelivery, WebhookRecord } from '../../src/model.js';
import type { ClaimArgs } from '../../src/store.js';
import { writeNotice } from './notices.js';
import { holdPending } from './outcomes.js';
import { toWebhook } from './rows.js';
import type { EngineTables, WebhookRow } from './schema.js';

type Db = Kysely<EngineTables>;

/** What a claim needs to know of a webhook's pace (migration 17's columns, as the claim read them). */
export type PaceState = Pick<WebhookRow, 'rate_limit_per_second' | 'next_start_at'>;

/** Whether a claimed delivery of this webhook must be paced: a rate limit, or a deferral (Retry-After) not yet over. */
export function isPaced(state: PaceState | undefined, now: number): boolean {
  if (!state) return false;
  return state.rate_limit_per_second != null || (state.next_start_at != null && Number(state.next_start_at) > now);
}

/**
 * How late a reserved start time may still be used. Later, the delivery reserves again: a claim
 * that comes after a stall starts at most this long's worth of start times together, so any
 * window of the pace holds at most that many more than the limit.
 */
const LATE_MS = 500;

/** Milliseconds between two starts at `perSecond`, rounded up: never faster than the limit. */
const stepOf = (perSecond: number) => Math.ceil(1000 / perSecond);

/**
 * Start times are handed out a second at a time. A delivery given a start time waits in the due
 * index until the start of that time's second (its **bucket**), with a token (`iw_paced`) that
 * says the time is its own; the claim that takes it then keeps it in its process until the start
 * time itself (`ClaimedDelivery.startAt`). Every other process's look at the store then sees the
 * webhook's next work a second away rather than a step away: at 20/s a claim a second instead
 * of twenty (decision 028).
 */
const BUCKET_MS = 1000;

/** The start of the bucket of a start time (epoch ms, never negative). */
export const bucketOf = (at: number) => at - (at % BUCKET_MS);

/**
 * The pace of rate-limited and deferred webhooks, shared by every process through the webhook's
 * row (docs/endpoint-options.md, decision 028). A claim takes due deliveries as always; those of
 * a paced webhook then each get a start time, reserved from the webhook's `next_start_at` one
 * step apart (one atomic update per webhook, so two processes never reserve the same time). A
 * delivery whose start time has come starts now, one whose start time is in the current bucket
 * is kept by the claiming process until then, under a lease that covers the wait; the others are
 * given back due at their bucket, with their token: the claim that finds one due there starts
 * or keeps it without reserving again. The same reservation gives times to the rest of a
 * rate-limited webhook's due backlog, so one claim meets the backlog and each of its deliveries
 * is then claimed once, in its bucket, sitting in the due index meanwhile, in nobody's way: a
 * throttled webhook's backlog never holds slots or claims.
 *
 * Returns the claimed deliveries that may start now or later in this bucket (`startAt`), in
 * their order.
 */
export async function paceClaims(
  db: Db,
  claimed: ClaimedDelivery[],
  states: ReadonlyMap<string, PaceState>,
  args: Pick<ClaimArgs, 'now' | 'workerId' | 'leaseMs'>,
  dialect: 'sqlite' | 'postgres',
): Promise<ClaimedDelivery[]> {
  const { now, workerId } = args;
  const paced = claimed.filter((c) => isPaced(states.get(c.webhook.id), now));
  if (paced.length === 0) return claimed;
  // Tokens are taken whatever they say: a stale one (its delivery since attempted, resent or
  // deferred) is worth nothing. One statement of its own: a paced webhook's steady state is a
  // claim that finds a bucket's deliveries at their reserved times, which needs nothing more
  // than keeping them (a transaction around it was three round trips on the claim's path).
  // Its deliveries are leased to this worker: nobody else takes their tokens meanwhile.
  const ids = paced.map((c) => c.delivery.id);
  const tokens = await db.deleteFrom('iw_paced').where('delivery_id', 'in', ids).returning(['delivery_id', 'slot']).execute();
  const slotOf = new Map(tokens.map((t) => [t.delivery_id, Number(t.slot)]));
  const byWebhook = new Map<string, ClaimedDelivery[]>();
  /** Kept here until their start time, later in this bucket. */
  const kept = new Map<string, number>();
  for (const c of paced) {
    const slot = slotOf.get(c.delivery.id);
    // Its reserved start time, its bucket come (and the time not long gone: a process that fell
    // behind must not start a pile of late start times at once, over the pace): it starts then.
    if (slot !== undefined && c.dueAt === bucketOf(slot) && now - slot <= LATE_MS) {
      if (slot > now) kept.set(c.delivery.id, slot);
      continue;
    }
    const list = byWebhook.get(c.webhook.id) ?? [];
    list.push(c);
    byWebhook.set(c.webhook.id, list);
  }
  const later = new Map<string, number>();
  if (byWebhook.size > 0) await reserveStarts(db, paced, byWebhook, states, now, workerId, dialect, kept, later);
  const keptUntil = kept.size === 0 ? new Map<string, number>() : await keepLeases(db, kept, args);
  if (later.size === 0 && kept.size === 0) return claimed;
  const out: ClaimedDelivery[] = [];
  for (const c of claimed) {
    const id = c.delivery.id;
    if (later.has(id)) continue;
    const startAt = kept.get(id);
    if (startAt === undefined) out.push(c);
    else {
      const until = keptUntil.get(id);
      // (Not leased to us any more: someone else's now.)
      if (until !== undefined) out.push({ ...c, dueAt: startAt, startAt, lease: { workerId, until } });
    }
  }
  return out;
}

/**
 * Start times for what came without a token of its own (and the rest of a rate-limited
 * webhook's due backlog): those within this bucket go to `kept`, the later ones to `later`
 * (given back due at their bucket, with their token), in one transaction.
 */
async function reserveStarts(
  db: Db,
  paced: readonly ClaimedDelivery[],
  byWebhook: ReadonlyMap<string, ClaimedDelivery[]>,
  states: ReadonlyMap<string, PaceState>,
  now: number,
  workerId: string,
  dialect: 'sqlite' | 'postgres',
  kept: Map<string, number>,
  later: Map<string, number>,
): Promise<void> {
  const place = (c: ClaimedDelivery, start: number) => {
    if (start <= now) return;
    if (bucketOf(start) <= now) kept.set(c.delivery.id, start);
    else later.set(c.delivery.id, start);
  };
  await db.transaction().execute(async (trx) => {
    const swept = new Map<string, number>();
    for (const [webhookId, list] of byWebhook) {
      const perSecond = states.get(webhookId)?.rate_limit_per_second;
      if (perSecond == null) {
        const starts = await deferredStart(trx, webhookId, list.length);
        for (const [i, c] of list.entries()) place(c, starts[i]!);
        continue;
      }
      // The rest of its due backlog gets its times in the same reservation, so no other claim
      // reads past it (decision 028).
      const rest = await dueBacklog(trx, webhookId, now, dialect);
      const starts = await reserve(trx, webhookId, list.length + rest.length, perSecond, now);
      for (const [i, c] of list.entries()) place(c, starts[i]!);
      for (const [i, id] of rest.entries()) swept.set(id, starts[list.length + i]!);
    }
    const moved = swept.size === 0 ? [] : await moveBacklog(trx, swept, now);
    const webhookOf = new Map(paced.map((c) => [c.delivery.id, c.webhook.id]));
    if (moved.length > 0)
      await trx
        .insertInto('iw_paced')
        .values(moved.map((m) => ({ delivery_id: m.id, webhook_id: m.webhook_id, slot: swept.get(m.id)! })))
        .onConflict((oc) => oc.column('delivery_id').doUpdateSet({ slot: (eb) => eb.ref('excluded.slot') }))
        .execute();
    if (later.size === 0) return;
    const entries = [...later];
    // Given back, due at their bucket: the lease cleared, only if still ours.
    await trx
      .updateTable('iw_deliveries')
      .set({ locked_by: null, locked_until: null, next_attempt_at: bucketsOf(entries) })
      .where(
        'id',
        'in',
        entries.map(([id]) => id),
      )
      .where('locked_by', '=', workerId)
      .where('status', '=', sql.lit('pending'))
      .execute();
    await trx
      .insertInto('iw_paced')
      .values(entries.map(([id, at]) => ({ delivery_id: id, webhook_id: webhookOf.get(id)!, slot: at })))
      .onConflict((oc) => oc.column('delivery_id').doUpdateSet({ slot: (eb) => eb.ref('excluded.slot') }))
      .execute();
  });
}

/**
 * Kept deliveries' leases moved to their start time plus the lease's length, so the wait does
 * not shorten the attempt's lease (an attempt's deadline and the record's fence are measured on
 * it). Returns each one's new lease end; one no longer ours is left out.
 */
async function keepLeases(db: Db, kept: ReadonlyMap<string, number>, { workerId, leaseMs }: Pick<ClaimArgs, 'workerId' | 'leaseMs'>) {
  const until = new Map([...kept].map(([id, at]) => [id, at + leaseMs] as const));
  const rows = await db
    .updateTable('iw_deliveries')
    .set({
      locked_until: byId(until),
    })
    .where('id', 'in', [...until.keys()])
    .where('locked_by', '=', workerId)
    .where('status', '=', sql.lit('pending'))
    .returning('id')
    .execute();
  const ours = new Set(rows.map((r) => r.id));
  return new Map([...until].filter(([id]) => ours.has(id)));
}

/** A time column's value for each delivery by id (`case id when … end`). */
const byId = (times: Iterable<readonly [string, number]>) =>
  sql<number>`case id ${sql.join(
    [...times].map(([id, at]) => sql`when ${id} then cast(${at} as bigint)`),
    sql` `,
  )} end`;

/** `next_attempt_at` of each delivery by id: the bucket of its start time. */
const bucketsOf = (times: Iterable<readonly [string, number]>) => byId([...times].map(([id, at]) => [id, bucketOf(at)] as const));

/** At most this many of a backlog get their start times in one claim; the next claim that meets the webhook takes more. */
const SWEEP_MAX = 1000;

/**
 * The ids of a rate-limited webhook's deliveries that are due, not leased and hold no start time
 * (no token), oldest first, at most {@link SWEEP_MAX}: what the next claims would otherwise meet
 * one batch at a time (the index on `webhook_id, next_attempt_at` of pending rows). On PostgreSQL
 * they are locked as read (skipping those another transaction holds), so no other process claims
 * one before it is moved: a delivery claimed in between would leave its reserved time unused, a
 * gap in the webhook's pace. SQLite runs one writer at a time.
 */
async function dueBacklog(trx: Db, webhookId: string, now: number, dialect: 'sqlite' | 'postgres'): Promise<string[]> {
  const query = trx
    .selectFrom('iw_deliveries')
    .select('id')
    .where('webhook_id', '=', webhookId)
    .where('status', '=', sql.lit('pending'))
    .where('next_attempt_at', '<=', now)
    .where('locked_by', 'is', null)
    .where('id', 'not in', (eb) => eb.selectFrom('iw_paced').select('delivery_id').where('webhook_id', '=', webhookId))
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(SWEEP_MAX);
  const rows = await (dialect === 'postgres' ? query.forUpdate().skipLocked() : query).execute();
  return rows.map((r) => r.id);
}

/** Moves swept deliveries to their buckets, each only while it is still due and unleased. Returns those moved. */
async function moveBacklog(trx: Db, swept: ReadonlyMap<string, number>, now: number) {
  return trx
    .updateTable('iw_deliveries')
    .set({ next_attempt_at: bucketsOf(swept) })
    .where('id', 'in', [...swept.keys()])
    .where('status', '=', sql.lit('pending'))
    .where('next_attempt_at', '<=', now)
    .where('locked_by', 'is', null)
    .returning(['id', 'webhook_id'])
    .execute();
}

/**
 * Reserves `n` start times one step apart from the webhook's `next_start_at` (or `now`, when that
 * has passed), a step twice as long while `slow_until` has not: one atomic update of its row.
 */
async function reserve(trx: Db, webhookId: string, n: number, perSecond: number, now: number): Promise<number[]> {
  const step = stepOf(perSecond);
  const row = await trx
    .updateTable('iw_webhooks')
    .set({
      next_start_at: sql`(case when coalesce(next_start_at, 0) > cast(${now} as bigint) then next_start_at else cast(${now} as bigint) end) + cast(${n} as bigint) * (case when coalesce(slow_until, 0) > cast(${now} as bigint) then cast(${2 * step} as bigint) else cast(${step} as bigint) end)`,
    })
    .where('id', '=', webhookId)
    .returning(['next_start_at', 'slow_until'])
    .executeTakeFirst();
  if (!row) return Array.from({ length: n }, () => now); // deleted meanwhile: its deliveries went with it
  const used = row.slow_until != null && Number(row.slow_until) > now ? 2 * step : step;
  const first = Number(row.next_start_at) - n * used;
  return Array.from({ length: n }, (_, i) => first + i * used);
}

/** A webhook without a rate limit, deferred by a Retry-After: all its deliveries start when the deferral ends. */
async function deferredStart(trx: Db, webhookId: string, n: number): Promise<number[]> {
  const row = await trx.selectFrom('iw_webhooks').select('next_start_at').where('id', '=', webhookId).executeTakeFirst();
  const at = Number(row?.next_start_at ?? 0);
  return Array.from({ length: n }, () => at);
}

/**
 * Store.paceWebhook: a Retry-After moves the webhook's `next_start_at` (never earlier) and voids
 * the tokens of start times before it; a 429 without one halves its pace until `slowUntil`.
 */
export async function paceWebhook(db: Db, webhookId: string, { deferUntil, slowUntil }: { deferUntil?: number; slowUntil?: number }) {
  await db.transaction().execute(async (trx) => {
    if (deferUntil !== undefined) {
      await trx
        .updateTable('iw_webhooks')
        .set({
          next_start_at: sql`case when coalesce(next_start_at, 0) < cast(${deferUntil} as bigint) then cast(${deferUntil} as bigint) else next_start_at end`,
        })
        .where('id', '=', webhookId)
        .execute();
      await trx.deleteFrom('iw_paced').where('webhook_id', '=', webhookId).where('slot', '<', deferUntil).execute();
    }
    if (slowUntil !== undefined) {
      await trx
        .updateTable('iw_webhooks')
        .set({
          slow_until: sql`case when coalesce(slow_until, 0) < cast(${slowUntil} as bigint) then cast(${slowUntil} as bigint) else slow_until end`,
        })
        .where('id', '=', webhookId)
        .execute();
    }
  });
}

/**
 * Store.disableGone: a 410 with `disableOnGone` disables the webhook at once, reason `gone`, its
 * pending deliveries held and its notice written in the same transaction (as the automatic
 * disable does in outcomes.ts). Only an enabled webhook: the notice goes once.
 */
export async function disableGone(db: Db, webhookId: string, now: number): Promise<WebhookRecord | null> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('iw_webhooks')
      .set({ status: 'disabled', disabled_reason: 'gone', disabled_at: now, updated_at: now })
      .where('id', '=', webhookId)
      .where('status', '=', 'enabled')
      .returningAll()
      .executeTakeFirst();
    if (!row) return null;
    await holdPending(trx, webhookId, now);
    const webhook = toWebhook(row);
    await writeNotice(trx, webhook, now);
    return webhook;
  });
}
