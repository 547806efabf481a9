import type { ClaimArgs } from '../../src/store.js';
import { list, type Mark, text, type Texts } from './texts.js';

/**
 * The ids a claim may take: pending, due by `now`, oldest due first, not of a webhook this worker
 * already saturates nor of a customer at its share. `status` is compared to the literal
 * `'pending'` (not a parameter) so both databases can prove the partial index
 * `iw_deliveries_due` applies. Each flavor wraps it in its own one-statement claim (SQLite:
 * `UPDATE … WHERE id IN`, PostgreSQL: a `FOR UPDATE SKIP LOCKED` CTE), a text built once per
 * shape (`texts.ts`); its parameters come first, in the order of {@link dueParameters}.
 */
export function dueIdsText(p: Mark, webhooks: number, environments: number): string {
  return (
    `select "id" from "iw_deliveries" where "status" = 'pending' and "next_attempt_at" <= ${p()}` +
    (webhooks > 0 ? ` and "webhook_id" not in (${list(webhooks, p)})` : '') +
    (environments > 0 ? ` and "environment" not in (${list(environments, p)})` : '') +
    ` order by "next_attempt_at" limit ${p()}`
  );
}

export function dueParameters({ now, limit, excludeWebhookIds = [], excludeEnvironments = [] }: ClaimArgs): unknown[] {
  return [now, ...excludeWebhookIds, ...excludeEnvironments, limit];
}

/** The claim's text for these args' shape, built by `wrap` around {@link dueIdsText} on first use. */
export function claimText(texts: Texts, args: ClaimArgs, wrap: (p: Mark, due: string) => string): string {
  const webhooks = args.excludeWebhookIds?.length ?? 0;
  const environments = args.excludeEnvironments?.length ?? 0;
  return text(texts, `claim ${webhooks} ${environments}`, (p) => wrap(p, dueIdsText(p, webhooks, environments)));
}

/** What the claim sets on each row it takes, after the due parameters: worker, lease end (twice), now. */
export function leaseParameters({ now, workerId, leaseMs }: ClaimArgs): unknown[] {
  return [workerId, now + leaseMs, now + leaseMs, now];
}

/**
 * The SET list of a claim: the lease, `next_attempt_at` moved to its end (an abandoned claim
 * comes due again by itself), and `claimed_due_at` = `next_attempt_at` as it was before this
 * UPDATE moved it (SET expressions read the old row on both databases), for the lag metric.
 */
export const leaseSet = (p: Mark) =>
  `"locked_by" = ${p()}, "locked_until" = ${p()}, "next_attempt_at" = ${p()}, "updated_at" = ${p()}, "claimed_due_at" = iw_deliveries.next_attempt_at`;
