import { sql, type Transaction } from 'kysely';
import { tallyHours } from '../../src/stats.js';
import type { RecordAttemptArgs, RecordResult } from '../../src/store.js';
import { countHours } from './hours.js';
import { writeNotice } from './notices.js';
import { dequeue } from './ordering.js';
import { fromAttempt, toWebhook } from './rows.js';
import type { EngineTables } from './schema.js';
import { list, precompiled, type Texts, text } from './texts.js';

type Trx = Transaction<EngineTables>;
type Result = RecordResult;

/**
 * Store.recordAttempts inside the caller's transaction, set-based where it matters. The common
 * case, a group of successes, costs four statements whatever its size: read the deliveries (row
 * locks in id order on PostgreSQL), insert every attempt at once, mark the owned deliveries
 * delivered, clear the health of webhooks that were failing. Failures, and webhooks with both
 * outcomes in the group, go one by one in the order they started, because each may disable its
 * webhook.
 */
export async function recordOutcomes(trx: Trx, batch: readonly RecordAttemptArgs[], rowLocks: boolean): Promise<Result[]> {
  const results: Result[] = batch.map(() => ({ disabled: null }));
  const { run, texts } = precompiled(trx);
  const ids = [...new Set(batch.map((b) => b.attempt.deliveryId))];
  const deliveries = new Map((await run<DeliveryRead>(readDeliveries(texts, ids.length, rowLocks), ids)).map((d) => [d.id, d]));
  // A delivery deleted while its request was in flight (its webhook was deleted): drop quietly.
  const present = batch.map((args, i) => ({ args, i })).filter(({ args }) => deliveries.has(args.attempt.deliveryId));
  if (present.length === 0) return results;

  // Idempotent by attempt id: a transient retry after a commit whose reply was lost inserts nothing
  // again.
  const rows = present.map(({ args }) => fromAttempt(args.attempt));
  const inserted = new Set(
    (
      await run<{ id: string }>(
        insertAttempts(texts, rows.length),
        rows.flatMap((r) => ATTEMPT_COLUMNS.map((c) => r[c])),
      )
    ).map((r) => r.id),
  );
  const fresh = present.filter(({ args }) => inserted.has(args.attempt.id));
  // The dashboard's hourly counters, for the attempts written now only (one statement: hours.ts).
  await countHours(run, texts, tallyHours(fresh.map(({ args }) => args.attempt)));
  for (const { args, i } of present) if (!inserted.has(args.attempt.id)) results[i] = await sameAnswer(trx, args);

  const failing = new Set(fresh.filter(({ args }) => !args.attempt.success).map(({ args }) => args.attempt.webhookId));
  const quick = fresh.filter(({ args }) => args.attempt.success && !failing.has(args.attempt.webhookId));
  const slow = fresh.filter((f) => !quick.includes(f)).sort((a, b) => a.args.attempt.startedAt - b.args.attempt.startedAt);

  const owned = quick.filter(({ args }) => owns(deliveries.get(args.attempt.deliveryId)!, args));
  if (owned.length > 0) {
    const { now } = owned[0]!.args;
    const attempts = owned.map(({ args }) => args.attempt);
    await run(markDelivered(texts, attempts.length), [
      ...attempts.flatMap((a) => [a.deliveryId, a.startedAt]),
      ...attempts.flatMap((a) => [a.deliveryId, String(a.statusCode)]),
      now,
      ...attempts.map((a) => a.deliveryId),
    ]);
    for (const a of attempts) deliveries.get(a.deliveryId)!.status = 'delivered';
  }
  if (quick.length > 0) {
    // Only a webhook that was failing needs the write: every success of a healthy webhook
    // rewriting its row would queue all workers on one row lock.
    const webhookIds = [...new Set(quick.map(({ args }) => args.attempt.webhookId))];
    await run(clearHealth(texts, webhookIds.length), webhookIds);
  }
  for (const { args, i } of slow) results[i] = await applyOne(trx, args, deliveries.get(args.attempt.deliveryId)!);
  // Ordered per subject: deliveries that ended here leave their subjects' queues, and the next in
  // each becomes due (adapters/kysely/ordering.ts). Only for ordered webhooks' outcomes.
  const ended = fresh.filter(({ args }) => args.ordered && ENDED.has(deliveries.get(args.attempt.deliveryId)!.status));
  if (ended.length > 0) {
    const released = await dequeue(
      trx,
      ended.map(({ args }) => args.attempt.deliveryId),
      ended[0]!.args.now,
      rowLocks,
    );
    if (released) for (const { i } of ended) results[i] = { disabled: results[i]!.disabled, released: true };
  }
  return results;
}

