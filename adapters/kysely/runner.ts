import {
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';

/** Runs one statement (the dialect's placeholders) and answers its rows. */
export type RunStatement = (sql: string, parameters: readonly unknown[]) => Promise<readonly unknown[]>;

/**
 * A Kysely whose every statement goes to `run`: an ORM's open transaction (Prisma's
 * `tx.$queryRawUnsafe`, node-postgres' client of a Drizzle transaction), so that an `emit` given
 * it as its `transaction` writes on that transaction's connection and commits or rolls back
 * with it. It cannot open transactions of its own, nor stream.
 */
export function statementKysely(dialect: 'sqlite' | 'postgres', run: RunStatement): Kysely<any> {
  const connection: DatabaseConnection = {
    async executeQuery<R>(compiled: { sql: string; parameters: readonly unknown[] }): Promise<QueryResult<R>> {
      return { rows: (await run(compiled.sql, compiled.parameters)) as R[] };
    },
    streamQuery() {
      throw new Error('an ORM transaction cannot stream');
    },
  };
  const refuse = async () => {
    // Not a TypeError: the plugin counts those as refused data, and this is the engine's own mistake.
    throw new Error('the engine writes inside the ORM transaction it was given: it opens none of its own');
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: refuse,
    commitTransaction: refuse,
    rollbackTransaction: refuse,
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  const postgres = dialect === 'postgres';
  return new Kysely<any>({
    dialect: {
      createDriver: () => driver,
      createAdapter: () => (postgres ? new PostgresAdapter() : new SqliteAdapter()),
      createQueryCompiler: () => (postgres ? new PostgresQueryCompiler() : new SqliteQueryCompiler()),
      createIntrospector: (db) => (postgres ? new PostgresIntrospector(db) : new SqliteIntrospector(db)),
    },
  });
}
