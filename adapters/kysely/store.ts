import { type Kysely, sql, type Transaction } from 'kysely';
import type { DashboardGrantRecord, DeliveryRecord, EventRecord, NoticeRecord, WebhookRecord } from '../../src/model.js';
import type {
  ClaimArgs,
  Claimed,
  DeliveryFilter,
  InsertEventOptions,
  NoticeClaimArgs,
  NoticeOutcome,
  PurgeArgs,
  PurgeCounts,
  RecordAttemptArgs,
  RecordResult,
  Store,
  WebhookPatch,
} from '../../src/store.js';
import { claimDue, earliest } from './claim.js';
import { getSession, insertGrant, redeemLink } from './dashboard-grants.js';
import { NEXT_DELIVERY, NEXT_NOTICE } from './due.js';
import { asHostTransaction, insertEvent } from './emit.js';
import { readCounts, readHours } from './hours.js';
import { countWaiting, listPage, recoverBatch, resend, sendWaitingBatch } from './log.js';
import { runMigrations, type StoredFunction } from './migrations.js';
import { claimNotices, finishNotice, listNotices } from './notices.js';
import { recordOutcomes } from './outcomes.js';
import { disableGone, paceWebhook } from './pace.js';
import { lastPackedHour, packHours } from './packs.js';
import { emptyCounts, PURGE_STEPS, purgeStep } from './retention.js';
import { known, toAttempt, toDelivery, toEvent } from './rows.js';
import type { ClaimRow, EngineTables } from './schema.js';
import { searchEvents, summarizeEvents } from './subjects.js';
import { countDueQuery } from './telemetry.js';
import { precompiled } from './texts.js';
import * as webhooks from './webhooks.js';

type Db = Kysely<EngineTables>;

/**
 * A dialect: what differs between the SQL databases; everything else is shared SQL in
 * {@link KyselyStore}. (Kysely's own `Dialect`, its driver for a database, is one part of it.)
 */
export interface StoreDialect {
  name: 'sqlite' | 'postgres';
  /**
   * The claim, as one atomic statement returning the claimed rows, with each row's webhook and
   * event when the dialect reads them in the same statement (else the store reads them after).
   */
  claim(db: Db, args: ClaimArgs): Promise<ClaimRow[]>;
  /** Serialises webhook creation per environment (for the cap) inside `trx`. */
  lockEnvironment(trx: Transaction<EngineTables>, environment: string): Promise<void>;
  /** Row locks for read-modify-write (PostgreSQL); SQLite's write lock already covers it. */
  rowLocks: boolean;
  /**
   * Runs migrations under whatever cross-process guard the database offers. `run` migrates through
   * the Kysely it is given, or the store's own when omitted.
   */
  migrate(db: Db, run: (on?: Db) => Promise<unknown>): Promise<void>;
  /** Optional: taken first in each migration's transaction (PostgreSQL: a transaction-level advisory lock). */
  migrationGuard?(trx: Db): Promise<void>;
  /** Optional: PostgreSQL's stored functions, applied by the migration whenever their text changes. */
  storedFunctions?: readonly StoredFunction[];
  /**
   * Optional: tells other processes that work may be due. Runs inside the writing transaction, so
   * the hint goes out when (and only if) it commits, including a host's own transaction. `from`:
   * the worker whose own outcome made it due; its loop claims that anyway, so its own listener
   * skips the hint (see {@link Store.subscribe}).
   */
  notify?(db: Db, from?: string): Promise<void>;
  /**
   * Optional: `insertEvent` (not a test event's) as one atomic statement on `db` (the store's own
   * Kysely or the host's transaction), hint included; see `adapters/postgres/emit.ts`.
   */
  insertEvent?(db: Db, event: EventRecord, options: InsertEventOptions<HostTransaction>): Promise<DeliveryRecord[]>;
  /**
   * Optional: `recordAttempts` for a group that `takes` (successes only, say) as one atomic
   * statement on the store's own Kysely; see `adapters/postgres/record.ts`.
   */
  recordGroup?: {
    takes(batch: readonly RecordAttemptArgs[]): boolean;
    record(db: Db, batch: readonly RecordAttemptArgs[]): Promise<RecordResult[]>;
    /** True when `record` also moves the subjects' queues of ordered outcomes (kysely/ordering.ts) in its own transaction or statement. */
    orders?: boolean;
  };
  /** Optional: listens for those hints; see {@link Store.subscribe}. */
  subscribe?(onWake: () => void, self?: string): Promise<() => Promise<void>>;
  /** Releases what the adapter opened. */
  close(): Promise<void>;
  /** Classifies this database's errors for transient retries (see {@link Store.isTransient}). */
  isTransient(error: unknown): boolean;
  /** Inside a purge transaction: may this process purge now? (PostgreSQL: one process at a time.) */
  tryLockRetention?(trx: Transaction<EngineTables>): Promise<boolean>;
}

