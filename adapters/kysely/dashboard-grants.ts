import type { Kysely } from 'kysely';
import type { DashboardGrantRecord } from '../../src/model.js';
import type { DashboardGrantRow, EngineTables } from './schema.js';

type Db = Kysely<EngineTables>;

/** Expired grants deleted per mint: bounded, so a mint never waits on a large clean-up. */
const SWEEP = 100;

/**
 * Dashboard link access (migration 20): links and sessions by the hash of their token. Every read
 * names the hash and `now`, so an expired or used grant is never returned, whatever is left in
 * the table; each mint also deletes a bounded batch of expired ones.
 */
export async function insertGrant(db: Db, grant: DashboardGrantRecord, now: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const stale = trx.selectFrom('iw_dashboard_grants').select('id').where('expires_at', '<=', now).orderBy('expires_at').limit(SWEEP);
    await trx.deleteFrom('iw_dashboard_grants').where('id', 'in', stale).execute();
    await trx.insertInto('iw_dashboard_grants').values(toRow(grant)).execute();
  });
}

export async function redeemLink(
  db: Db,
  linkId: string,
  session: Pick<DashboardGrantRecord, 'id' | 'expiresAt'>,
  now: number,
): Promise<DashboardGrantRecord | null> {
  return db.transaction().execute(async (trx) => {
    // One statement decides: of two openings of the same link at once, one updates the row and
    // the other finds it used (PostgreSQL's row lock, SQLite's write lock).
    const link = await trx
      .updateTable('iw_dashboard_grants')
      .set({ used_at: now })
      .where('id', '=', linkId)
      .where('kind', '=', 'link')
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
    if (!link) return null;
    const started: DashboardGrantRecord = {
      id: session.id,
      kind: 'session',
      environment: link.environment,
      capability: link.capability === 'read' ? 'read' : 'manage',
      next: null,
      expiresAt: session.expiresAt,
      usedAt: null,
      createdAt: now,
    };
    await trx.insertInto('iw_dashboard_grants').values(toRow(started)).execute();
    // The link's deep link goes back to the caller with the session it started.
    return { ...started, next: link.next };
  });
}

export async function getSession(db: Db, id: string, now: number): Promise<DashboardGrantRecord | null> {
  const row = await db
    .selectFrom('iw_dashboard_grants')
    .selectAll()
    .where('id', '=', id)
    .where('kind', '=', 'session')
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row ? fromRow(row) : null;
}

function toRow(g: DashboardGrantRecord): DashboardGrantRow {
  return {
    id: g.id,
    kind: g.kind,
    environment: g.environment,
    capability: g.capability,
    next: g.next,
    expires_at: g.expiresAt,
    used_at: g.usedAt,
    created_at: g.createdAt,
  };
}

function fromRow(r: DashboardGrantRow): DashboardGrantRecord {
  return {
    id: r.id,
    kind: r.kind === 'link' ? 'link' : 'session',
    environment: r.environment,
    capability: r.capability === 'read' ? 'read' : 'manage',
    next: r.next,
    expiresAt: Number(r.expires_at),
    usedAt: r.used_at == null ? null : Number(r.used_at),
    createdAt: Number(r.created_at),
  };
}
