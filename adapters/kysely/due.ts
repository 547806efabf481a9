import type { ClaimArgs } from '../../src/store.js';
import { list, type Mark, text, type Texts } from './texts.js';

/**
 * The ids a claim may take: pending, due by `now`, oldest due first, not of a webhook this worker
 * already saturates nor of a customer at its share. `status` is compared to the literal
 * `'pending'` (not a parameter) so both databases can prove the partial indexes apply. Each
 * flavor wraps them in its own one-statement claim (SQLite: `UPDATE … WHERE id IN`, PostgreSQL:
 * a `FOR UPDATE SKIP LOCKED` CTE), a text built once per shape (`texts.ts`), its parameters in
 * the order of {@link dueParameters}.
 *
 * Two forms, one answer:
 * - **Along the due index** (`iw_deliveries_due`, by due time), read until `limit` rows that are
 *   not left out: with nothing left out an idle claim reads one entry whatever the backlog. This
 *   is also the form for a claim that leaves something out with `byWebhook: false`: it reads past
 *   the due rows of what it leaves out, and no more.
 * - **Per webhook** (`byWebhook`, the default when something is left out). The due index would have to read past every
 *   due row of what is left out before it found anyone else's (a saturated webhook with 128,000
 *   due rows: 20 ms per claim on SQLite, 17 ms on PostgreSQL, growing with the backlog). Instead,
 *   the webhooks with pending deliveries are listed by a skip scan of `iw_deliveries_pending`
 *   (`(webhook_id, next_attempt_at) where status = 'pending'`, one seek per webhook), those left
 *   out are dropped by their own row (`iw_webhooks`: the webhook's id or its customer), and each
 *   other gives at most `limit` of its oldest due rows from a range of that index; the oldest
 *   `limit` of those are claimed. The cost is one seek per webhook with pending work plus the
 *   rows read, whatever the size of the backlogs left out (0.06 ms on SQLite, 0.8 ms on
 *   PostgreSQL at 128,000), but it grows with the webhooks that have pending work, due or not:
 *   with 10,000 of them holding future retries, 15 ms on SQLite and 78 ms on PostgreSQL. The
 *   scheduler picks the form per claim (`src/scheduler/claim-form.ts`).
 */
export function dueIdsText(flavor: 'sqlite' | 'postgres', p: Mark, webhooks: number, environments: number, byWebhook: boolean): string {
  if ((webhooks === 0 && environments === 0) || !byWebhook)
    return (
      `select "id" from "iw_deliveries" where "status" = 'pending' and "next_attempt_at" <= ${p()}${unleased(flavor, 'iw_deliveries', p)}` +
      (webhooks > 0 ? ` and "webhook_id" not in (${list(webhooks, p)})` : '') +
      (environments > 0 ? ` and "environment" not in (${list(environments, p)})` : '') +
      ` order by "next_attempt_at" limit ${p()}${lock(flavor)}`
    );
  const leftOut =
    (webhooks > 0 ? ` and "w"."id" not in (${list(webhooks, p)})` : '') +
    (environments > 0 ? ` and "w"."environment" not in (${list(environments, p)})` : '');
  // Per webhook. A webhook's oldest due rows, at most `limit` (its parameters come after the exclusions): a
  // range of iw_deliveries_pending, in its order. (PostgreSQL could also read the due index and
  // keep that webhook's rows; with few distinct webhooks in its statistics it would think that
  // cheaper, and read past every due row of the others. Migration 7 tells its planner that a
  // webhook's share of the table is small, and the plan test holds it to the range.)
  const oldest = (alias: string, columns: string) =>
    `select ${columns} from "iw_deliveries" "${alias}" where "${alias}"."webhook_id" = "hw"."id" and "${alias}"."status" = 'pending' and "${alias}"."next_attempt_at" <= ${p()}${unleased(flavor, alias, p)} order by "${alias}"."next_attempt_at" limit ${p()}`;
  // SQLite has no LATERAL: a correlated IN (its CROSS JOINs also fix the loop order, webhooks
  // outermost). PostgreSQL locks each webhook's rows as it reads them (SKIP LOCKED: what another
  // claimer holds is passed over, never waited on).
  const from =
    flavor === 'sqlite'
      ? `from "hw" cross join "iw_webhooks" "w" cross join "iw_deliveries" "x" where "w"."id" = "hw"."id"${leftOut} and "x"."id" in (${oldest('z', '"z"."id"')})`
      : `from "hw" join "iw_webhooks" "w" on "w"."id" = "hw"."id"${leftOut} cross join lateral (${oldest('z', '"z"."id", "z"."next_attempt_at"')}${lock(flavor)}) "x"`;
  return `${PENDING_WEBHOOKS} select "x"."id" ${from} order by "x"."next_attempt_at" limit ${p()}`;
}

/**
 * The webhooks with pending deliveries, each once, in id order: a recursive skip scan of
 * `iw_deliveries_pending` (the next id after the last one found, one seek each), ended by a null.
 * Both databases write it the same way; `with recursive` must open the statement on PostgreSQL,
 * so its claim puts its other CTEs after this one.
 */
const PENDING_WEBHOOKS =
  `with recursive "hw"("id") as (` +
  `select (select min("webhook_id") from "iw_deliveries" where "status" = 'pending') ` +
  `union all select (select min("webhook_id") from "iw_deliveries" where "status" = 'pending' and "webhook_id" > "hw"."id") from "hw" where "hw"."id" is not null)`;

