import type { NoticeRecord, NoticeStatus } from '../model.js';
import type { StoreErrors } from './store-errors.js';

/** What the chores call: the notices' outbox and retention. */
export interface NoticeStore extends StoreErrors {
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