const ENDED = new Set(['delivered', 'failed']);

/**
 * Whether a group can take an adapter's own path for successes (`recordGroup`: one statement on
 * PostgreSQL, one transaction of row statements on SQLite): successes only, from one worker.
 */
export function onlySuccesses(batch: readonly RecordAttemptArgs[]): boolean {
  const workerId = batch[0]?.workerId;
  return batch.length > 0 && batch.every((b) => b.attempt.success && b.workerId === workerId);
}

/* The common case's four statements, precompiled (see `texts.ts`). */

type DeliveryRead = DeliveryState & { id: string };

const readDeliveries = (texts: Texts, n: number, rowLocks: boolean) =>
  text(texts, `read ${n} ${rowLocks}`, (p) => {
    const ids = list(n, p);
    return `select "id", "status", "locked_by", "locked_until", "attempt_count" from "iw_deliveries" where "id" in (${ids}) order by "id"${rowLocks ? ' for update' : ''}`;
  });

const ATTEMPT_COLUMNS = [
  'id',
  'delivery_id',
  'webhook_id',
  'environment',
  'started_at',
  'duration_ms',
  'status_code',
  'error_kind',
  'error_message',
  'response_excerpt',
  'success',
] as const;

const insertAttempts = (texts: Texts, n: number) =>
  text(texts, `insert ${n}`, (p) => {
    const values = Array.from({ length: n }, () => `(${list(ATTEMPT_COLUMNS.length, p)})`).join(', ');
    const columns = ATTEMPT_COLUMNS.map((c) => `"${c}"`).join(', ');
    return `insert into "iw_attempts" (${columns}) values ${values} on conflict ("id") do nothing returning "id"`;
  });

/** Parameters: (delivery id, started at) × n, (delivery id, result) × n, now, delivery id × n. */
const markDelivered = (texts: Texts, n: number) =>
  text(texts, `delivered ${n}`, (p) => {
    const at = Array.from({ length: n }, () => `when ${p()} then cast(${p()} as bigint)`).join(' ');
    const result = Array.from({ length: n }, () => `when ${p()} then ${p()}`).join(' ');
    return (
      `update "iw_deliveries" set "status" = 'delivered', "next_attempt_at" = null, "attempt_count" = attempt_count + 1, ` +
      `"locked_by" = null, "locked_until" = null, "last_attempt_at" = case id ${at} end, "last_result" = case id ${result} end, ` +
      `"last_error" = null, "updated_at" = ${p()} where "id" in (${list(n, p)})`
    );
  });

const clearHealth = (texts: Texts, n: number) =>
  text(
    texts,
    `health ${n}`,
    (p) =>
      `update "iw_webhooks" set "failing_since" = null, "last_error" = null where "id" in (${list(n, p)}) ` +
      `and ("failing_since" is not null or "last_error" is not null)`,
  );

interface DeliveryState {
  status: string;
  locked_by: string | null;
  locked_until: number | string | null;
  attempt_count: number;
}

/**
 * Whether this outcome may change the delivery: the row still carries the worker's id and, when
 * the caller names it, the lease the attempt was claimed under (nobody claimed it since; its
 * having run out does not matter), and it is still pending or held.
 */
const owns = (d: DeliveryState, { workerId, leaseUntil }: Pick<RecordAttemptArgs, 'workerId' | 'leaseUntil'>) =>
  d.locked_by === workerId &&
  (leaseUntil === undefined || (d.locked_until !== null && Number(d.locked_until) === leaseUntil)) &&
  (d.status === 'pending' || d.status === 'held');

