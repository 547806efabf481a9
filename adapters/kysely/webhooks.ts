import type { Kysely, Transaction } from 'kysely';
import { LimitReachedError } from '../../src/errors.js';
import type { WebhookRecord } from '../../src/model.js';
import { SEALED_PREFIX } from '../../src/secrets/seal.js';
import type { WebhookPatch } from '../../src/store.js';
import { endQueues, isOrdered, leaveEnded, PER_SUBJECT, waitBehindHeads } from './ordering.js';
import { holdPending } from './outcomes.js';
import { endpointColumns, fromWebhook, jsonText, known, toWebhook } from './rows.js';
import type { EngineTables } from './schema.js';
import { commaJoined, precompiled, text } from './texts.js';

type Db = Kysely<EngineTables>;

/** What a webhook's writes ask of the dialect: the per-environment lock of the cap, and the wake-up hint. */
interface WebhookDialect {
  lockEnvironment(trx: Transaction<EngineTables>, environment: string): Promise<void>;
  notify?(db: Db): Promise<void>;
}

/*
 * A webhook's record: created under the plan's cap, read, listed, updated (compare-and-set on its
 * sealed columns), deleted with everything of its own, disabled (its pending deliveries held) and
 * enabled (its held ones resumed or dropped). The store's methods of the same names call these.
 */

export async function createWebhook(
  db: Db,
  dialect: Pick<WebhookDialect, 'lockEnvironment'>,
  record: WebhookRecord,
  { maxWebhooks }: { maxWebhooks: number | null },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (maxWebhooks !== null) {
      await dialect.lockEnvironment(trx, record.environment);
      const { n } = await trx
        .selectFrom('iw_webhooks')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('environment', '=', record.environment)
        .executeTakeFirstOrThrow();
      if (Number(n) >= maxWebhooks) throw new LimitReachedError(maxWebhooks, record.environment);
    }
    await trx.insertInto('iw_webhooks').values(fromWebhook(record)).execute();
  });
}

export async function getWebhook(db: Db, environment: string, id: string): Promise<WebhookRecord | null> {
  if (!known(environment, id)) return null;
  const row = await db.selectFrom('iw_webhooks').selectAll().where('environment', '=', environment).where('id', '=', id).executeTakeFirst();
  return row ? toWebhook(row) : null;
}

export async function listWebhooks(db: Db, environment: string): Promise<WebhookRecord[]> {
  if (!known(environment)) return [];
  const rows = await db
    .selectFrom('iw_webhooks')
    .selectAll()
    .where('environment', '=', environment)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toWebhook);
}

export async function listWebhookIds(db: Db, environment: string): Promise<string[]> {
  if (!known(environment)) return [];
  const { run, texts } = precompiled(db);
  // One row, the ids as one text (the engine's ids hold no `,`): the list's stats ask for
  // every webhook of the environment, and the drivers' cost is per row.
  const statement = text(
    texts,
    'webhook ids',
    (p) => `select ${commaJoined(texts, '"id"', '"created_at", "id"')} as "ids" from "iw_webhooks" where "environment" = ${p()}`,
  );
  const [row] = await run<{ ids: string | null }>(statement, [environment]);
  return row?.ids ? row.ids.split(',') : [];
}

export async function updateWebhook(
  db: Db,
  dialect: Pick<WebhookDialect, 'notify'>,
  environment: string,
  id: string,
  patch: WebhookPatch,
  now: number,
): Promise<WebhookRecord | null> {
  if (!known(environment, id)) return null;
  const set: Partial<EngineTables['iw_webhooks']> = { updated_at: now };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.endpoint !== undefined) set.endpoint = patch.endpoint;
  if (patch.eventTypes !== undefined) set.event_types = JSON.stringify(patch.eventTypes);
  Object.assign(set, endpointColumns(patch));
  // Signing formats and endpoint auth: sealed by the management functions.
  if (patch.format !== undefined) set.format = patch.format;
  if (patch.signing !== undefined) set.signing = jsonText(patch.signing);
  if (patch.auth !== undefined) set.auth = jsonText(patch.auth);
  if (patch.ordering !== undefined) set.ordering = patch.ordering === 'per-subject' ? PER_SUBJECT : null;
  const update = (db: Db) => {
    let query = db.updateTable('iw_webhooks').set(set).where('environment', '=', environment).where('id', '=', id);
    if (patch.expect) {
      // The texts as written (no headers is null, as `endpointColumns` writes it).
      const { signing, auth, headers } = patch.expect;
      const texts = {
        signing: jsonText(signing),
        auth: jsonText(auth),
        headers: jsonText(Object.keys(headers ?? {}).length ? headers : null),
      };
      for (const [column, text] of Object.entries(texts) as Array<[keyof typeof texts, string | null]>)
        query = text === null ? query.where(column, 'is', null) : query.where(column, '=', text);
    }
    return query.returningAll().executeTakeFirst();
  };
  if (patch.ordering !== 'none') {
    const row = await update(db);
    return row ? toWebhook(row) : null;
  }
  // No longer ordered: what waited in its subjects' queues becomes due, in the same transaction.
  return db.transaction().execute(async (trx) => {
    const row = await update(trx);
    if (!row) return null;
    await endQueues(trx, id, now);
    await dialect.notify?.(trx);
    return toWebhook(row);
  });
}

