import { getTableConfig as pgTableConfig } from 'drizzle-orm/pg-core';
import { getTableConfig as sqliteTableConfig } from 'drizzle-orm/sqlite-core';

/** CREATE TABLE statements for a Drizzle schema (what drizzle-kit would push), for better-auth's generated tables. */
export function drizzleDdl(schema: Record<string, unknown>, dialect: 'postgres' | 'sqlite'): string {
  const statements: string[] = [];
  for (const table of Object.values(schema)) {
    if (typeof table !== 'object' || table === null || !(Symbol.for('drizzle:IsDrizzleTable') in table)) continue;
    const config = dialect === 'postgres' ? pgTableConfig(table as never) : sqliteTableConfig(table as never);
    const columns = config.columns.map((c) => {
      const type = c.getSQLType();
      return `"${c.name}" ${type}${c.primary ? ' primary key' : ''}${c.notNull && !c.primary ? ' not null' : ''}${c.isUnique ? ' unique' : ''}`;
    });
    statements.push(`create table "${config.name}" (${columns.join(', ')})`);
  }
  return statements.join(';\n');
}
