import { CompiledQuery, type Kysely, PostgresAdapter, type Transaction } from 'kysely';
import type { EngineTables } from './schema.js';

/*
 * Hot statements as SQL text built once per shape (placeholder style and list lengths) and run
 * with their parameters: Kysely builds and compiles a statement on every call, which costs
 * more than the statement itself costs SQLite. Each text is what Kysely compiled for the same
 * statement, so both databases plan them as before. Used by the claim (`due.ts` and each
 * dialect's `claim.ts`), the claim's reads and the general emit (`store.ts`), and the outcome group
 * (`outcomes.ts`).
 */

/** The next placeholder: `?` on SQLite, `$1`, `$2`, … on PostgreSQL. */
export type Mark = () => string;
export type Run = <R>(text: string, parameters: readonly unknown[]) => Promise<R[]>;

export interface Texts {
  dialect: 'sqlite' | 'postgres';
  mark(): Mark;
  cache: Map<string, string>;
}

export const POSTGRES: Texts = {
  dialect: 'postgres',
  mark: () => {
    let n = 0;
    return () => `$${++n}`;
  },
  cache: new Map(),
};
export const SQLITE: Texts = { dialect: 'sqlite', mark: () => () => '?', cache: new Map() };

/**
 * Runs a text with its parameters on `db` (a Kysely or a transaction); the texts (placeholder
 * style) of its dialect, or of `dialect` when given (a host's transaction may come from another
 * copy of Kysely, whose adapter is not ours to recognise).
 */
export function precompiled(
  db: Kysely<EngineTables> | Transaction<EngineTables>,
  dialect?: 'sqlite' | 'postgres',
): { run: Run; texts: Texts } {
  const postgres = dialect === undefined ? db.getExecutor().adapter instanceof PostgresAdapter : dialect === 'postgres';
  const texts = postgres ? POSTGRES : SQLITE;
  const run: Run = async (text, parameters) => (await db.executeQuery(CompiledQuery.raw(text, parameters as unknown[]))).rows as never;
  return { run, texts };
}

/** The text for `key` in a dialect, built by `build` on first use (shapes are few). */
export function text(texts: Texts, key: string, build: (p: Mark) => string): string {
  let t = texts.cache.get(key);
  if (t === undefined) {
    t = build(texts.mark());
    // Unusually large lists vary in length without bound: build those each time.
    if (texts.cache.size < 1024) texts.cache.set(key, t);
  }
  return t;
}

/** `n` placeholders, comma-separated. */
export const list = (n: number, p: Mark) => Array.from({ length: n }, p).join(', ');

/**
 * A group's values of `item` joined by `,` into one text, in `orderBy`'s order when given:
 * `string_agg` on PostgreSQL, `group_concat` on SQLite (its `order by` needs SQLite 3.44, which
 * better-sqlite3 12 bundles). The drivers' cost is per row: what the list reads comes so.
 */
export const commaJoined = (texts: Texts, item: string, orderBy?: string) =>
  `${texts.dialect === 'postgres' ? 'string_agg' : 'group_concat'}(${item}, ','${orderBy === undefined ? '' : ` order by ${orderBy}`})`;