export async function listWebhooksWithSecrets(db: Db, after: string | null, limit: number): Promise<WebhookRecord[]> {
  let query = db
    .selectFrom('iw_webhooks')
    .selectAll()
    .where((eb) => eb.or([eb('signing', 'is not', null), eb('auth', 'is not', null), eb('headers', 'like', `%"${SEALED_PREFIX}%`)]));
  if (after !== null) query = query.where('id', '>', after);
  return (await query.orderBy('id').limit(limit).execute()).map(toWebhook);
}

export async function deleteWebhook(db: Db, environment: string, id: string): Promise<boolean> {
  if (!known(environment, id)) return false;
  return db.transaction().execute(async (trx) => {
    const gone = await trx.deleteFrom('iw_webhooks').where('environment', '=', environment).where('id', '=', id).executeTakeFirst();
    if (Number(gone.numDeletedRows) === 0) return false;
    // Through the webhook's deliveries: attempts have no index by webhook (migration 6).
    await trx
      .deleteFrom('iw_attempts')
      .where('delivery_id', 'in', (eb) => eb.selectFrom('iw_deliveries').select('id').where('webhook_id', '=', id))
      .execute();
    await trx.deleteFrom('iw_deliveries').where('webhook_id', '=', id).execute();
    await trx.deleteFrom('iw_webhook_hours').where('webhook_id', '=', id).execute();
    await trx.deleteFrom('iw_ordered').where('webhook_id', '=', id).execute();
    return true;
  });
}

export async function disableWebhook(db: Db, environment: string, id: string, reason: string, now: number): Promise<WebhookRecord | null> {
  if (!known(environment, id)) return null;
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('iw_webhooks')
      .set({ status: 'disabled', disabled_reason: reason, disabled_at: now, updated_at: now })
      .where('environment', '=', environment)
      .where('id', '=', id)
      .where('status', '=', 'enabled')
      .returningAll()
      .executeTakeFirst();
    // Not enabled (already disabled) or not there: the record as it is, or null.
    if (!row) return getWebhook(trx, environment, id);
    await holdPending(trx, id, now);
    return toWebhook(row);
  });
}

export async function enableWebhook(
  db: Db,
  dialect: Pick<WebhookDialect, 'notify'>,
  environment: string,
  id: string,
  now: number,
  resumeHeld: boolean,
): Promise<WebhookRecord | null> {
  if (!known(environment, id)) return null;
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('iw_webhooks')
      .set({ status: 'enabled', disabled_reason: null, disabled_at: null, failing_since: null, updated_at: now })
      .where('environment', '=', environment)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (!row) return null;
    const [moved] = await trx
      .updateTable('iw_deliveries')
      .set(
        resumeHeld
          ? { status: 'pending', next_attempt_at: now, updated_at: now }
          : { status: 'failed', next_attempt_at: null, last_result: 'dropped', updated_at: now },
      )
      .where('webhook_id', '=', id)
      .where('status', '=', 'held')
      .execute();
    // Ordered per subject: resumed, only the first of each subject's queue is due; dropped, the queues end.
    if (Number(moved?.numUpdatedRows ?? 0) > 0 && resumeHeld && isOrdered(row)) await waitBehindHeads(trx, id);
    if (Number(moved?.numUpdatedRows ?? 0) > 0 && !resumeHeld) await leaveEnded(trx, id);
    if (resumeHeld && Number(moved?.numUpdatedRows ?? 0) > 0) await dialect.notify?.(trx);
    return toWebhook(row);
  });
}
