// identity-webhooks/sqlite: needs @types/node only; no @types/better-sqlite3 (the database type is
// structural), better-sqlite3 itself only at run time.
import { type SqliteDatabase, sqliteStore } from 'identity-webhooks/sqlite';

export const open = (database?: SqliteDatabase) => (database ? sqliteStore({ database }) : sqliteStore({ filename: 'webhooks.db' }));
