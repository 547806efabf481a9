import type { DeliveryStore } from './store/delivery-store.js';
import type { NoticeStore } from './store/notice-store.js';
import type { StatsStore } from './store/stats-store.js';
import type { WebhookStore } from './store/webhook-store.js';

export type { ClaimArgs, Claimed, DeliveryStore, InsertEventOptions, RecordAttemptArgs, RecordResult } from './store/delivery-store.js';
export type { NoticeClaimArgs, NoticeOutcome, NoticeStore, PurgeArgs, PurgeCounts } from './store/notice-store.js';
export type { StatsStore } from './store/stats-store.js';
export type { StoreErrors } from './store/store-errors.js';
export type { DeliveryCursor, DeliveryFilter, EventCursor, WebhookPatch, WebhookStore } from './store/webhook-store.js';

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
export interface Store<Tx = unknown> extends DeliveryStore<Tx>, WebhookStore, NoticeStore, StatsStore {
  /** Creates or upgrades the tables. Idempotent; safe when several processes call it at once. */
  migrate(now: number): Promise<void>;
  /** Releases what the store opened itself (not a pool or database the host passed in). */
  close(): Promise<void>;
}