/** One outcome's consequences, the attempt row already written. */
async function applyOne(trx: Trx, args: RecordAttemptArgs, delivery: DeliveryState): Promise<Result> {
  const { attempt, now, nextAttemptAt, disableAfterMs } = args;
  const result = attempt.statusCode !== null ? String(attempt.statusCode) : (attempt.errorKind ?? 'error');
  const lastError = attempt.success ? null : describeFailure(attempt);
  if (owns(delivery, args)) {
    const status = attempt.success ? 'delivered' : delivery.status === 'held' ? 'held' : nextAttemptAt === null ? 'failed' : 'pending';
    await trx
      .updateTable('iw_deliveries')
      .set({
        status,
        next_attempt_at: status === 'pending' ? nextAttemptAt : null,
        attempt_count: Number(delivery.attempt_count) + 1,
        locked_by: null,
        locked_until: null,
        last_attempt_at: attempt.startedAt,
        last_result: result,
        last_error: lastError,
        updated_at: now,
      })
      .where('id', '=', attempt.deliveryId)
      .execute();
    // Later items of the same group see this delivery as it now is.
    Object.assign(delivery, { status, locked_by: null, locked_until: null, attempt_count: Number(delivery.attempt_count) + 1 });
  }
  // Our own failure (`internal`: a bug in the engine, not the endpoint) says nothing about the
  // endpoint's health: it never starts or extends failing_since, so it can never disable it.
  if (!attempt.success && attempt.errorKind === 'internal') return { disabled: null };
  if (attempt.success) {
    await trx
      .updateTable('iw_webhooks')
      .set({ failing_since: null, last_error: null })
      .where('id', '=', attempt.webhookId)
      .where((eb) => eb.or([eb('failing_since', 'is not', null), eb('last_error', 'is not', null)]))
      .execute();
    return { disabled: null };
  }
  await trx
    .updateTable('iw_webhooks')
    .set({ failing_since: sql`coalesce(failing_since, ${attempt.startedAt})`, last_error: lastError })
    .where('id', '=', attempt.webhookId)
    .execute();
  const disabled = await trx
    .updateTable('iw_webhooks')
    .set({ status: 'disabled', disabled_reason: 'failing', disabled_at: now, updated_at: now })
    .where('id', '=', attempt.webhookId)
    .where('status', '=', 'enabled')
    .where('failing_since', '<=', now - disableAfterMs)
    .returningAll()
    .executeTakeFirst();
  if (!disabled) return { disabled: null };
  await holdPending(trx, attempt.webhookId, now);
  const webhook = toWebhook(disabled);
  // The notice commits with the disable: telling the account holder is as durable as disabling.
  await writeNotice(trx, webhook, now);
  return { disabled: webhook };
}

/** A repeated record answers as the first did: the disable it made (at this same `now`), if any. */
async function sameAnswer(trx: Trx, { attempt, now }: RecordAttemptArgs): Promise<Result> {
  const again = await trx
    .selectFrom('iw_webhooks')
    .selectAll()
    .where('id', '=', attempt.webhookId)
    .where('status', '=', 'disabled')
    .where('disabled_reason', '=', 'failing')
    .where('disabled_at', '=', now)
    .executeTakeFirst();
  return { disabled: again ? toWebhook(again) : null };
}

/** Pending deliveries of a disabled webhook wait, untouched, until it is enabled again. */
export async function holdPending(trx: Trx, webhookId: string, now: number): Promise<void> {
  await trx
    .updateTable('iw_deliveries')
    .set({ status: 'held', next_attempt_at: null, updated_at: now })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', sql.lit('pending'))
    .execute();
}

/**
 * A failed attempt in one line for the webhook and delivery records: the attempt's own message
 * when it got an answer (`expected HTTP 200, got 204: <start of the body>`), else the kind first
 * (`timeout: no complete answer within …`).
 */
function describeFailure(attempt: RecordAttemptArgs['attempt']): string {
  const message = attempt.errorMessage ?? `HTTP ${attempt.statusCode ?? '?'}`;
  const text = attempt.statusCode !== null ? message : `${attempt.errorKind ?? 'error'}: ${message}`;
  return text.slice(0, 500);
}
