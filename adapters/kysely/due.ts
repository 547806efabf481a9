import type { ClaimArgs } from '../../src/store.js';
import { list, type Mark, type Texts, text } from './texts.js';

/**
 * The ids a claim may take: pending, due by `now`, oldest due first, not of a webhook this worker
 * already saturates nor of an environment at its share. `status` is compared to the literal
 * `'pending'` (not a parameter) so both databases can prove the partial indexes apply. Each
 * dialect wraps them in its own one-statement claim (SQLite: `UPDATE … WHERE id IN`, PostgreSQL:
 * a `FOR UPDATE SKIP LOCKED` CTE), a text built once per shape (`texts.ts`), its parameters in
 * the order of {@link dueParameters}.
 *
 * Two forms, one answer:
 * - **Along the due index** (`iw_deliveries_due`, by due time), read until `limit` rows that are
 *   not left out: with nothing left out an idle claim reads one entry whatever the backlog. This
 *   is also the form for a claim that leaves something out with `byWebhook: false`: it reads past
 *   the due rows of what it leaves out, and no more.
 * - **Per webhook** (`byWebhook`, the default when something is left out). The due index would have to read past every
 *   due row of what is left out before it found anyone else's (a saturated webhook's backlog,
 *   read again by every claim, its cost growing with the backlog). Instead,
 *   the webhooks with pending deliveries are listed by a skip scan of `iw_deliveries_pending`
 *   (`(webhook_id, next_attempt_at) where status = 'pending'`, one seek per webhook), those left
 *   out are dropped by their own row (`iw_webhooks`: the webhook's id or its environment), and each
 *   other gives at most `limit` of its oldest due rows from a range of that index; the oldest
 *   `limit` of those are claimed. The cost is one seek per webhook with pending work plus the
 *   rows read, whatever the size of the backlogs left out, but it grows with the webhooks that
 *   have pending work, due or not, which makes it the dearer form when thousands of them hold
 *   only future attempts. The
 *   scheduler picks the form per claim (`src/scheduler/claim-form.ts`).
 */
