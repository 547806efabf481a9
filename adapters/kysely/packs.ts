import { CompiledQuery, type Kysely } from 'kysely';
import { HOUR_MS, type HourRecord } from '../../src/stats.js';
import type { EngineTables } from './schema.js';
import { commaJoined, precompiled, type Run, type Texts, text } from './texts.js';

/**
 * The settled hours' packs (`iw_hour_packs`, migration 24; docs/decisions/035-hour-packs.md): one
 * row per environment and settled hour holding every webhook's counts of that hour as one text,
 * `webhook_id,webhook_id,…;succeeded:failed,succeeded:failed,…`: the webhooks in id order, then
 * their counts in the same order (webhook ids are the engine's, `webhook_` and hex digits: no
 * `,`, `:` or `;`). An environment's packs mostly list the same webhooks, so the reader keys
 * the packs by their list, compared as one text, and splits each different list once. Written
 * by the packing chore (`src/hour-packs.ts`) from the counters in one statement per hour, never
 * on the recording path; read by the list's first call instead of the hour's counter rows
 * (`readHours` in `hours.ts`, with `settled`). The list's live hours are read in the same form,
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
 * A pack's text, made from the counter rows of one group (an hour): both lists in webhook
 * order, so they line up and an environment's packs list webhooks alike.
 */
function packText(texts: Texts): string {
  const inOrder = (item: string) => commaJoined(texts, item, '"webhook_id"');
  return `${inOrder('"webhook_id"')} || ';' || ${inOrder(`"succeeded" || ':' || "failed"`)}`;
}

/** Packs as read: each hour's start and its text. */
export interface Packs {
  hours: number[];
  texts: string[];
}

/** The environment's packs of hours in `[since, settled)`, as stored. */
export async function readPacks(run: Run, texts: Texts, environment: string, since: number, settled: number): Promise<Packs> {
  const statement = text(
    texts,
    'read packs',
    (p) => `select "hour", "counts" from "iw_hour_packs" where "environment" = ${p()} and "hour" >= ${p()} and "hour" < ${p()}`,
  );
  return packsOf(await run<{ hour: number | string; counts: string }>(statement, [environment, since, settled]));
}

/**
 * The environment's counters of the hours in `[since, until)` made into packs as they are read
 * (the live hours, not packed yet): a row per hour instead of one per webhook, which is what
 * the drivers' cost is counted in, and read along the environment's index.
 */
export async function countedPacks(run: Run, texts: Texts, environment: string, since: number, until: number): Promise<Packs> {
  const statement = text(
    texts,
    'counted packs',
    (p) =>
      `select "hour", ${packText(texts)} as "counts" from "iw_webhook_hours" ` +
      `where "environment" = ${p()} and "hour" >= ${p()} and "hour" < ${p()} group by "hour"`,
  );
  return packsOf(await run<{ hour: number | string; counts: string }>(statement, [environment, since, until]));
}

const packsOf = (rows: Array<{ hour: number | string; counts: string }>): Packs => ({
  hours: rows.map((r) => Number(r.hour)),
  texts: rows.map((r) => r.counts),
});

/**
 * The packs' texts into records, a webhook at a time: packs that list the same webhooks (the
 * same list text) share one split of it, and a webhook's records come together and share one
 * id string, which is what the list's fill costs least with (`addRows` in src/activity.ts: one
 * look-up per webhook, not per record).
 */
export function unpack({ texts, hours }: Packs, records: HourRecord[]): void {
  const none: number[] = [];
  // Packs by their webhook list: the list split once, each pack's counts parsed.
  const byList = new Map<string, { ids: string[]; hours: number[]; counts: number[][] }>();
  for (let k = 0; k < texts.length; k++) {
    const t = texts[k]!;
    const semi = t.indexOf(';');
    const list = t.slice(0, semi);
    let group = byList.get(list);
    if (!group) {
      group = { ids: list.split(','), hours: [], counts: [] };
      byList.set(list, group);
    }
    const counts = numbersOf(t, semi + 1);
    group.hours.push(hours[k]!);
    group.counts.push(counts);
  }
  // A webhook at a time across the lists (each in id order): the smallest id at the lists'
  // heads, then its records from every list that has it there. Lists in another order would
  // still give every record once, only not together.
  const groups = [...byList.values()];
  const heads = groups.map(() => 0);
  for (;;) {
    let webhookId: string | undefined;
    for (let g = 0; g < groups.length; g++) {
      const id = groups[g]!.ids[heads[g]!];
      if (id !== undefined && (webhookId === undefined || id < webhookId)) webhookId = id;
    }
    if (webhookId === undefined) return;
    for (let g = 0; g < groups.length; g++) {
      const { ids, hours: at, counts } = groups[g]!;
      const i = heads[g]!;
      if (ids[i] !== webhookId) continue;
      for (let k = 0; k < at.length; k++)
        records.push({ webhookId, hour: at[k]!, succeeded: counts[k]![2 * i]!, failed: counts[k]![2 * i + 1]!, durations: none });
      heads[g] = i + 1;
    }
  }
}

/**
 * The whole numbers of `text` from `from` on, in order, each ended by a `:` or `,` (or the
 * text's end), read digit by digit: splitting makes strings that cost more than the read. The
 * aggregated texts of the list's reads (`readSeries` in hours.ts, and the packs).
 */
export function numbersOf(text: string, from: number): number[] {
  const numbers: number[] = [];
  let value = 0;
  for (let j = from; j <= text.length; j++) {
    const c = j < text.length ? text.charCodeAt(j) : COMMA;
    if (c === COLON || c === COMMA) {
      numbers.push(value);
      value = 0;
    } else value = value * 10 + (c - ZERO);
  }
  return numbers;
}

/** The first hour that starts at or after `at`. */
export const hourFrom = (at: number) => Math.ceil(at / HOUR_MS) * HOUR_MS;

const ZERO = 48;
const COLON = 58;
const COMMA = 44;