/**
 * A host transaction `emit` can join: the host's own Kysely (or a transaction of it) on the same
 * database. Its table types are the host's, hence `any`.
 */
export type HostTransaction = Kysely<any> | Transaction<any>;

const PENDING = sql.lit('pending');

/**
 * `nextDueAt` in one statement and one round trip (it ends every idle pass): the head of the
 * deliveries' partial due index, and the earliest pending notice (PostgreSQL reads the head of
 * `iw_notices_due`; SQLite prefers the `(status, created_at)` index, fine for the handful of
 * notices ever pending). No parameters; the deliveries' head skips leased rows
 * (`NEXT_DELIVERY` in due.ts).
 */
export const NEXT_DUE_SQL = `select ${NEXT_DELIVERY} as "delivery", ${NEXT_NOTICE} as "notice"`;

/** The store contract implemented once over Kysely, for every SQL dialect. */
export class KyselyStore implements Store<HostTransaction> {
  /**
   * The store's own Kysely instance. Hosts without a Kysely of their own on this database can use
   * it for transactional emit: `store.kysely.transaction().execute(trx => hooks.emit(ev, { transaction: trx }))`.
   */
  readonly kysely: Db;

  /** Present only when the dialect can hear other processes (PostgreSQL LISTEN/NOTIFY). */
  readonly subscribe?: (onWake: () => void, self?: string) => Promise<() => Promise<void>>;

  constructor(
    private readonly db: Db,
    private readonly dialect: StoreDialect,
  ) {
    this.kysely = db;
    if (dialect.subscribe) this.subscribe = dialect.subscribe.bind(dialect);
  }

  async migrate(now: number): Promise<void> {
    await this.dialect.migrate(this.db, (on = this.db) =>
      runMigrations(on, this.dialect.name, now, { guard: this.dialect.migrationGuard, functions: this.dialect.storedFunctions }),
    );
  }

  async close(): Promise<void> {
    await this.dialect.close();
  }

  isTransient(error: unknown): boolean {
    return this.dialect.isTransient(error);
  }

  createWebhook(record: WebhookRecord, options: { maxWebhooks: number | null }): Promise<void> {
    return webhooks.createWebhook(this.db, this.dialect, record, options);
  }

  getWebhook(environment: string, id: string): Promise<WebhookRecord | null> {
    return webhooks.getWebhook(this.db, environment, id);
  }

  listWebhooks(environment: string): Promise<WebhookRecord[]> {
    return webhooks.listWebhooks(this.db, environment);
  }

  listWebhookIds(environment: string): Promise<string[]> {
    return webhooks.listWebhookIds(this.db, environment);
  }

  updateWebhook(environment: string, id: string, patch: WebhookPatch, now: number): Promise<WebhookRecord | null> {
    return webhooks.updateWebhook(this.db, this.dialect, environment, id, patch, now);
  }

  listWebhooksWithSecrets(after: string | null, limit: number): Promise<WebhookRecord[]> {
    return webhooks.listWebhooksWithSecrets(this.db, after, limit);
  }

  deleteWebhook(environment: string, id: string): Promise<boolean> {
    return webhooks.deleteWebhook(this.db, environment, id);
  }

  disableWebhook(environment: string, id: string, reason: string, now: number): Promise<WebhookRecord | null> {
    return webhooks.disableWebhook(this.db, environment, id, reason, now);
  }

  enableWebhook(environment: string, id: string, now: number, resumeHeld: boolean): Promise<WebhookRecord | null> {
    return webhooks.enableWebhook(this.db, this.dialect, environment, id, now, resumeHeld);
  }

