import { sql, type Transaction } from 'kysely';
import { hourOf } from '../../src/stats.js';
import type { PurgeArgs, PurgeCounts } from '../../src/store.js';
import type { EngineTables } from './schema.js';

type Trx = Transaction<EngineTables>;

/**
 * Retention, one bounded step per transaction so a host's emit never waits long behind it. Each
 * step reads its rows from an index, oldest first, `limit` at a time:
 *
 * 1. held deliveries of a webhook disabled before the cutoff fail as `expired` (and are purged
 *    one period later, like any finished delivery);
 * 2. delivered and failed deliveries untouched since the cutoff go, with their attempts (at most
 *    `limit` deliveries and, by their attempt counts, about `limit` attempts);
 * 3. events older than the cutoff with no delivery left go: with their last delivery in step 2,
 *    or (those that never had one) from a window of the oldest (a pending delivery keeps its event);
 * 4. sent notices older than the cutoff go;
 * 5. hourly counters (`iw_webhook_hours`) of hours that ended before the cutoff go, oldest first
 *    (read from the index on their hour, migration 22);
 * 6. the packs of those hours (`iw_hour_packs`, by its index on the hour, migration 24) go with them.
 */
export const PURGE_STEPS = ['expired', 'deliveries', 'events', 'notices', 'hours', 'packs'] as const;

export async function purgeStep(trx: Trx, step: (typeof PURGE_STEPS)[number], { cutoff, now, limit }: PurgeArgs): Promise<number> {
  switch (step) {
    case 'expired': {
      const held = (
        await trx
          .selectFrom('iw_deliveries as d')
          .innerJoin('iw_webhooks as w', 'w.id', 'd.webhook_id')
          .select('d.id')
          .where('w.status', '=', sql.lit('disabled'))
          .where('w.disabled_at', '<', cutoff)
          .where('d.status', '=', sql.lit('held'))
          .limit(limit)
          .execute()
      ).map((r) => r.id);
      if (held.length === 0) return 0;
      const done = await trx
        .updateTable('iw_deliveries')
        .set({ status: 'failed', next_attempt_at: null, last_result: 'expired', updated_at: now })
        .where('id', 'in', held)
        .where('status', '=', sql.lit('held'))
        .executeTakeFirst();
      // Ordered per subject: they leave their queues (all of a queue is held: nothing becomes due).
      await trx.updateTable('iw_ordered').set({ seq: null }).where('delivery_id', 'in', held).where('seq', 'is not', null).execute();
      return Number(done.numUpdatedRows);
    }
    case 'deliveries': {
      const old = await trx
        .selectFrom('iw_deliveries')
        .select(['id', 'event_id', 'attempt_count'])
        .where(sql<boolean>`status in ('delivered', 'failed')`)
        .where('updated_at', '<', cutoff)
        .orderBy('updated_at')
        .limit(limit)
        .execute();
      if (old.length === 0) return 0;
      // The attempts go in the same transaction: a failed delivery has one per try of the
      // back-off (15 by default), so take only as many deliveries as keep the attempts within
      // `limit` too (at least one delivery, so a round always makes progress).
      const ids: string[] = [];
      const events = new Set<string>();
      let attempts = 0;
      for (const r of old) {
        attempts += Number(r.attempt_count);
        if (ids.length > 0 && attempts > limit) break;
        ids.push(r.id);
        events.add(r.event_id);
      }
      await trx.deleteFrom('iw_attempts').where('delivery_id', 'in', ids).execute();
      await trx.deleteFrom('iw_ordered').where('delivery_id', 'in', ids).execute();
      const gone = await trx.deleteFrom('iw_deliveries').where('id', 'in', ids).executeTakeFirst();
      // Their events go with the last of their deliveries (found by key, at most one per
      // delivery), so the events step never has to look for them behind events still in use.
      await trx
        .deleteFrom('iw_events')
        .where('id', 'in', [...events])
        .where('created_at', '<', cutoff)
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('iw_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'iw_events.id'))),
        )
        .execute();
      return Number(gone.numDeletedRows);
    }
    case 'events': {
      // Events that never had a delivery, or lost theirs otherwise (a webhook deleted). Only the
      // `limit` oldest old events are looked at: a scan "until `limit` are found" would read past
      // every old event that still has a delivery (during a catch-up, all of them: 1.5 million
      // buffers for a million old deliveries). Events still in use at the head of the window hold
      // back only these orphans, until their deliveries go.
      const window = trx
        .selectFrom('iw_events')
        .select(['id', 'created_at'])
        .where('created_at', '<', cutoff)
        .orderBy('created_at')
        .limit(limit)
        .as('e');
      const old = await trx
        .selectFrom(window)
        .select('e.id')
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('iw_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'e.id'))),
        )
        .execute();
      if (old.length === 0) return 0;
      const gone = await trx
        .deleteFrom('iw_events')
        .where(
          'id',
          'in',
          old.map((r) => r.id),
        )
        .executeTakeFirst();
      return Number(gone.numDeletedRows);
    }
    case 'notices': {
      const old = trx
        .selectFrom('iw_notices')
        .select('id')
        .where('status', '=', sql.lit('sent'))
        .where('created_at', '<', cutoff)
        .limit(limit);
      const gone = await trx.deleteFrom('iw_notices').where('id', 'in', old).executeTakeFirst();
      return Number(gone.numDeletedRows);
    }
    case 'hours': {
      // An hour that began before the cutoff's own hour ended by the cutoff; that hour stays.
      const old = trx
        .selectFrom('iw_webhook_hours')
        .select(['webhook_id', 'hour'])
        .where('hour', '<', hourOf(cutoff))
        .orderBy('hour')
        .limit(limit);
      const gone = await trx
        .deleteFrom('iw_webhook_hours')
        .where(({ eb, refTuple }) => eb(refTuple('webhook_id', 'hour'), 'in', old.$asTuple('webhook_id', 'hour')))
        .executeTakeFirst();
      return Number(gone.numDeletedRows);
    }
    case 'packs': {
      const old = trx
        .selectFrom('iw_hour_packs')
        .select(['environment', 'hour'])
        .where('hour', '<', hourOf(cutoff))
        .orderBy('hour')
        .limit(limit);
      const gone = await trx
        .deleteFrom('iw_hour_packs')
        .where(({ eb, refTuple }) => eb(refTuple('environment', 'hour'), 'in', old.$asTuple('environment', 'hour')))
        .executeTakeFirst();
      return Number(gone.numDeletedRows);
    }
  }
}

export function emptyCounts(): PurgeCounts {
  return { expired: 0, deliveries: 0, events: 0, notices: 0, hours: 0, packs: 0 };
}
