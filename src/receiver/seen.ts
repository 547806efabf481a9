/**
 * Remembers which deliveries (by `webhook-id`) were processed, so a resent delivery is answered
 * 200 without running its handler again. The receiver calls `add` only after the handler
 * succeeded, so a failed handler is tried again by the sender.
 *
 * Delivery is at-least-once and the sender keeps attempting for days, so keep ids at least that long
 * (a week is comfortable). Implement it over the store your receiver already has:
 *
 * @example
 * ```ts
 * // Redis (node-redis)
 * const seen: SeenStore = {
 *   has: async (id) => (await redis.exists(`webhook:${id}`)) === 1,
 *   add: async (id) => { await redis.set(`webhook:${id}`, '1', { EX: 7 * 86400 }) },
 * };
 * // SQL: CREATE TABLE processed_webhooks (id text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())
 * const seen: SeenStore = {
 *   has: async (id) => (await sql`SELECT 1 FROM processed_webhooks WHERE id = ${id}`).length > 0,
 *   add: async (id) => { await sql`INSERT INTO processed_webhooks (id) VALUES (${id}) ON CONFLICT DO NOTHING` },
 * };
 * ```
 */
export interface SeenStore {
  /** Was a delivery with this `webhook-id` processed successfully? */
  has(webhookId: string): boolean | Promise<boolean>;
  /** Records it as processed. Must be idempotent. */
  add(webhookId: string): void | Promise<void>;
}

/**
 * The default {@link SeenStore}: in this process's memory, the most recent `max` ids (default
 * 10 000; the oldest is forgotten first). Lost on restart and not shared between processes: use
 * a Redis or SQL store when you run more than one receiver process or cannot tolerate a duplicate
 * after a restart.
 *
 * @example
 * ```ts
 * createReceiver({ verifier, on, seen: memorySeen({ max: 50_000 }) });
 * ```
 */
export function memorySeen(options: { max?: number } = {}): SeenStore {
  const max = options.max ?? 10_000;
  if (!Number.isInteger(max) || max < 1) throw new TypeError('memorySeen: max must be a positive integer');
  const ids = new Set<string>(); // a Set iterates in insertion order: the first entry is the oldest
  return {
    has: (id) => ids.has(id),
    add(id) {
      if (ids.has(id)) return;
      ids.add(id);
      if (ids.size > max) ids.delete(ids.values().next().value!);
    },
  };
}