const lock = (flavor: 'sqlite' | 'postgres') => (flavor === 'postgres' ? ' for update skip locked' : '');

/**
 * Whether a lease leaves `next_attempt_at` where it is (SQLite) or moves it to the lease's end
 * (PostgreSQL). Either way a row under a live lease is not due, and one whose lease ran out is.
 *
 * - **SQLite, in place.** Moving `next_attempt_at` rewrites the row's entries in both due
 *   indexes (`iw_deliveries_due`, `iw_deliveries_pending`: a delete and an insert in each), and
 *   the success deletes them again. Left in place, a claim writes no index entry: 0.39 → 0.11 WAL
 *   pages per claimed row, 24.5-25.7 → 20.8-21.7 µs per delivery on the store alone at fan-out 10,
 *   2-3 % of a delivery's CPU in the peers bench (bench/README.md, 2026-11-27). Leased rows stay at
 *   the head of the due indexes and each claim reads past them ({@link unleased}): at most what
 *   every process can have in flight and waiting, since none claims more.
 * - **PostgreSQL, moved.** A claim there writes a new row version and an entry in every index
 *   whatever columns change (`updated_at` is in `iw_deliveries_finished`, so no update is HOT), so
 *   leaving the due time in place saves nothing, and reading past the leased rows (a heap visit
 *   each) cost fan-out 10 0.80 → 0.69 × in one sitting, 0.76 → 0.72 × in another. Leased rows
 *   leave the head of the due index instead, and an expired lease is a due time like any other.
 */
export const leaseInPlace = (flavor: 'sqlite' | 'postgres') => flavor === 'sqlite';

/** Not under a live lease: never claimed, given back, or its lease ran out (a claimer that died). Only where the lease is in place. */
const unleased = (flavor: 'sqlite' | 'postgres', table: string, p: Mark) =>
  leaseInPlace(flavor) ? ` and ("${table}"."locked_until" is null or "${table}"."locked_until" <= ${p()})` : '';

/**
 * When the next pending delivery comes due (`nextDueAt`, an empty claim): the head of the due
 * index. Where the lease is in place (SQLite), past the leased rows: a lease that runs out is
 * not a due time there (this text knows no `now`), and the scheduler's poll, at most
 * `pollIntervalMs` apart, finds such a row. On PostgreSQL a leased row's due time is its lease's
 * end, so it counts.
 */
export const nextDelivery = (flavor: 'sqlite' | 'postgres') =>
  `(select "next_attempt_at" from "iw_deliveries" where "status" = 'pending'${leaseInPlace(flavor) ? ' and "locked_by" is null' : ''} order by "next_attempt_at" limit 1)`;
/** The earliest pending notice. */
export const NEXT_NOTICE = `(select "next_attempt_at" from "iw_notices" where "status" = 'pending' order by "next_attempt_at" limit 1)`;

/** Whether these args take the per-webhook form (a text beginning `with recursive "hw"`). */
const perWebhook = ({ excludeWebhookIds = [], excludeEnvironments = [], byWebhook = true }: ClaimArgs) =>
  byWebhook && (excludeWebhookIds.length > 0 || excludeEnvironments.length > 0);

/** The parameters of {@link dueIdsText}, in its order. */
export function dueParameters(args: ClaimArgs, flavor: 'sqlite' | 'postgres'): unknown[] {
  const { now, limit, excludeWebhookIds = [], excludeEnvironments = [] } = args;
  const due = leaseInPlace(flavor) ? [now, now] : [now];
  if (!perWebhook(args)) return [...due, ...excludeWebhookIds, ...excludeEnvironments, limit];
  return [...excludeWebhookIds, ...excludeEnvironments, ...due, limit, limit];
}

/** The claim's text for these args' shape, built by `wrap` around {@link dueIdsText} on first use. */
export function claimText(texts: Texts, args: ClaimArgs, wrap: (p: Mark, due: string) => string): string {
  const webhooks = args.excludeWebhookIds?.length ?? 0;
  const environments = args.excludeEnvironments?.length ?? 0;
  const flavor = texts.flavor;
  const byWebhook = args.byWebhook ?? true;
  return text(texts, `claim ${webhooks} ${environments} ${byWebhook}`, (p) =>
    wrap(p, dueIdsText(flavor, p, webhooks, environments, byWebhook)),
  );
}

/** What the claim sets on each row it takes: worker, lease end (twice where the lease moves the due time), now. */
export function leaseParameters({ now, workerId, leaseMs }: ClaimArgs, flavor: 'sqlite' | 'postgres'): unknown[] {
  return leaseInPlace(flavor) ? [workerId, now + leaseMs, now] : [workerId, now + leaseMs, now + leaseMs, now];
}

/**
 * The SET list of a claim: the lease; on PostgreSQL `next_attempt_at` moved to its end (an
 * abandoned claim comes due again by itself; see {@link leaseInPlace}); and `claimed_due_at` =
 * `next_attempt_at` as the claim found it (SET expressions read the old row on both databases),
 * for the lag metric.
 */
export const leaseSet = (p: Mark, flavor: 'sqlite' | 'postgres') =>
  `"locked_by" = ${p()}, "locked_until" = ${p()}, ${leaseInPlace(flavor) ? '' : `"next_attempt_at" = ${p()}, `}"updated_at" = ${p()}, "claimed_due_at" = iw_deliveries.next_attempt_at`;
