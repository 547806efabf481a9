import { CompiledQuery, type Kysely } from 'kysely';
import { HOUR_MS, type HourCounts } from '../../src/stats.js';
import type { EngineTables } from './schema.js';
import { commaJoined, precompiled, type Run, type Texts, text } from './texts.js';

/**
 * The settled hours' packs (`iw_hour_packs`; docs/decisions/040-list-stats.md): one
 * row per environment and settled hour holding every webhook's counts of that hour as one text,
 * `webhook_id,webhook_id,…;succeeded:failed,succeeded:failed,…`: the webhooks in id order, then
 * their counts in the same order (webhook ids are the engine's, `webhook_` and hex digits: no
 * `,`, `:` or `;`). An environment's packs mostly list the same webhooks, so the reader keys
 * the packs by their list, compared as one text, and splits each different list once. Written
 * by the packing chore (`src/hour-packs.ts`) from the counters in one statement per hour, never
 * on the recording path; read by the list instead of the hour's counter rows
 * (`readCounts` in `hours.ts`). The list's live hours are read in the same form,
 * made from their counters as they are read (`countedPacks`).
 */

/**
 * Packs every environment's counters of the hours in `[since, until)` in one statement; a pack
 * already there stays (`on conflict do nothing`: two processes packing one hour leave one row,
 * the second waiting for the first's on PostgreSQL). Returns the packs written.
 */
export async function packHours(db: Kysely<EngineTables>, { since, until }: { since: number; until: number }): Promise<number> {
  const { texts } = precompiled(db);
  const statement = text(
    texts,
    'pack hours',
    (p) =>
      `insert into "iw_hour_packs" ("environment", "hour", "counts") ` +
      `select "environment", "hour", ${packText(texts)} from "iw_webhook_hours" where "hour" >= ${p()} and "hour" < ${p()} ` +
      `group by "environment", "hour" on conflict ("environment", "hour") do nothing`,
  );
  const result = await db.executeQuery(CompiledQuery.raw(statement, [since, until]));
  return Number(result.numAffectedRows ?? 0);
}

/** The start of the latest packed hour (the index on the hour), or null. */
export async function lastPackedHour(db: Kysely<EngineTables>): Promise<number | null> {
  const row = await db.selectFrom('iw_hour_packs').select('hour').orderBy('hour', 'desc').limit(1).executeTakeFirst();
  return row ? Number(row.hour) : null;
}

/**
 * A pack's two lists, made from the counter rows of one group (an hour): the webhook ids and
 * their counts, both in webhook order, so they line up and an environment's packs list webhooks
 * alike. Stored as one text (`packText`), read as two.
 */
function packParts(texts: Texts): { list: string; counts: string } {
  const inOrder = (item: string) => commaJoined(texts, item, '"webhook_id"');
  return { list: inOrder('"webhook_id"'), counts: inOrder(`"succeeded" || ':' || "failed"`) };
}

function packText(texts: Texts): string {
  const { list, counts } = packParts(texts);
  return `${list} || ';' || ${counts}`;
}

/** Packs as read: each hour's start, its webhook list (null: the same as the pack's before) and its counts. */
export interface Packs {
  hours: number[];
  lists: Array<string | null>;
  counts: string[];
}

/**
 * The environment's packs of hours in `[since, settled)`, in hour order, each split at its `;`
 * by the database, which hands over a webhook list only where it differs from the pack's
 * before: an environment's packs mostly list the same webhooks, so the driver reads that text
 * once, not once per hour.
 */
export async function readPacks(run: Run, texts: Texts, environment: string, since: number, settled: number): Promise<Packs> {
  const statement = text(texts, 'read packs', (p) => {
    // PostgreSQL's substr and strpos count characters, each call from the text's start, which
    // on a pack's long text costs far more than split_part (bench/journal/2026-12-02-dashboard.md).
    const [list, counts] =
      texts.dialect === 'postgres'
        ? [`split_part("counts", ';', 1)`, `split_part("counts", ';', 2)`]
        : [`substr("counts", 1, instr("counts", ';') - 1)`, `substr("counts", instr("counts", ';') + 1)`];
    return (
      `select "hour", case when "list" = lag("list") over (order by "hour") then null else "list" end as "list", "counts" from ` +
      `(select "hour", ${list} as "list", ${counts} as "counts" from "iw_hour_packs" ` +
      `where "environment" = ${p()} and "hour" >= ${p()} and "hour" < ${p()}) as "p" order by "hour"`
    );
  });
  return packsOf(await run<PackRow>(statement, [environment, since, settled]));
}

/**
 * The environment's counters of the hours in `[since, until)` made into packs as they are read
 * (the live hours, not packed yet): a row per hour instead of one per webhook, which is what
 * the drivers' cost is counted in, and read along the environment's index.
 */
export async function countedPacks(run: Run, texts: Texts, environment: string, since: number, until: number): Promise<Packs> {
  const statement = text(texts, 'counted packs', (p) => {
    const { list, counts } = packParts(texts);
    return (
      `select "hour", ${list} as "list", ${counts} as "counts" from "iw_webhook_hours" ` +
      `where "environment" = ${p()} and "hour" >= ${p()} and "hour" < ${p()} group by "hour"`
    );
  });
  return packsOf(await run<PackRow>(statement, [environment, since, until]));
}

interface PackRow {
  hour: number | string;
  list: string | null;
  counts: string;
}

const packsOf = (rows: PackRow[]): Packs => ({
  hours: rows.map((r) => Number(r.hour)),
  lists: rows.map((r) => r.list),
  counts: rows.map((r) => r.counts),
});

/**
 * The packs as tables (`HourCounts`): the packs that list the same webhooks (the same list
 * text) make one table and share one split of the list, so the list's fill looks each webhook
 * up once per table, not once per hour (`addTables` in src/activity.ts).
 */
export function unpack({ hours, lists, counts }: Packs): HourCounts[] {
  const byList = new Map<string, HourCounts>();
  let table: HourCounts | undefined;
  for (let k = 0; k < hours.length; k++) {
    const list = lists[k];
    if (list != null) {
      table = byList.get(list);
      if (!table) {
        table = { webhookIds: list.split(','), hours: [], counts: [] };
        byList.set(list, table);
      }
    }
    table!.hours.push(hours[k]!);
    table!.counts.push(numbersOf(counts[k]!));
  }
  return [...byList.values()];
}

/**
 * The whole numbers of an aggregated text (`1:2,3:4`: each ended by a `:` or `,`), in order: the
 * packs' counts and `readSeries`' hours (hours.ts). Read by the engine's JSON parser, which is
 * compiled already when a process's first list call comes, where a loop of ours would still be
 * interpreted (docs/decisions/040-list-stats.md).
 */
export const numbersOf = (text: string): number[] => JSON.parse(`[${text.replaceAll(':', ',')}]`) as number[];

/** The first hour that starts at or after `at`. */
export const hourFrom = (at: number) => Math.ceil(at / HOUR_MS) * HOUR_MS;
