import type { Kysely } from 'kysely';
import { DURATION_BUCKETS, HOUR_MS, type HourCounts, type HourRecord, type HourTally } from '../../src/stats.js';
import { countedPacks, hourFrom, numbersOf, type Packs, readPacks, unpack } from './packs.js';
import type { EngineTables } from './schema.js';
import { commaJoined, list, precompiled, type Run, type Texts, text } from './texts.js';

/**
 * The hourly counters (`iw_webhook_hours`, migration 19): added to in the transaction that records
 * attempts, read by the dashboard's stats. Every writer adds whole tallies (`tallyHours` in
 * src/stats.ts, one per webhook and hour, sorted), so a group costs one statement here (the
 * shared path, `outcomes.ts`), one row statement per tally on SQLite (`sqlite/record.ts`) and a
 * call in PostgreSQL's one statement (`postgres/record.ts`: migration 23's `iw_tally`, the same
 * sums in SQL).
 */

const BUCKETS = Array.from({ length: DURATION_BUCKETS }, (_, i) => `d${i}`);
const COLUMNS = ['environment', 'webhook_id', 'hour', 'succeeded', 'failed', ...BUCKETS];

/** `on conflict … do update`: the row's counts plus the new ones (the same text on both databases). */
const ADD = `on conflict ("webhook_id", "hour") do update set ${['succeeded', 'failed', ...BUCKETS]
  .map((c) => `"${c}" = "iw_webhook_hours"."${c}" + excluded."${c}"`)
  .join(', ')}`;

/** The parameters of one tally, in {@link COLUMNS} order. */
export const tallyParameters = (t: HourTally): unknown[] => [t.environment, t.webhookId, t.hour, t.succeeded, t.failed, ...t.durations];

/** Adds `n` tallies in one statement (parameters: {@link tallyParameters} of each, in order). */
export const addHours = (texts: Texts, n: number) =>
  text(texts, `hours ${n}`, (p) => {
    const values = Array.from({ length: n }, () => `(${list(COLUMNS.length, p)})`).join(', ');
    return `insert into "iw_webhook_hours" (${COLUMNS.map((c) => `"${c}"`).join(', ')}) values ${values} ${ADD}`;
  });

/** Adds tallies, if any, with `run` (inside the caller's transaction). */
export async function countHours(run: Run, texts: Texts, tallies: readonly HourTally[]): Promise<void> {
  if (tallies.length === 0) return;
  await run(addHours(texts, tallies.length), tallies.flatMap(tallyParameters));
}

/** SQLite's one-tally statement, prepared once per handle (`sqlite/record.ts`). */
export const ADD_HOUR_SQLITE = `insert into "iw_webhook_hours" (${COLUMNS.map((c) => `"${c}"`).join(', ')}) values (${list(
  COLUMNS.length,
  () => '?',
)}) ${ADD}`;

/**
 * One environment's counters in `[since, until)`, of one webhook or of all, a row per webhook and
 * hour; without `durations`, only the counts are read (each column read costs on every row).
 * With `stepMs` (a chart), summed per point. The list reads with `readCounts` instead.
 */
export async function readHours(
  db: Kysely<EngineTables>,
  environment: string,
  {
    webhookId,
    since,
    until,
    durations = true,
    stepMs,
  }: { webhookId?: string; since: number; until: number; durations?: boolean; stepMs?: number },
): Promise<HourRecord[]> {
  const { run, texts } = precompiled(db);
  if (stepMs !== undefined) return readSteps(run, texts, environment, { webhookId, since, until, stepMs });
  const columns = durations ? READ_COLUMNS_ALL : READ_COLUMNS;
  const key = `read hours ${durations} ${webhookId !== undefined}`;
  const statement = text(
    texts,
    key,
    (p) =>
      `select ${columns} from "iw_webhook_hours" where "environment" = ${p()} and "hour" >= ${p()} and "hour" < ${p()}` +
      (webhookId !== undefined ? ` and "webhook_id" = ${p()}` : ''),
  );
  const rows = await run<Record<string, string | number>>(
    statement,
    webhookId !== undefined ? [environment, since, until, webhookId] : [environment, since, until],
  );
  const none: number[] = [];
  return rows.map((r) => ({
    webhookId: r.webhook_id as string,
    hour: Number(r.hour),
    succeeded: Number(r.succeeded),
    failed: Number(r.failed),
    durations: durations ? BUCKETS.map((b) => Number(r[b])) : none,
  }));
}

const READ_COLUMNS = '"webhook_id", "hour", "succeeded", "failed"';
const READ_COLUMNS_ALL = `${READ_COLUMNS}, ${BUCKETS.map((b) => `"${b}"`).join(', ')}`;

/**
 * The list's read (`Store.readCounts`): the settled hours (before `settled`) from their packs,
 * the others from the counters, made into packs as they are read over a short range
 * (`countedPacks`) and read a row per webhook over a longer one (`readSeries`).
 */
export async function readCounts(
  db: Kysely<EngineTables>,
  environment: string,
  { since, until, settled }: { since: number; until: number; settled: number },
): Promise<HourCounts[]> {
  const { run, texts } = precompiled(db);
  if (settled > since) return readPacked(run, texts, environment, since, until, Math.min(settled, until));
  if (until - since <= SHORT_RANGE_MS) return unpack(await countedPacks(run, texts, environment, since, until));
  return readSeries(run, texts, environment, since, until);
}