export function dueIdsText(dialect: 'sqlite' | 'postgres', p: Mark, webhooks: number, environments: number, byWebhook: boolean): string {
  if ((webhooks === 0 && environments === 0) || !byWebhook)
    return (
      `select "id" from "iw_deliveries" where "status" = 'pending' and "next_attempt_at" <= ${p()}${unleased('iw_deliveries', p)}` +
      (webhooks > 0 ? ` and "webhook_id" not in (${list(webhooks, p)})` : '') +
      (environments > 0 ? ` and "environment" not in (${list(environments, p)})` : '') +
      ` order by "next_attempt_at" limit ${p()}${lock(dialect)}`
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
    `select ${columns} from "iw_deliveries" "${alias}" where "${alias}"."webhook_id" = "hw"."id" and "${alias}"."status" = 'pending' and "${alias}"."next_attempt_at" <= ${p()}${unleased(alias, p)} order by "${alias}"."next_attempt_at" limit ${p()}`;
  // SQLite has no LATERAL: a correlated IN (its CROSS JOINs also fix the loop order, webhooks
  // outermost). PostgreSQL locks each webhook's rows as it reads them (SKIP LOCKED: what another
  // claimer holds is passed over, never waited on).
  const from =
    dialect === 'sqlite'
      ? `from "hw" cross join "iw_webhooks" "w" cross join "iw_deliveries" "x" where "w"."id" = "hw"."id"${leftOut} and "x"."id" in (${oldest('z', '"z"."id"')})`
      : `from "hw" join "iw_webhooks" "w" on "w"."id" = "hw"."id"${leftOut} cross join lateral (${oldest('z', '"z"."id", "z"."next_attempt_at"')}${lock(dialect)}) "x"`;
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

const lock = (dialect: 'sqlite' | 'postgres') => (dialect === 'postgres' ? ' for update skip locked' : '');

/**
 * Not under a live lease: never claimed, given back, or its lease ran out (a claimer that died).
 *
 * A lease leaves `next_attempt_at` where it is, on both databases: leased rows stay at the head
 * of the due indexes and each claim reads past them, at most what every process can have in
 * flight and waiting, since none claims more. Moving the due time to the lease's end would
 * rewrite the row's entries in both due indexes, and the success deletes them again.
 * - **SQLite** writes only the entries of the columns an update changes: left in place, a claim
 *   writes no index entry at all (0.39 → 0.11 WAL pages per claimed row, 2-3 % of a delivery's
 *   CPU in the peers bench; docs/decisions/003-lease-in-place.md).
 * - **PostgreSQL** writes a new row version, and an entry in every index unless the update is
 *   HOT: it changes no indexed column and the new version fits on the row's own page. A claim
 *   here sets only `locked_by`, `locked_until` and `claimed_due_at`, none of them indexed, and
 *   `iw_deliveries` keeps room on its pages for the new versions (migration 12): a claim then
 *   writes no index entry either (docs/decisions/003-lease-in-place.md).
 */
const unleased = (table: string, p: Mark) => ` and ("${table}"."locked_until" is null or "${table}"."locked_until" <= ${p()})`;

/**
 * When the next pending delivery comes due (`nextDueAt`, an empty claim): the head of the due
 * index, past the leased rows. A lease that runs out is not a due time here (this text knows no
 * `now`): the scheduler's poll, at most `pollIntervalMs` apart, finds such a row. Nor is a
 * delivery waiting in its subject's queue (ordering per subject: pending, no due time), which
 * SQLite would sort first.
 */
export const NEXT_DELIVERY = `(select "next_attempt_at" from "iw_deliveries" where "status" = 'pending' and "locked_by" is null and "next_attempt_at" is not null order by "next_attempt_at" limit 1)`;
/** The earliest pending notice. */
export const NEXT_NOTICE = `(select "next_attempt_at" from "iw_notices" where "status" = 'pending' order by "next_attempt_at" limit 1)`;

/** Whether these args take the per-webhook form (a text beginning `with recursive "hw"`). */
const perWebhook = ({ excludeWebhookIds = [], excludeEnvironments = [], byWebhook = true }: ClaimArgs) =>
  byWebhook && (excludeWebhookIds.length > 0 || excludeEnvironments.length > 0);

/** The parameters of {@link dueIdsText}, in its order. */
export function dueParameters(args: ClaimArgs): unknown[] {
  const { now, limit, excludeWebhookIds = [], excludeEnvironments = [] } = args;
  // (The second: leases that ran out by then are taken; see `ClaimArgs.reclaimBefore`.)
  const expired = args.reclaimBefore === undefined ? now : Math.min(now, args.reclaimBefore);
  if (!perWebhook(args)) return [now, expired, ...excludeWebhookIds, ...excludeEnvironments, limit];
  return [...excludeWebhookIds, ...excludeEnvironments, now, expired, limit, limit];
}

/** The claim's text for these args' shape, built by `wrap` around {@link dueIdsText} on first use. */
export function claimText(texts: Texts, args: ClaimArgs, wrap: (p: Mark, due: string) => string): string {
  const webhooks = args.excludeWebhookIds?.length ?? 0;
  const environments = args.excludeEnvironments?.length ?? 0;
  const dialect = texts.dialect;
  const byWebhook = args.byWebhook ?? true;
  return text(texts, `claim ${webhooks} ${environments} ${byWebhook}`, (p) =>
    wrap(p, dueIdsText(dialect, p, webhooks, environments, byWebhook)),
  );
}

/** What the claim sets on each row it takes: worker and lease end. */
export function leaseParameters({ now, workerId, leaseMs }: ClaimArgs): [workerId: string, lockedUntil: number] {
  return [workerId, now + leaseMs];
}

/**
 * The SET list of a claim: the lease, and `claimed_due_at` = `next_attempt_at` as the claim found
 * it, for the lag metric. Nothing else: `next_attempt_at` stays (see {@link unleased}), and so
 * does `updated_at` (a lease is not a change of the delivery's state, and on PostgreSQL the
 * column is indexed by `iw_deliveries_finished`: setting it would make no claim HOT).
 */
export const leaseSet = (p: Mark) => `"locked_by" = ${p()}, "locked_until" = ${p()}, "claimed_due_at" = iw_deliveries.next_attempt_at`;