  async insertEvent(event: EventRecord, options: InsertEventOptions<HostTransaction>): Promise<DeliveryRecord[]> {
    const oneStatement = this.dialect.insertEvent;
    if (oneStatement && options.webhookIds === undefined) {
      const db = options.transaction !== undefined ? asHostTransaction(options.transaction) : this.db;
      return oneStatement(db, event, options);
    }
    if (options.transaction !== undefined) return insertEvent(asHostTransaction(options.transaction), this.dialect, event, options);
    return this.db.transaction().execute((trx) => insertEvent(trx, this.dialect, event, options));
  }

  async getEvent(environment: string, id: string): Promise<EventRecord | null> {
    if (!known(environment, id)) return null;
    const row = await this.db
      .selectFrom('iw_events')
      .selectAll()
      .where('environment', '=', environment)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toEvent(row) : null;
  }

  async listDeliveries(environment: string, filter: DeliveryFilter) {
    const ids = [filter.webhookId, filter.eventId, filter.deliveryId].filter((v): v is string => typeof v === 'string');
    if (!known(environment, ...ids)) return { deliveries: [], next: null };
    return listPage(this.db, environment, filter);
  }

  async resendDelivery(environment: string, id: string, now: number): Promise<DeliveryRecord | null> {
    if (!known(environment, id)) return null;
    return this.db.transaction().execute(async (trx) => {
      const delivery = await resend(trx, environment, id, now, this.dialect.rowLocks);
      if (delivery?.status === 'pending' && delivery.nextAttemptAt === now) await this.dialect.notify?.(trx);
      return delivery;
    });
  }

  async recoverFailed(environment: string, webhookId: string, args: Parameters<Store['recoverFailed']>[2]) {
    if (!known(environment, webhookId)) return null;
    return this.db.transaction().execute(async (trx) => {
      const result = await recoverBatch(trx, environment, webhookId, args, this.dialect.rowLocks);
      if (result && result.recovered > 0) await this.dialect.notify?.(trx);
      return result;
    });
  }

  async sendWaiting(environment: string, webhookId: string, args: { now: number; limit: number }) {
    if (!known(environment, webhookId)) return null;
    return this.db.transaction().execute(async (trx) => {
      const result = await sendWaitingBatch(trx, environment, webhookId, args, this.dialect.rowLocks);
      if (result && result.sent > 0) await this.dialect.notify?.(trx);
      return result;
    });
  }

  async countWaiting(environment: string, webhookId: string, now: number) {
    if (!known(environment, webhookId)) return null;
    const webhook = await this.db
      .selectFrom('iw_webhooks')
      .select('id')
      .where('environment', '=', environment)
      .where('id', '=', webhookId)
      .executeTakeFirst();
    return webhook ? countWaiting(this.db, webhookId, now) : null;
  }

  async searchEvents(environment: string, args: Parameters<Store['searchEvents']>[1]) {
    // A key the database could not store matches nothing (as it would not be found).
    if (!known(environment, args.key)) return { events: [], deliveries: [] };
    return searchEvents(this.db, environment, args);
  }

  summarizeEvents(environment: string, ids: readonly string[]) {
    return summarizeEvents(
      this.db,
      environment,
      ids.filter((id) => known(environment, id)),
    );
  }

  async getDelivery(environment: string, id: string): Promise<DeliveryRecord | null> {
    if (!known(environment, id)) return null;
    const row = await this.db
      .selectFrom('iw_deliveries')
      .selectAll()
      .where('environment', '=', environment)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toDelivery(row) : null;
  }

  async readHours(environment: string, args: Parameters<Store['readHours']>[1]) {
    if (args.webhookId !== undefined && !known(environment, args.webhookId)) return [];
    return readHours(this.db, environment, args);
  }

  async readCounts(environment: string, args: Parameters<Store['readCounts']>[1]) {
    return readCounts(this.db, environment, args);
  }

  async packHours(args: { since: number; until: number }): Promise<number> {
    return packHours(this.db, args);
  }

  async lastPackedHour(): Promise<number | null> {
    return lastPackedHour(this.db);
  }

  async listAttempts(environment: string, deliveryId: string) {
    if (!known(environment, deliveryId)) return [];
    const rows = await this.db
      .selectFrom('iw_attempts')
      .selectAll()
      .where('environment', '=', environment)
      .where('delivery_id', '=', deliveryId)
      .orderBy('seq')
      .execute();
    return rows.map(toAttempt);
  }

  claimDue(args: ClaimArgs): Promise<Claimed> {
    return claimDue(this.db, this.dialect, args);
  }

