import { CompiledQuery, type Kysely } from 'kysely';
import { HOUR_MS, type HourRecord } from '../../src/stats.js';
import type { EngineTables } from './schema.js';
import { precompiled, type Run, type Texts, text } from './texts.js';

/**
 * The settled hours' packs (`iw_hour_packs`, migration 24; docs/decisions/035-hour-packs.md): one
 * row per environment and settled hour holding every webhook's counts of that hour as one text,
 * `webhook_id:succeeded:failed,…` (webhook ids are the engine's, `webhook_` and hex digits: no
 * `:` or `,`). Written by the packing chore (`src/hour-packs.ts`) from the counters in one
 * statement per hour, never on the recording path; read by the list's first call instead of the
 * hour's counter rows (`readHours` in `hours.ts`, with `settled`).
 */

/**
 * Packs every environment's counters of the hours in `[since, until)` in one statement; a pack
 * already there stays (`on conflict do nothing`: two processes packing one hour leave one row,
 * the second waiting for the first's on PostgreSQL). Returns the packs written.
 */
export async function packHours(db: Kysely<EngineTables>, { since, until }: { since: number; until: number }): Promise<number> {
  const { texts } = precompiled(db);
  const statement = text(texts, 'pack hours', (p) => {
    // In webhook order: the packs of one environment then list their webhooks alike (`unpack`).
    const item = `"webhook_id" || ':' || "succeeded" || ':' || "failed"`;
    const joined = `${texts.dialect === 'postgres' ? 'string_agg' : 'group_concat'}(${item}, ',' order by "webhook_id")`;
    return (
      `insert into "iw_hour_packs" ("environment", "hour", "counts") ` +
      `select "environment", "hour", ${joined} from "iw_webhook_hours" where "hour" >= ${p()} and "hour" < ${p()} ` +
      `group by "environment", "hour" on conflict ("environment", "hour") do nothing`
    );
  });
  const result = await db.executeQuery(CompiledQuery.raw(statement, [since, until]));
  return Number(result.numAffectedRows ?? 0);
}

/** The start of the latest packed hour (the index on the hour), or null. */
export async function lastPackedHour(db: Kysely<EngineTables>): Promise<number | null> {
  const row = await db.selectFrom('iw_hour_packs').select('hour').orderBy('hour', 'desc').limit(1).executeTakeFirst();
  return row ? Number(row.hour) : null;
}

/**
 * The environment's packs of hours in `[since, settled)`, unpacked into `records` (the counts
 * only, as the list's read gives them). Returns the hours that had a pack.
 */
export async function readPacks(
  run: Run,
  texts: Texts,
  environment: string,
  since: number,
  settled: number,
  records: HourRecord[],
): Promise<Set<number>> {
  const statement = text(
    texts,
    'read packs',
    (p) => `select "hour", "counts" from "iw_hour_packs" where "environment" = ${p()} and "hour" >= ${p()} and "hour" < ${p()}`,
  );
  const rows = await run<{ hour: number | string; counts: string }>(statement, [environment, since, settled]);
  const hours = rows.map((r) => Number(r.hour));
  unpack(
    rows.map((r) => r.counts),
    hours,
    records,
  );
  return new Set(hours);
}

/**
 * The packs' texts into records, one webhook at a time: a webhook's entry is looked for at the
 * current place of every pack (the packs list their webhooks in the same order, `packHours`), so
 * its records come together and share one id string, which is what the list's fill costs least
 * with (`addRows` in src/activity.ts: one look-up per webhook, not per record). Packs that list
 * webhooks otherwise still give every record once, only not together.
 */
function unpack(texts: string[], hours: number[], records: HourRecord[]): void {
  const none: number[] = [];
  const at = texts.map(() => 0);
  let first = 0;
  while (first < texts.length) {
    const t = texts[first]!;
    const start = at[first]!;
    if (start >= t.length) {
      first++;
      continue;
    }
    const webhookId = t.slice(start, t.indexOf(':', start));
    const length = webhookId.length;
    for (let k = first; k < texts.length; k++) {
      const s = texts[k]!;
      let j = at[k]!;
      if (k !== first && !(s.charCodeAt(j + length) === COLON && s.startsWith(webhookId, j))) continue;
      // Digit by digit: splitting makes strings that cost more than the read.
      j += length + 1;
      let succeeded = 0;
      for (let c = s.charCodeAt(j); c !== COLON; c = s.charCodeAt(++j)) succeeded = succeeded * 10 + (c - ZERO);
      let failed = 0;
      for (j++; j < s.length; j++) {
        const c = s.charCodeAt(j);
        if (c === COMMA) break;
        failed = failed * 10 + (c - ZERO);
      }
      records.push({ webhookId, hour: hours[k]!, succeeded, failed, durations: none });
      at[k] = j + 1;
    }
  }
}

/** The first hour that starts at or after `at`. */
export const hourFrom = (at: number) => Math.ceil(at / HOUR_MS) * HOUR_MS;

const ZERO = 48;
const COLON = 58;
const COMMA = 44;
