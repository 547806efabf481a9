/**
 * The seam where a better-auth write becomes an event: its database adapter. Every create,
 * update and delete of a watched model runs in one transaction with the emit of its event, so
 * the row and the event commit or roll back together, whether better-auth opened a transaction
 * for the write (sign-up, admin create, social sign-up, organization delete) or not (profile
 * update, user delete, sign-in's session): then the watcher opens one around the write itself.
 */

type Row = Record<string, unknown>;

/** The part of better-auth's `DBAdapter` the watcher uses and replaces. */
export interface WatchedAdapter {
  create(args: { model: string; data: Record<string, unknown>; [option: string]: unknown }): Promise<Row | null>;
  update(args: { model: string; where: unknown[]; update: Record<string, unknown> }): Promise<Row | null>;
  delete(args: { model: string; where: unknown[] }): Promise<void>;
  findOne(args: { model: string; where: unknown[] }): Promise<Row | null>;
  findMany(args: { model: string; where?: unknown[]; limit?: number }): Promise<Row[]>;
  transaction<R>(fn: (trx: WatchedAdapter) => Promise<R>): Promise<R>;
  // The guarded and bulk writes (better-auth 1.7: an invitation's answer is an incrementOne, an
  // organization's members go by deleteMany). Optional: an older adapter may lack them.
  updateMany?(args: { model: string; where: unknown[]; update: Record<string, unknown> }): Promise<number>;
  deleteMany?(args: { model: string; where: unknown[] }): Promise<number>;
  incrementOne?(args: {
    model: string;
    where: unknown[];
    increment: Record<string, number>;
    set?: Record<string, unknown>;
  }): Promise<Row | null>;
  consumeOne?(args: { model: string; where: unknown[] }): Promise<Row | null>;
}

/** Most rows a bulk write of a watched model reads to tell (its events name each row). */
const BULK_MAX = 100_000;

export type WriteKind = 'create' | 'update' | 'delete';

/** A committed-to-be write of a watched model, handed to the emitter inside its transaction. */
export interface Write {
  kind: WriteKind;
  model: string;
  /** The row as written (created, updated), or as it was (deleted). */
  row: Record<string, unknown>;
  /** The adapter of the write's transaction, for reads that belong with it (memberships). */
  adapter: WatchedAdapter;
}

export interface WatchOptions {
  /** Which models' writes of which kind become events. */
  watches(model: string, kind: WriteKind): boolean;
  /** Emits the write's event in the transaction it runs in. */
  onWrite(write: Write): Promise<void>;
}

/**
 * Replaces the write methods of `adapter` (in place: better-auth keys per-adapter state on the
 * object) with ones that emit, and its `transaction` with one whose adapter does the same.
 * `inTransaction`: `adapter` is already a transaction's (its writes need no transaction of their own).
 */
export function watchAdapter<A extends WatchedAdapter>(adapter: A, options: WatchOptions, inTransaction = false): A {
  const original = {
    create: adapter.create.bind(adapter),
    update: adapter.update.bind(adapter),
    delete: adapter.delete.bind(adapter),
    updateMany: adapter.updateMany?.bind(adapter),
    deleteMany: adapter.deleteMany?.bind(adapter),
    incrementOne: adapter.incrementOne?.bind(adapter),
    consumeOne: adapter.consumeOne?.bind(adapter),
    transaction: adapter.transaction.bind(adapter),
  };
  type Raw = Pick<WatchedAdapter, 'create' | 'update' | 'delete' | 'updateMany' | 'deleteMany' | 'incrementOne' | 'consumeOne'>;
  // `on`: the adapter reads go through; `raw`: the unwatched writes (a new transaction's adapter is both).
  // An adapter with transactions off (an ORM adapter's `transaction: false`) hands its `transaction`
  // callback itself: its writes are this watcher's, and the unwatched ones are `original`.
  const atomically = <R>(fn: (on: WatchedAdapter, raw: Raw) => Promise<R>): Promise<R> =>
    inTransaction ? fn(adapter, original) : original.transaction((trx) => (trx === adapter ? fn(adapter, original) : fn(trx, trx)));

  adapter.create = (args) => {
    if (!options.watches(args.model, 'create')) return original.create(args);
    return atomically(async (on, raw) => {
      const row = await raw.create(args);
      if (row) await options.onWrite({ kind: 'create', model: args.model, row, adapter: on });
      return row;
    });
  };
  adapter.update = (args) => {
    if (!options.watches(args.model, 'update')) return original.update(args);
    return atomically(async (on, raw) => {
      const row = await raw.update(args);
      if (row) await options.onWrite({ kind: 'update', model: args.model, row, adapter: on });
      return row;
    });
  };
  adapter.delete = (args) => {
    if (!options.watches(args.model, 'delete')) return original.delete(args);
    return atomically(async (on, raw) => {
      // The event describes the row as it was: read it in the same transaction, then delete.
      const row = await on.findOne({ model: args.model, where: args.where });
      await raw.delete(args);
      if (row) await options.onWrite({ kind: 'delete', model: args.model, row, adapter: on });
    });
  };
  const { updateMany, deleteMany, incrementOne, consumeOne } = original;
  if (incrementOne)
    adapter.incrementOne = (args) => {
      if (!options.watches(args.model, 'update')) return incrementOne(args);
      return atomically(async (on, raw) => {
        const row = await raw.incrementOne!(args);
        if (row) await options.onWrite({ kind: 'update', model: args.model, row, adapter: on });
        return row;
      });
    };
  if (consumeOne)
    adapter.consumeOne = (args) => {
      if (!options.watches(args.model, 'delete')) return consumeOne(args);
      return atomically(async (on, raw) => {
        const row = await raw.consumeOne!(args);
        if (row) await options.onWrite({ kind: 'delete', model: args.model, row, adapter: on });
        return row;
      });
    };
  if (updateMany)
    adapter.updateMany = (args) => {
      if (!options.watches(args.model, 'update')) return updateMany(args);
      return atomically(async (on, raw) => {
        // Each row it changes is told as changed: the ids first, then the rows as written.
        const ids = (await on.findMany({ model: args.model, where: args.where, limit: BULK_MAX })).map((r) => r.id);
        const n = await raw.updateMany!(args);
        if (ids.length === 0) return n;
        // Read back a thousand at a time: one `in` list of 100,000 would pass PostgreSQL's 65,535 parameters.
        for (let i = 0; i < ids.length; i += 1000) {
          const chunk = ids.slice(i, i + 1000);
          const rows = await on.findMany({
            model: args.model,
            where: [{ field: 'id', operator: 'in', value: chunk }],
            limit: chunk.length,
          });
          for (const row of rows) await options.onWrite({ kind: 'update', model: args.model, row, adapter: on });
        }
        return n;
      });
    };
  if (deleteMany)
    adapter.deleteMany = (args) => {
      if (!options.watches(args.model, 'delete')) return deleteMany(args);
      return atomically(async (on, raw) => {
        const rows = await on.findMany({ model: args.model, where: args.where, limit: BULK_MAX });
        const n = await raw.deleteMany!(args);
        for (const row of rows) await options.onWrite({ kind: 'delete', model: args.model, row, adapter: on });
        return n;
      });
    };
  adapter.transaction = (fn) => original.transaction((trx) => fn(trx === adapter ? adapter : watchAdapter(trx, options, true)));
  return adapter;
}