/**
 * The list's read over more than a few hours, without packs (a settled hour not packed yet):
 * every webhook's counts in one row per webhook, its hours as text (`hour:succeeded:failed,…`,
 * each hour counted in hours from the range's first), so the database hands over a row per
 * webhook instead of one per webhook and hour (the drivers' cost is per row) and a short text;
 * each row a table of one webhook. The integer cast keeps SQLite's division whole.
 */
async function readSeries(run: Run, texts: Texts, environment: string, since: number, until: number): Promise<HourCounts[]> {
  const statement = text(texts, 'read series', (p) => {
    const base = texts.dialect === 'postgres' ? `${p()}::bigint` : `cast(${p()} as integer)`;
    const item = `(("hour" - ${base}) / ${HOUR_MS}) || ':' || "succeeded" || ':' || "failed"`;
    return (
      `select "webhook_id", ${commaJoined(texts, item)} as "hours" from "iw_webhook_hours" ` +
      `where "environment" = ${p()} and "hour" >= ${p()} and "hour" < ${p()} group by "webhook_id"`
    );
  });
  const base = since - (since % HOUR_MS);
  const rows = await run<{ webhook_id: string; hours: string }>(statement, [base, environment, since, until]);
  return rows.map((r) => {
    const n = numbersOf(r.hours); // hour:succeeded:failed, …
    const table: HourCounts = { webhookIds: [r.webhook_id], hours: [], counts: [] };
    for (let i = 0; i + 2 < n.length; i += 3) {
      table.hours.push(base + n[i]! * HOUR_MS);
      table.counts.push([n[i + 1]!, n[i + 2]!]);
    }
    return table;
  });
}

/**
 * The list's read with settled hours (before `settled`) from their packs (`packs.ts`): the
 * packs of the range's settled hours and, at once (one round trip on PostgreSQL, two
 * connections), the counters from `settled` to `until` made into packs as they are read; all
 * of them unpacked together, so packs listing the same webhooks make one table. Then, only when
 * a settled hour had no pack (not packed yet, or no attempts), the counters from the first such
 * hour to `settled`, leaving out the hours a pack gave.
 */
async function readPacked(
  run: Run,
  texts: Texts,
  environment: string,
  since: number,
  until: number,
  settled: number,
): Promise<HourCounts[]> {
  const none: Packs = { hours: [], lists: [], counts: [] };
  const [packed, live] = await Promise.all([
    readPacks(run, texts, environment, since, settled),
    settled < until ? countedPacks(run, texts, environment, settled, until) : none,
  ]);
  const tables = unpack({
    hours: [...packed.hours, ...live.hours],
    lists: [...packed.lists, ...live.lists],
    counts: [...packed.counts, ...live.counts],
  });
  const got = new Set(packed.hours);
  let from = hourFrom(since);
  while (from < settled && got.has(from)) from += HOUR_MS;
  if (from < settled)
    for (const t of await readSeries(run, texts, environment, from, settled)) {
      const keep = t.hours.map((h) => !got.has(h));
      const hours = t.hours.filter((_, k) => keep[k]);
      if (hours.length > 0) tables.push({ webhookIds: t.webhookIds, hours, counts: t.counts.filter((_, k) => keep[k]) });
    }
  return tables;
}

/** Up to this range, the list's read makes packs of the counters as it reads them (`countedPacks`). */
const SHORT_RANGE_MS = 4 * HOUR_MS;

/**
 * A chart's read: the counters summed by the database per webhook and period of `stepMs` from
 * `since` (a day of the 30-day chart is 24 rows), so a webhook's month comes back as 30 rows
 * instead of 720. Each record's `hour` is its period's start. The integer casts keep SQLite's
 * division whole (it binds a JavaScript number as a real).
 */
async function readSteps(
  run: Run,
  texts: Texts,
  environment: string,
  { webhookId, since, until, stepMs }: { webhookId?: string | undefined; since: number; until: number; stepMs: number },
): Promise<HourRecord[]> {
  const one = webhookId !== undefined;
  const statement = text(texts, `read steps ${one}`, (p) => {
    const int = (mark: string) => (texts.dialect === 'postgres' ? `${mark}::bigint` : `cast(${mark} as integer)`);
    const period = `("hour" - ${int(p())}) / ${int(p())}`;
    const sums = ['succeeded', 'failed', ...BUCKETS].map((c) => `sum("${c}") as "${c}"`).join(', ');
    return (
      `select "webhook_id", ${period} as "period", ${sums} from "iw_webhook_hours" ` +
      `where "environment" = ${p()} and "hour" >= ${p()} and "hour" < ${p()}${one ? ` and "webhook_id" = ${p()}` : ''} ` +
      'group by "webhook_id", "period"'
    );
  });
  const parameters = [since, stepMs, environment, since, until, ...(one ? [webhookId] : [])];
  const rows = await run<Record<string, string | number>>(statement, parameters);
  return rows.map((r) => ({
    webhookId: r.webhook_id as string,
    hour: since + Number(r.period) * stepMs,
    succeeded: Number(r.succeeded),
    failed: Number(r.failed),
    durations: BUCKETS.map((b) => Number(r[b])),
  }));
}