  paceWebhook(webhookId: string, slowDown: { deferUntil?: number; slowUntil?: number }): Promise<void> {
    return paceWebhook(this.db, webhookId, slowDown);
  }

  disableGone(webhookId: string, now: number): Promise<WebhookRecord | null> {
    return disableGone(this.db, webhookId, now);
  }

  async countDue(now: number): Promise<number> {
    const { n } = await countDueQuery(this.db, now).executeTakeFirstOrThrow();
    return Number(n);
  }

  async release(ids: string[], workerId: string, now: number): Promise<void> {
    if (ids.length === 0) return;
    const giveBack = (db: Db) =>
      db
        .updateTable('iw_deliveries')
        .set({ locked_by: null, locked_until: null, next_attempt_at: now, updated_at: now })
        .where('id', 'in', ids)
        .where('locked_by', '=', workerId)
        .where('status', '=', PENDING)
        .execute();
    const notify = this.dialect.notify;
    if (!notify) {
      await giveBack(this.db);
      return;
    }
    // Another process may have free slots for what this one gave back: tell it at once.
    await this.db.transaction().execute(async (trx) => {
      await giveBack(trx);
      await notify(trx);
    });
  }

  async recordAttempts(batch: readonly RecordAttemptArgs[]): Promise<RecordResult[]> {
    if (batch.length === 0) return [];
    const group = this.dialect.recordGroup;
    // An ordered webhook's outcome may end its subject's head, and the queue moves with it: a
    // group that does not move queues takes the shared path for ordered outcomes.
    if (group?.takes(batch) && (group.orders || !batch.some((b) => b.ordered))) return group.record(this.db, batch);
    return this.db.transaction().execute(async (trx) => {
      const results = await recordOutcomes(trx, batch, this.dialect.rowLocks);
      // Another process may have a free slot for what became due here.
      if (results.some((r) => r.released)) await this.dialect.notify?.(trx, batch[0]!.workerId);
      return results;
    });
  }

  async nextDueAt(): Promise<number | null> {
    const [row] = await precompiled(this.db).run<{ delivery: number | string | null; notice: number | string | null }>(NEXT_DUE_SQL, []);
    return earliest(row?.delivery, row?.notice);
  }

  async nextDueAfter(now: number): Promise<number | null> {
    const row = await this.db
      .selectFrom('iw_deliveries')
      .select('next_attempt_at')
      .where('status', '=', PENDING)
      .where('next_attempt_at', '>', now)
      .orderBy('next_attempt_at')
      .limit(1)
      .executeTakeFirst();
    return row?.next_attempt_at == null ? null : Number(row.next_attempt_at);
  }

  claimNotices(args: NoticeClaimArgs): Promise<NoticeRecord[]> {
    return claimNotices(this.db, args, this.dialect.rowLocks);
  }

  finishNotice(id: string, workerId: string, outcome: NoticeOutcome): Promise<boolean> {
    return finishNotice(this.db, id, workerId, outcome);
  }

  async listNotices(filter: Parameters<Store['listNotices']>[0]): Promise<NoticeRecord[]> {
    if (filter.environment !== undefined && !known(filter.environment)) return [];
    return listNotices(this.db, filter);
  }

  async purge(args: PurgeArgs): Promise<PurgeCounts | null> {
    const counts = emptyCounts();
    for (const step of PURGE_STEPS) {
      const n = await this.db.transaction().execute(async (trx) => {
        if (this.dialect.tryLockRetention && !(await this.dialect.tryLockRetention(trx))) return null;
        return purgeStep(trx, step, args);
      });
      if (n === null) return null;
      counts[step] = n;
    }
    return counts;
  }

  // Dashboard link access: adapters/kysely/dashboard-grants.ts.
  async insertDashboardGrant(grant: DashboardGrantRecord, now: number): Promise<void> {
    await insertGrant(this.db, grant, now);
  }

  async redeemDashboardLink(linkId: string, session: Pick<DashboardGrantRecord, 'id' | 'expiresAt'>, now: number) {
    if (!known(linkId, session.id)) return null;
    return redeemLink(this.db, linkId, session, now);
  }

  async getDashboardSession(id: string, now: number): Promise<DashboardGrantRecord | null> {
    if (!known(id)) return null;
    return getSession(this.db, id, now);
  }
}
