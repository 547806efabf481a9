// identity-webhooks/postgres: needs @types/node only; neither @types/pg nor pg's types (the pool
// types are structural), pg itself only at run time.
import { migratePostgres, type PostgresStoreOptions, postgresStore } from 'identity-webhooks/postgres';

const options: PostgresStoreOptions = { connectionString: 'postgres://localhost/app', autoMigrate: false };
export const store = postgresStore(options);
export const applied: Promise<number[]> = migratePostgres({ connectionString: 'postgres://localhost/app' });
export const db = store.kysely;
